// Shared by the tests and bench.mjs: where things are, the native CLI, the browser.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PKG_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(PKG_DIR, '..');
/** The test corpus, carried in the repository (tests/corpus/README.md says where each file comes from). */
export const CORPUS = join(REPO_ROOT, 'tests', 'corpus');
export const ARTIFACTS = join(PKG_DIR, 'test-artifacts');

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** MEDIAGATE_BIN, else the first of target/release/mediagate, target/debug/mediagate that exists. */
export function mediagateBinCandidates() {
  if (process.env.MEDIAGATE_BIN) return [resolve(process.env.MEDIAGATE_BIN)];
  return [join(REPO_ROOT, 'target', 'release', 'mediagate'), join(REPO_ROOT, 'target', 'debug', 'mediagate')];
}

/** The native CLI; waits a while when it is missing (it may be in the middle of a rebuild). */
export async function mediagateBin({ waitMs = 120_000 } = {}) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = mediagateBinCandidates().find((p) => existsSync(p));
    if (found) return found;
    if (Date.now() > deadline) {
      throw new Error(
        `the native CLI is missing (looked for ${mediagateBinCandidates().join(', ')}); ` +
          'build it (cargo build -p the host crate) or set MEDIAGATE_BIN',
      );
    }
    await sleep(1000);
  }
}

function execOnce(bin, args) {
  return new Promise((resolvePromise) => {
    execFile(bin, args, { maxBuffer: 64 << 20, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolvePromise({ error, code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** Runs `mediagate ARGS`; retries while the binary is being replaced (ENOENT, ETXTBSY). */
export async function runCli(args) {
  for (let attempt = 0; ; attempt++) {
    const bin = await mediagateBin();
    const result = await execOnce(bin, args);
    const transient = result.error && ['ENOENT', 'ETXTBSY', 'EACCES'].includes(result.error.code);
    if (!transient || attempt >= 30) return { ...result, bin };
    await sleep(1000);
  }
}

/**
 * `mediagate admit FILE --json [extra]` → the JSON text it prints (without the line's end; exit 0
 * admitted, 1 refused): what the package's verdicts must equal byte for byte (`verdict.json`).
 */
export async function cliVerdictText(file, extra = []) {
  const { code, stdout, stderr, bin } = await runCli(['admit', file, '--json', ...extra]);
  if (code !== 0 && code !== 1) {
    throw new Error(`${bin} admit ${file} exited ${code}: ${stderr.trim()}`);
  }
  if (!stdout.endsWith('\n') || stdout.indexOf('\n') !== stdout.length - 1) {
    throw new Error(`${bin} admit ${file} --json printed more or less than one line: ${JSON.stringify(stdout)}`);
  }
  const text = stdout.slice(0, -1);
  const verdict = JSON.parse(text);
  if ((code === 0) !== verdict.ok) throw new Error(`exit ${code} does not match ok=${verdict.ok} for ${file}`);
  return text;
}

/** `mediagate admit FILE --json [extra]` → the parsed verdict. */
export async function cliVerdict(file, extra = []) {
  return JSON.parse(await cliVerdictText(file, extra));
}

/** Headless Debian Chromium through playwright-core, with a fresh profile directory. */
export async function launchChromium() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (js/test.sh does it)`);
  }
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'mediagate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 1000 },
  });
  return {
    context,
    version: context.browser()?.version() ?? null,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The demo server plus Chromium on the demo page, ready to judge files. */
export async function openDemo() {
  const { startServer } = await import('../demo/serve.js');
  const server = await startServer();
  let browser;
  try {
    browser = await launchChromium();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    await page.goto(server.url);
    await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
    const userAgent = await page.evaluate(() => navigator.userAgent);
    return {
      page,
      url: server.url,
      problems,
      userAgent,
      browserVersion: browser.version,
      async close() {
        await browser.close();
        await server.close();
      },
    };
  } catch (e) {
    await browser?.close();
    await server.close();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures made on the spot

/** An SVG document: what a file named `.png` often really is. */
export const SVG_BYTES = new TextEncoder().encode(
  '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60">' +
    '<rect width="120" height="60" fill="#2563eb"/><text x="10" y="35" fill="#fff">not a PNG</text></svg>\n',
);

/** A small, valid one-page PDF (the cross-reference offsets are computed). */
export function minimalPdf(text = 'mediagate preflight') {
  const stream = `BT /F1 18 Tf 20 40 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A deterministic RGB PNG of noise: it does not compress, so width*height*3 bytes of pixels give a
 * file of about that size (1000x1000 → about 3.0 MB). Used for the "admit a 3 MB PNG" benchmark.
 */
export async function noisePng(width = 1000, height = 1000, seed = 0x9e3779b9) {
  const { deflateSync } = await import('node:zlib');
  const raw = new Uint8Array((width * 3 + 1) * height);
  let x = seed >>> 0 || 1;
  for (let row = 0; row < height; row++) {
    const start = row * (width * 3 + 1);
    raw[start] = 0; // filter: none
    for (let i = 1; i <= width * 3; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      raw[start + i] = x & 0xff;
    }
  }
  const chunk = (type, data) => {
    const out = new Uint8Array(12 + data.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.length);
    out.set(new TextEncoder().encode(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  const ihdrView = new DataView(ihdr.buffer);
  ihdrView.setUint32(0, width);
  ihdrView.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, adaptive filtering, no interlace
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', new Uint8Array(deflateSync(raw, { level: 9 }))),
    chunk('IEND', new Uint8Array(0)),
  ];
  const total = parts.reduce((n, p) => n + p.length, 0);
  const png = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    png.set(p, offset);
    offset += p.length;
  }
  return png;
}
