// The protocol by which the bench times a sharp pipeline between its own runs (both sides over
// the same seconds of a machine whose speed drifts): a line `run` on stdin runs the pipeline once
// and is answered with one line of JSON {ms}; a line `end` writes the last run's output to
// `output` and is answered with {bytes, width, height, version, ...about}.
import sharp from "sharp";
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

sharp.concurrency(1); // one libvips thread: both sides use one core
sharp.cache(false);   // no result caching between runs

/** Serves `once` (a function returning sharp's `toBuffer({ resolveWithObject: true })`). */
export async function serve(output, once, about = {}) {
  let out;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "run") {
      const t0 = process.hrtime.bigint();
      out = await once();
      console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    } else if (line === "end") {
      writeFileSync(output, out.data);
      console.log(JSON.stringify({
        bytes: out.data.length, width: out.info.width, height: out.info.height, version: sharp.versions, ...about,
      }));
      process.exit(0); // stdin stays open until the bench closes it
    }
  }
}
