// Reference timings for the conversions: sharp (libvips, one thread) turning an SVG, TIFF or
// animated GIF into the image the gate produced, at the same pixel size, served one run at a time
// (serve.mjs).
// Usage: node convert.mjs <out> <png|jpeg> <in> <width> <height>
// SVG is rasterised by librsvg at the density that gives <width> directly (no resampling after);
// TIFF: page 1; GIF: `pages: 1` (the first frame). `end` also answers the density.
import sharp from "sharp";
import { readFileSync } from "node:fs";
import { serve } from "./serve.mjs";

const [output, format, input, width, height] = process.argv.slice(2);
const bytes = readFileSync(input);
const w = Number(width), h = Number(height);
const meta = await sharp(bytes).metadata();
// librsvg renders at 72 dpi by default: the density that draws the SVG at the gate's width.
const density = meta.format === "svg" ? (72 * w) / meta.width : undefined;
await serve(output, () => {
  const p = sharp(bytes, { pages: 1, page: 0, ...(density ? { density } : {}) }).resize(w, h, { fit: "fill" });
  return (format === "jpeg" ? p.jpeg({ quality: 80 }) : p.png()).toBuffer({ resolveWithObject: true });
}, { density });
