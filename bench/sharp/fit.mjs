// Reference timings: sharp (libvips, one thread) doing what mediagate's downsampler does, one fit
// at a time on request, so that the bench can time sharp's fits between its own (both sides over
// the same seconds of a machine whose speed drifts).
// Usage: node fit.mjs <jpeg|png|webp|gif> <in> <out>; then, on stdin, a line `run` for each fit
// (answered with one line of JSON {ms}) and a line `end` (answered with {bytes, width, height,
// version} after the last fit's output is written to <out>).
import sharp from "sharp";
import { readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

sharp.concurrency(1); // one libvips thread: both sides use one core
sharp.cache(false);   // no result caching between runs

const [format, input, output] = process.argv.slice(2);
const bytes = readFileSync(input);
let out;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "run") {
    const t0 = process.hrtime.bigint();
    let p = sharp(bytes).rotate().resize(2000, 2000, { fit: "inside", withoutEnlargement: true });
    // The type the gate produced for the same input: JPEG at 80, PNG (libpng level 6), lossless
    // WebP (what the gate writes), GIF (first frame, as the gate decodes it).
    p = { jpeg: () => p.jpeg({ quality: 80 }), png: () => p.png(), webp: () => p.webp({ lossless: true }),
          gif: () => p.gif() }[format]();
    out = await p.toBuffer({ resolveWithObject: true });
    console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
  } else if (line === "end") {
    writeFileSync(output, out.data);
    console.log(JSON.stringify({
      bytes: out.data.length, width: out.info.width, height: out.info.height, version: sharp.versions,
    }));
    process.exit(0); // stdin stays open until the bench closes it
  }
}
