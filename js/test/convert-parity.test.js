// Same conversions everywhere: the native CLI (`mediagate admit --convert --json`, `--page N`) and
// the Node package judge every file of tests/corpus/convert/, the conformance files of
// tests/corpus/conformance/parity.txt and the files written here by hand:
// the verdict's JSON text (the component writes it for both) byte for byte, and the SHA-256 of the
// admitted bytes, are equal. (hosts/python/tests/test_convert_parity.py holds the
// Python host to the same CLI.)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { DIAGRAM_SVG, animatedGif, bmp, ico, tiff } from './convert-fixtures.js';
import { CORPUS, cliVerdictText, minimalPdf, runCli } from './helpers.js';

const CONVERT_CORPUS = join(CORPUS, 'convert');
const work = mkdtempSync(join(tmpdir(), 'mediagate-convert-parity-'));
const outputs = join(work, 'out');
mkdirSync(outputs);

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * The convert corpus's inputs as its manifest lists them (`file`, the `mime` claimed, the pages its
 * references render): the reference renderings beside them are not inputs.
 */
function corpusInputs() {
  const manifest = join(CONVERT_CORPUS, 'manifest.json');
  if (!existsSync(manifest)) return [];
  return JSON.parse(readFileSync(manifest, 'utf8')).files.map((f) => ({
    path: join(CONVERT_CORPUS, f.file),
    mime: f.mime,
    pages: [...new Set((f.references ?? []).map((r) => r.page).filter((p) => p != null))],
  }));
}

const cases = [];
/** `mime`: the type claimed (`--mime`); none: the gate picks it, the file's path its name hint, as the CLI gives it. */
function addCase(file, label, { options = {}, cliArgs = [], page, mime } = {}) {
  cases.push({ name: `${label}${cliArgs.length ? ` ${cliArgs.join(' ')}` : ''}${page ? ` page ${page}` : ''}`, file, mime, options, cliArgs, page });
}

const made = {
  'diagram.svg': DIAGRAM_SVG,
  'scan.bmp': bmp(40, 30),
  'scan.tif': tiff(36, 24),
  'icon.ico': await ico(),
  'spinner.gif': animatedGif(),
  'doc.pdf': minimalPdf('page one'),
};
for (const [name, bytes] of Object.entries(made)) writeFileSync(join(work, name), bytes);
for (const name of Object.keys(made)) addCase(join(work, name), `made/${name}`);
addCase(join(work, 'spinner.gif'), 'made/spinner.gif', { options: { provider: 'openai' }, cliArgs: ['--profile', 'openai'] });
addCase(join(work, 'doc.pdf'), 'made/doc.pdf', { page: 1 });
// The conformance files every host's parity test runs: re-muxes that drop metadata, conversions.
const CONFORMANCE = join(CORPUS, 'conformance');
for (const line of readFileSync(join(CONFORMANCE, 'parity.txt'), 'utf8').split('\n')) {
  if (line.trim() && !line.startsWith('#')) addCase(join(CONFORMANCE, line.trim()), `conformance/${line.trim()}`);
}
for (const { path, mime, pages } of corpusInputs()) {
  const label = `convert/${relative(CONVERT_CORPUS, path)}`;
  addCase(path, label, { mime });
  if (mime === 'application/pdf') for (const page of pages.length ? pages : [1]) addCase(path, label, { mime, page });
  if (mime === 'image/gif') addCase(path, label, { mime, options: { provider: 'openai' }, cliArgs: ['--profile', 'openai'] });
}

const cli = new Map();
const node = new Map();

describe('conversion parity: native CLI, Node', { timeout: 600_000 }, () => {
  before(async () => {
    const built = JSON.parse(readFileSync(new URL('../dist/generated/BUILD.json', import.meta.url), 'utf8'));
    assert.ok(built.convert, 'dist/generated/ has no converter component: cargo build, then npm run build');
    let i = 0;
    for (const c of cases) {
      const out = join(outputs, String(i++));
      const args = [...(c.mime ? ['--mime', c.mime] : []), '--verify', 'full', ...c.cliArgs, '--out', out];
      args.push(...(c.page ? ['--page', String(c.page)] : ['--convert']));
      // A page error (no such page, encrypted, blank) is a verdict too, in the same JSON.
      const text = await cliVerdictText(c.file, args);
      const verdict = JSON.parse(text);
      cli.set(c.name, { text, verdict, sha256: verdict.ok ? sha256(readFileSync(out)) : null });
    }
    const gate = await mediagate.createGate({ convert: true, verify: 'full' });
    for (const c of cases) {
      const bytes = readFileSync(c.file);
      const input = { ...(c.mime ? { mime: c.mime } : { name: c.file }), page: c.page };
      const v = gate.admit(bytes, input, c.options);
      node.set(c.name, { text: v.json, sha256: v.ok ? sha256(mediagate.admittedBytes(v)) : null });
    }
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('compares like with like: the CLI embeds the converter component dist/generated was built from', async () => {
    const built = JSON.parse(readFileSync(new URL('../dist/generated/BUILD.json', import.meta.url), 'utf8'));
    const embedded = join(work, 'cli-convert.wasm');
    const run = await runCli(['component', '--world', 'convert', '--out', embedded]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      sha256(readFileSync(embedded)),
      built.convert.componentSha256,
      `${run.bin} embeds another converter component than ${built.convert.component}: rebuild the stale one`,
    );
  });

  it(`covers the made files and tests/corpus/convert/ (${cases.length} cases)`, () => {
    assert.equal(cli.size, cases.length);
    assert.equal(node.size, cases.length);
    const converted = [...cli.values()].filter((v) => v.verdict.converted).map((v) => v.verdict.converted.from);
    for (const from of ['image/svg+xml', 'image/bmp', 'image/tiff', 'image/vnd.microsoft.icon', 'image/gif', 'application/pdf']) {
      assert.ok(converted.includes(from), `no case converted from ${from}`);
    }
  });

  it('tool results: `admit-tool-result --convert` and the Node package give the same answer', async () => {
    const b64 = (bytes) => Buffer.from(bytes).toString('base64');
    const content = {
      content: [
        { type: 'text', text: 'two drawings' },
        { type: 'image', data: b64(made['diagram.svg']), mimeType: 'image/svg+xml' },
        { type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: b64(made['scan.bmp']) } },
      ],
    };
    const file = join(work, 'tool-result.json');
    writeFileSync(file, JSON.stringify(content));
    const run = await runCli(['admit-tool-result', '--tool', 'draw', '--convert', file]);
    assert.equal(run.code, 0, run.stderr);
    const answer = await mediagate.admitToolResult('draw', content, { convert: true });
    assert.equal(`${answer.json}\n`, run.stdout, 'the tool result differs from the CLI');
    assert.ok(answer.conversions.length === 2 && answer.refused.length === 0, answer.json);
  });

  for (const c of cases) {
    it(c.name, () => {
      const expected = cli.get(c.name);
      const got = node.get(c.name);
      assert.equal(got.text, expected.text, `Node verdict differs from the CLI (${basename(c.file)})`);
      assert.equal(got.sha256, expected.sha256, 'Node admitted other bytes than the CLI');
    });
  }
});
