// npm run bench: instantiate and admit times of the gate in Node and in headless Chromium.
//
//   node bench.mjs [--quick]
//
// The "3 MB PNG" is made here: a deterministic 1000x1000 RGB noise PNG (3,001,983 bytes; noise does
// not compress). It passes the gate unchanged (under 3.75 MiB and 2000 px), so its admission is
// the sniff, the header read and the base64 encoding. It is written to
// test-artifacts/bench-3mb.png so the native side can be measured on the very same file.
// Medians are printed, and written to test-artifacts/bench.json.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import * as mediagate from './src/index.js';
import { ARTIFACTS, CORPUS, mediagateBinCandidates, noisePng, openDemo } from './test/helpers.js';
import { bundleSize } from './scripts/size.mjs';

const quick = process.argv.includes('--quick');
const RUNS = {
  instantiate: quick ? 5 : 20,
  admit3mb: quick ? 10 : 40,
  full3mb: quick ? 3 : 10,
  downsample: quick ? 2 : 5,
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function timeRuns(n, fn, warmup = 2) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

mkdirSync(ARTIFACTS, { recursive: true });
const png3mb = await noisePng(1000, 1000);
const png3mbPath = join(ARTIFACTS, 'bench-3mb.png');
writeFileSync(png3mbPath, png3mb);
const screenshot = readFileSync(join(CORPUS, 'bench', 'screenshot-3456x2234.png'));
const photo = readFileSync(join(CORPUS, 'bench', 'photo-12mp.jpg'));

// ---------------------------------------------------------------------------------------------
// Node

async function benchNode() {
  const t0 = performance.now();
  const first = await mediagate.createGate();
  const firstInstantiate = performance.now() - t0;
  const compileAndInstantiate = await timeRuns(RUNS.instantiate, () => mediagate.createGate({ cache: false }));
  const instantiate = await timeRuns(RUNS.instantiate, () => mediagate.createGate());
  const check = first.admit(png3mb, 'image/png');
  if (!check.ok || check.resized) throw new Error(`the 3 MB PNG should pass unchanged: ${check.json}`);
  return {
    firstInstantiate,
    compileAndInstantiate,
    instantiate,
    admit3mb: await timeRuns(RUNS.admit3mb, () => first.admit(png3mb, 'image/png', { verify: 'header' }), 3),
    admit3mbFull: await timeRuns(RUNS.full3mb, () => first.admit(png3mb, 'image/png', { verify: 'full' }), 1),
    screenshot: await timeRuns(RUNS.downsample, () => first.admit(screenshot, 'image/png'), 1),
    photo12mp: await timeRuns(RUNS.downsample, () => first.admit(photo, 'image/jpeg'), 1),
  };
}

// ---------------------------------------------------------------------------------------------
// Chromium, in the demo page (the same module a web app would import)

async function benchChromium() {
  const demo = await openDemo();
  try {
    const { page } = demo;
    const b64 = (bytes) => Buffer.from(bytes).toString('base64');
    await page.evaluate(
      (files) => {
        const decode = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
        window.benchFiles = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, decode(v)]));
      },
      { png3mb: b64(png3mb), screenshot: b64(screenshot), photo: b64(photo) },
    );
    // The page times with the same two functions as Node (their source, as globals there).
    await page.evaluate(`window.median = ${median}; window.timeRuns = ${timeRuns};`);
    const result = await page.evaluate(async (runs) => {
      const mg = window.mediagate;
      const { timeRuns } = window;
      const { png3mb, screenshot, photo } = window.benchFiles;
      const gate = await mg.createGate();
      return {
        firstInstantiate: window.mediagateInstantiateMs,
        compileAndInstantiate: await timeRuns(runs.instantiate, () => mg.createGate({ cache: false })),
        instantiate: await timeRuns(runs.instantiate, () => mg.createGate()),
        admit3mb: await timeRuns(runs.admit3mb, () => gate.admit(png3mb, 'image/png', { verify: 'header' }), 3),
        admit3mbFull: await timeRuns(runs.full3mb, () => gate.admit(png3mb, 'image/png', { verify: 'full' }), 1),
        screenshot: await timeRuns(runs.downsample, () => gate.admit(screenshot, 'image/png'), 1),
        photo12mp: await timeRuns(runs.downsample, () => gate.admit(photo, 'image/jpeg'), 1),
      };
    }, RUNS);
    return { ...result, version: demo.browserVersion, userAgent: demo.userAgent };
  } finally {
    await demo.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The native CLI, for context: a whole `mediagate admit` process (start, load the cached
// compiled component, admit, print). The in-process native figure belongs to the Rust bench.

function benchCli() {
  const bin = mediagateBinCandidates().find((p) => {
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!bin) return null;
  const run = () => {
    try {
      execFileSync(bin, ['admit', png3mbPath, '--json'], { stdio: ['ignore', 'ignore', 'inherit'] });
    } catch (e) {
      if (e.status !== 1) throw e;
    }
  };
  run();
  const times = [];
  for (let i = 0; i < (quick ? 3 : 10); i++) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  return { bin, processAdmit3mb: median(times) };
}

const nodeFigures = await benchNode();
const chromiumFigures = await benchChromium();
const cliFigures = benchCli();
const size = bundleSize();
const jco = JSON.parse(readFileSync(new URL('./dist/generated/BUILD.json', import.meta.url), 'utf8'));
const playwright = JSON.parse(readFileSync(new URL('./node_modules/playwright-core/package.json', import.meta.url), 'utf8'));

const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const rows = [
  ['first instantiate (fetch/read + compile + instantiate)', 'firstInstantiate'],
  ['compile + instantiate (no module cache), median', 'compileAndInstantiate'],
  ['instantiate from the compiled module, median', 'instantiate'],
  ['admit the 3 MB PNG (header verify), median', 'admit3mb'],
  ['admit the 3 MB PNG, verify full, median', 'admit3mbFull'],
  ['4.2 MB screenshot 3456x2234 -> 2000x1293, median', 'screenshot'],
  ['12 MP photo 4000x3000 JPEG -> 2000x1500, median', 'photo12mp'],
];
console.log(`Node ${process.version}, Chromium ${chromiumFigures.version}, jco ${jco.jco}, playwright-core ${playwright.version}`);
console.log(`3 MB PNG: ${png3mbPath} (${png3mb.length} bytes, 1000x1000 RGB noise)\n`);
console.log(`| what | Node | Chromium |\n|---|---|---|`);
for (const [label, key] of rows) console.log(`| ${label} | ${ms(nodeFigures[key])} | ${ms(chromiumFigures[key])} |`);
if (cliFigures) console.log(`\nnative CLI process (${cliFigures.bin}): admit the 3 MB PNG, whole process, median ${ms(cliFigures.processAdmit3mb)}`);
console.log(`\nbundle: ${size.total.raw} bytes raw, ${size.total.gzip} bytes gzip -9`);

writeFileSync(
  join(ARTIFACTS, 'bench.json'),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      chromium: chromiumFigures.version,
      jco: jco.jco,
      playwrightCore: playwright.version,
      png3mb: { path: png3mbPath, bytes: png3mb.length },
      runs: RUNS,
      nodeMs: nodeFigures,
      chromiumMs: chromiumFigures,
      cli: cliFigures,
      bundle: size,
    },
    null,
    2,
  )}\n`,
);
