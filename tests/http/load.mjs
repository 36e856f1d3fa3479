// Loopback load test of the http-gate component under one engine: N requests (10,000 by default),
// 32 in flight, a fixed mix of small, medium, large and refused images from tests/corpus/. Every
// answer is checked against `mediagate admit --json` for the same input (the verdict object, and
// the admitted bytes by SHA-256). Prints throughput, p50/p99 latency, the engine's peak RSS and its CPU seconds.
//
//   node tests/http/load.mjs ENGINE [OUT.json]     (tests/http/test.sh runs it for each engine)
//
// MEDIAGATE_HTTP_LOAD_REQUESTS and MEDIAGATE_HTTP_LOAD_CONCURRENCY change N and the concurrency.

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { CORPUS, cpuSeconds, peakRssKiB, runCli, startEngine } from './engines.mjs';

const engineName = process.argv[2];
const outFile = process.argv[3];
const N = Number(process.env.MEDIAGATE_HTTP_LOAD_REQUESTS ?? 10_000);
const CONCURRENCY = Number(process.env.MEDIAGATE_HTTP_LOAD_CONCURRENCY ?? 32);
/** The whole run is bounded: past this the test fails instead of waiting. */
const RUN_DEADLINE_MS = 15 * 60_000;
const REQUEST_TIMEOUT_MS = 120_000;

const sha = (b) => createHash('sha256').update(b).digest('hex');

/** The inputs and their share of the requests (per 10,000). */
function inputs() {
  const png = (f) => join(CORPUS, 'pngsuite', f);
  const suite = readdirSync(join(CORPUS, 'pngsuite')).filter((f) => f.endsWith('.png'));
  const small = suite.filter((f) => /^bas[in]/.test(f)).map((f) => ({ file: png(f), mime: 'image/png' }));
  // xcsn0g01.png's only fault, an IDAT CRC over intact data, is repaired, not refused.
  const corrupt = suite
    .filter((f) => f.startsWith('x') && f !== 'xcsn0g01.png')
    .map((f) => ({ file: png(f), mime: 'image/png' }));
  const photo = (f) => join(CORPUS, 'photos', f);
  const medium = ['kodim02.png', 'kodim07.png', 'lorem_ipsum_screenshot.png'].map((f) => ({
    file: photo(f),
    mime: 'image/png',
  }));
  const large = [{ file: join(CORPUS, 'bench', 'photo-12mp.jpg'), mime: 'image/jpeg' }];
  // A PNG claimed as a JPEG (refused for its signature) and corrupt PngSuite files (undecodable).
  const refused = [{ file: photo('kodim17.png'), mime: 'image/jpeg' }, ...corrupt];
  return [
    { kind: 'small', share: 8_330, items: small },
    { kind: 'medium', share: 600, items: medium },
    { kind: 'large', share: 100, items: large },
    { kind: 'refused', share: 970, items: refused },
  ];
}

/** A deterministic sequence of N inputs with the mix's shares (xorshift, fixed seed). */
function schedule(groups) {
  let s = 0x9e3779b9;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const total = groups.reduce((a, g) => a + g.share, 0);
  const seq = [];
  for (let i = 0; i < N; i++) {
    let r = rand() * total;
    const g = groups.find((g) => (r -= g.share) < 0) ?? groups[groups.length - 1];
    seq.push({ kind: g.kind, item: g.items[Math.floor(rand() * g.items.length)] });
  }
  return seq;
}

/** The CLI's verdict per distinct input: the JSON object and the admitted bytes' SHA-256. */
async function expectations(groups) {
  const dir = mkdtempSync(join(tmpdir(), 'mediagate-load-'));
  const map = new Map();
  try {
    for (const g of groups) {
      for (const it of g.items) {
        const out = join(dir, 'admitted');
        rmSync(out, { force: true });
        const r = await runCli(['admit', '--json', '--mime', it.mime, '--out', out, it.file]);
        const verdict = JSON.parse(r.stdout);
        it.body = readFileSync(it.file);
        map.set(it, { verdict, sha: verdict.ok ? sha(readFileSync(out)) : null });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return map;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  const groups = inputs();
  const expected = await expectations(groups);
  const seq = schedule(groups);
  const engine = await startEngine(engineName);
  const cpuAtStart = cpuSeconds(engine.pid);
  const started = performance.now();
  const deadline = AbortSignal.timeout(RUN_DEADLINE_MS);
  const latencies = new Array(seq.length);
  const mismatches = [];
  const counts = {};
  let next = 0;
  let bytesSent = 0;
  async function worker() {
    while (next < seq.length) {
      if (deadline.aborted) throw new Error(`the load run passed ${RUN_DEADLINE_MS} ms`);
      const i = next++;
      const { kind, item } = seq[i];
      counts[kind] = (counts[kind] ?? 0) + 1;
      bytesSent += item.body.length;
      const t0 = performance.now();
      const r = await fetch(`${engine.url}/v1/admit`, {
        method: 'POST',
        body: item.body,
        headers: { 'content-type': item.mime },
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), deadline]),
      });
      const text = await r.text();
      latencies[i] = performance.now() - t0;
      const want = expected.get(item);
      let ok = r.status === (want.verdict.ok ? 200 : 422);
      if (ok) {
        const { data, ...verdict } = JSON.parse(text);
        ok = isDeepStrictEqual(verdict, want.verdict) && (data === undefined ? null : sha(Buffer.from(data, 'base64'))) === want.sha;
      }
      if (!ok && mismatches.length < 5) mismatches.push({ file: item.file, mime: item.mime, status: r.status, text: text.slice(0, 300) });
      else if (!ok) mismatches.push(null);
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    var peak = peakRssKiB(engine.pid);
    var cpu = cpuSeconds(engine.pid) - cpuAtStart;
    engine.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice().sort((a, b) => a - b);
  const figures = {
    engine: engineName,
    command: engine.command,
    requests: seq.length,
    concurrency: CONCURRENCY,
    mix: counts,
    mib_sent: +(bytesSent / 2 ** 20).toFixed(1),
    seconds: +seconds.toFixed(1),
    requests_per_second: +(seq.length / seconds).toFixed(1),
    p50_ms: +percentile(sorted, 50).toFixed(1),
    p99_ms: +percentile(sorted, 99).toFixed(1),
    max_ms: +sorted[sorted.length - 1].toFixed(1),
    peak_rss_mib: +(peak / 1024).toFixed(1),
    cpu_seconds: +cpu.toFixed(1),
    cpu_ms_per_request: +((cpu * 1000) / seq.length).toFixed(1),
    verdicts_equal_cli: mismatches.length === 0,
    mismatches: mismatches.length,
  };
  console.log(JSON.stringify(figures));
  if (outFile) writeFileSync(outFile, JSON.stringify(figures, null, 2) + '\n');
  if (mismatches.length) {
    console.error('verdicts that differ from the CLI:', JSON.stringify(mismatches.filter(Boolean), null, 2));
    process.exit(1);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
