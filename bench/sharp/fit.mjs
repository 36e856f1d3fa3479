// Reference timings: sharp (libvips, one thread) doing what mediagate's downsampler does.
// Usage: node fit.mjs <runs> <jpeg|png|webp|gif> <in> <out> ; prints JSON {ms:[...], bytes, width, height, version}.
import sharp from "sharp";
import { readFileSync, writeFileSync } from "node:fs";

sharp.concurrency(1); // one libvips thread: both sides use one core
sharp.cache(false);   // no result caching between runs

const [runs, format, input, output] = process.argv.slice(2);
const bytes = readFileSync(input);
const ms = [];
let out;
for (let i = 0; i < Number(runs); i++) {
  const t0 = process.hrtime.bigint();
  let p = sharp(bytes).rotate().resize(2000, 2000, { fit: "inside", withoutEnlargement: true });
  // The type the gate produced for the same input: JPEG at 80, PNG (libpng level 6), lossless
  // WebP (what the gate writes), GIF (first frame, as the gate decodes it).
  p = { jpeg: () => p.jpeg({ quality: 80 }), png: () => p.png(), webp: () => p.webp({ lossless: true }),
        gif: () => p.gif() }[format]();
  out = await p.toBuffer({ resolveWithObject: true });
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
writeFileSync(output, out.data);
console.log(JSON.stringify({
  ms, bytes: out.data.length, width: out.info.width, height: out.info.height,
  version: sharp.versions,
}));
