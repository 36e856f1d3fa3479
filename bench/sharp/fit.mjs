// Reference timings: sharp (libvips, one thread) doing what mediagate's downsampler does, served
// one fit at a time (serve.mjs).
// Usage: node fit.mjs <out> <jpeg|png|webp|gif> <in>
import sharp from "sharp";
import { readFileSync } from "node:fs";
import { serve } from "./serve.mjs";

const [output, format, input] = process.argv.slice(2);
const bytes = readFileSync(input);
await serve(output, () => {
  const p = sharp(bytes).rotate().resize(2000, 2000, { fit: "inside", withoutEnlargement: true });
  // The type the gate produced for the same input: JPEG at 80, PNG (libpng level 6), lossless
  // WebP (what the gate writes), GIF (first frame, as the gate decodes it).
  const typed = { jpeg: () => p.jpeg({ quality: 80 }), png: () => p.png(), webp: () => p.webp({ lossless: true }),
                  gif: () => p.gif() }[format]();
  return typed.toBuffer({ resolveWithObject: true });
});
