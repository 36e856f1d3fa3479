// Same verdicts everywhere: the native CLI, the Node package and the browser page judge the whole
// corpus (PngSuite, photos, the bench files, and two made-up fixtures), file by file: the JSON text
// `mediagate admit --json` prints and the package's `verdict.json` are equal byte for byte (the
// component writes both).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { CORPUS, SVG_BYTES, cliVerdictText, minimalPdf, openDemo, runCli } from './helpers.js';

const fixtures = mkdtempSync(join(tmpdir(), 'mediagate-parity-'));
const outputs = join(fixtures, 'out');
writeFileSync(join(fixtures, 'svg-named.png'), SVG_BYTES);
writeFileSync(join(fixtures, 'document.pdf'), minimalPdf());
writeFileSync(join(fixtures, 'empty.png'), new Uint8Array(0));

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function listFiles(dir, filter = () => true) {
  return readdirSync(dir)
    .filter(filter)
    .sort()
    .map((f) => join(dir, f));
}

const cases = [];
function addCase(file, label, options = {}, cliArgs = []) {
  // The CLI hands the gate the file's path as its name (the extension hint); so does the package here.
  cases.push({ name: `${label}${cliArgs.length ? ` ${cliArgs.join(' ')}` : ''}`, file, input: { name: file }, options, cliArgs });
}
for (const file of listFiles(join(CORPUS, 'pngsuite'), (f) => f.endsWith('.png'))) {
  addCase(file, `pngsuite/${basename(file)}`);
  if (basename(file).startsWith('x')) addCase(file, `pngsuite/${basename(file)}`, { verify: 'full' }, ['--verify', 'full']);
}
for (const file of listFiles(join(CORPUS, 'photos'))) addCase(file, `photos/${basename(file)}`);
for (const file of listFiles(join(CORPUS, 'bench'))) addCase(file, `bench/${basename(file)}`);
addCase(join(CORPUS, 'bench', 'screenshot-3456x2234.png'), 'bench/screenshot-3456x2234.png', { downsample: false }, ['--no-downsample']);
addCase(join(CORPUS, 'photos', 'kodim23.png'), 'photos/kodim23.png', { provider: 'openai', verify: 'full' }, ['--profile', 'openai', '--verify', 'full']);
for (const f of ['svg-named.png', 'document.pdf', 'empty.png']) addCase(join(fixtures, f), `fixture/${f}`);
// Metadata: dropped by default (the canonical bytes compared below), kept when asked.
for (const f of ['gps-exif.jpg', 'gps-exif.png']) {
  addCase(join(CORPUS, 'metadata', f), `metadata/${f}`);
  addCase(join(CORPUS, 'metadata', f), `metadata/${f}`, { keepMetadata: true }, ['--keep-metadata']);
}

const cli = new Map();
const node = new Map();
const browser = new Map();
let demo;

async function pool(items, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const item = items[next++];
        await fn(item);
      }
    }),
  );
}

describe('parity: native CLI, Node, Chromium', { timeout: 600_000 }, () => {
  before(async () => {
    // 1. The native CLI, two at a time (the machine has two cores); --out keeps the admitted bytes.
    const { mkdirSync } = await import('node:fs');
    mkdirSync(outputs, { recursive: true });
    await pool(
      cases.map((c, i) => ({ c, i })),
      2,
      async ({ c, i }) => {
        const out = join(outputs, String(i));
        const text = await cliVerdictText(c.file, [...c.cliArgs, '--out', out]);
        const verdict = JSON.parse(text);
        cli.set(c.name, { text, verdict, sha256: verdict.ok ? sha256(readFileSync(out)) : null });
      },
    );

    // 2. The Node package: one instance for the whole corpus.
    const gate = await mediagate.createGate();
    for (const c of cases) {
      const v = gate.admit(readFileSync(c.file), c.input, c.options);
      node.set(c.name, { text: v.json, keys: JSON.stringify(v), sha256: v.ok ? sha256(mediagate.admittedBytes(v)) : null });
    }

    // 3. The browser page's gate, in batches of at most ~6 MB of base64.
    demo = await openDemo();
    let batch = [];
    let size = 0;
    const flush = async () => {
      if (!batch.length) return;
      const answers = await demo.page.evaluate((items) => window.mediagateAdmitBatch(items), batch.map((b) => b.item));
      answers.forEach((a, k) => browser.set(batch[k].name, a));
      batch = [];
      size = 0;
    };
    for (const c of cases) {
      const b64 = readFileSync(c.file).toString('base64');
      if (size + b64.length > 6_000_000) await flush();
      batch.push({ name: c.name, item: { b64, input: c.input, options: c.options } });
      size += b64.length;
    }
    await flush();
    assert.deepEqual(demo.problems, [], 'the page logged no errors');
  });

  after(async () => {
    await demo?.close();
    rmSync(fixtures, { recursive: true, force: true });
  });

  it('compares like with like: the CLI embeds the component dist/generated was built from', async () => {
    const built = JSON.parse(readFileSync(new URL('../dist/generated/BUILD.json', import.meta.url), 'utf8'));
    const embedded = join(fixtures, 'cli-preflight.wasm');
    const run = await runCli(['component', '--world', 'preflight', '--out', embedded]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      sha256(readFileSync(embedded)),
      built.componentSha256,
      `${run.bin} embeds another preflight component than ${built.component} (which npm run build ` +
        'transpiled): rebuild the one that is stale (cargo build, then npm run build); every verdict below may differ',
    );
  });

  it(`covers the whole corpus (${cases.length} cases)`, () => {
    assert.ok(cases.filter((c) => c.name.startsWith('pngsuite/')).length >= 170);
    assert.ok(cases.filter((c) => c.name.startsWith('photos/')).length >= 8);
    assert.equal(cli.size, cases.length);
    assert.equal(node.size, cases.length);
    assert.equal(browser.size, cases.length);
    // The corpus exercises both outcomes, resizing and several refusal reasons.
    const verdicts = [...cli.values()].map((v) => v.verdict);
    assert.ok(verdicts.some((v) => v.ok && v.resized));
    const reasons = new Set(verdicts.filter((v) => !v.ok).map((v) => v.reason));
    for (const r of ['magic_mismatch', 'base64_too_large']) assert.ok(reasons.has(r), `no case refused as ${r}`);
  });

  for (const c of cases) {
    it(c.name, () => {
      const expected = cli.get(c.name);
      assert.equal(node.get(c.name).text, expected.text, 'Node verdict differs from the CLI');
      // The verdict object's own keys are the CLI's, nothing added (bytes and text sit beside them).
      assert.equal(node.get(c.name).keys, expected.text, "the Node verdict's keys are not the CLI's");
      assert.equal(browser.get(c.name).text, expected.text, 'Chromium verdict differs from the CLI');
      assert.equal(node.get(c.name).sha256, expected.sha256, 'Node admitted other bytes than the CLI');
      assert.equal(browser.get(c.name).sha256, expected.sha256, 'Chromium admitted other bytes than the CLI');
    });
  }

  it('tool results: the CLI and the Node package give the same answer', async () => {
    const b64 = (f) => readFileSync(f).toString('base64');
    const content = {
      content: [
        { type: 'text', text: 'three captures' },
        { type: 'image', data: b64(join(CORPUS, 'photos', 'kodim23.png')), mimeType: 'image/png' },
        { type: 'image', data: Buffer.from(SVG_BYTES).toString('base64'), mimeType: 'image/png' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(join(CORPUS, 'bench', 'screenshot-3456x2234.png')) } },
        { type: 'resource', resource: { uri: 'file:///r.pdf', mimeType: 'application/pdf', blob: Buffer.from(minimalPdf()).toString('base64') } },
      ],
      isError: false,
    };
    const file = join(fixtures, 'tool-result.json');
    writeFileSync(file, JSON.stringify(content));
    for (const [args, options] of [
      [[], {}],
      [['--no-downsample'], { downsample: false }],
    ]) {
      const run = await runCli(['admit-tool-result', '--tool', 'capture', file, ...args]);
      // The SVG labelled image/png is refused: the gate commands exit 1 when a block was refused.
      assert.equal(run.code, 1, run.stderr);
      const answer = await mediagate.admitToolResult('capture', content, options);
      assert.equal(`${answer.json}\n`, run.stdout, 'the tool result differs from the CLI');
      assert.deepEqual(answer, JSON.parse(run.stdout));
    }
  });
});
