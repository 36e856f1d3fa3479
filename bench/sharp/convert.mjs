// Reference timings for the conversions: sharp (libvips, one thread) turning an SVG, TIFF or
// animated GIF into the image the gate produced, at the same pixel size.
// Usage: node convert.mjs <runs> <png|jpeg> <in> <out> <width> <height>
// SVG is rasterised by librsvg at the density that gives <width> directly (no resampling after);
// TIFF: page 1; GIF: `pages: 1` (the first frame). Prints JSON {ms:[...], bytes, width, height, version}.
import sharp from "sharp";
import { readFileSync, writeFileSync } from "node:fs";

sharp.concurrency(1);
sharp.cache(false);

const [runs, format, input, output, width, height] = process.argv.slice(2);
const bytes = readFileSync(input);
const w = Number(width), h = Number(height);
const meta = await sharp(bytes).metadata();
// librsvg renders at 72 dpi by default: the density that draws the SVG at the gate's width.
const density = meta.format === "svg" ? (72 * w) / meta.width : undefined;
const ms = [];
let out;
for (let i = 0; i < Number(runs); i++) {
  const t0 = process.hrtime.bigint();
  let p = sharp(bytes, { pages: 1, page: 0, ...(density ? { density } : {}) })
    .resize(w, h, { fit: "fill" });
  p = format === "jpeg" ? p.jpeg({ quality: 80 }) : p.png();
  out = await p.toBuffer({ resolveWithObject: true });
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
writeFileSync(output, out.data);
console.log(JSON.stringify({
  ms, bytes: out.data.length, width: out.info.width, height: out.info.height,
  version: sharp.versions, density,
}));
