// The latency `mediagate proxy` adds per tool call: the same calls through the official
// TypeScript SDK client to the official server-filesystem, once directly and once through the
// proxy, on a 3 MB image result (read_media_file of a 1000×1000 noise PNG: full decode in the
// sandbox, admitted unchanged) and a text result (read_text_file). Prints median and p99 of each
// and the difference. Usage: bash tests/proxy/install.sh && node bench/proxy.mjs [image-calls] [text-calls]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

import { connect, filesystem, png } from "../tests/proxy/helpers.mjs";

const imageCalls = Number(process.argv[2] ?? 60);
const textCalls = Number(process.argv[3] ?? 300);
const dir = mkdtempSync(join(tmpdir(), "mediagate-proxy-bench-"));
const image = png(1000, 1000, { noise: true });
writeFileSync(join(dir, "noise.png"), image);
writeFileSync(join(dir, "note.txt"), "a short text file\n".repeat(20));

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
async function measure(client, name, args, calls) {
  for (let i = 0; i < 3; i++) await client.callTool({ name, arguments: args }); // warm-up
  const times = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    const result = await client.callTool({ name, arguments: args });
    times.push(performance.now() - start);
    if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 300));
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

const cases = [
  [`image (${(image.length / 1e6).toFixed(1)} MB PNG)`, "read_media_file", { path: join(dir, "noise.png") }, imageCalls],
  ["text", "read_text_file", { path: join(dir, "note.txt") }, textCalls],
];
const rows = [];
for (const [label, tool, args, calls] of cases) {
  const figures = {};
  for (const direct of [true, false]) {
    const client = await connect(filesystem(dir), { direct });
    await client.listTools();
    figures[direct ? "direct" : "proxy"] = await measure(client, tool, args, calls);
    await client.close();
  }
  rows.push({
    result: label,
    calls,
    "direct median ms": figures.direct.median.toFixed(1),
    "direct p99 ms": figures.direct.p99.toFixed(1),
    "proxy median ms": figures.proxy.median.toFixed(1),
    "proxy p99 ms": figures.proxy.p99.toFixed(1),
    "added median ms": (figures.proxy.median - figures.direct.median).toFixed(1),
    "added p99 ms": (figures.proxy.p99 - figures.direct.p99).toFixed(1),
  });
}
console.table(rows);
rmSync(dir, { recursive: true, force: true });
