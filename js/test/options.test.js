// createGate's options, honoured by every function: the admission defaults an instance (or the
// module-level functions, through configure) applies to each call, a call's own options over them,
// the documented defaults when nothing is given, and the loading options (wasmBase, wasmUrls,
// getCoreModule, cache, stdout, stderr). Each option is seen reaching the component by the verdict
// it changes: the verdicts themselves are the component's (the CLI's are the same text), so this
// host is tested on what it does, marshalling, not by comparing whole outputs with the CLI's.
// Fixtures are made here, but for the corpus's photo with GPS EXIF.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { CORPUS, PKG_DIR, SVG_BYTES, minimalPdf, runCli } from './helpers.js';
import { GIF_1X1, b64, corruptPng, widePng } from './fixtures.js';

const GENERATED = join(PKG_DIR, 'dist', 'generated');
const scratch = mkdtempSync(join(tmpdir(), 'mediagate-options-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory holding copies of the core modules, as a bundler's output would. */
function copiedCores() {
  const dir = mkdtempSync(join(scratch, 'cores-'));
  for (const name of mediagate.CORE_MODULES) copyFileSync(join(GENERATED, name), join(dir, name));
  return dir;
}

const gifBlock = () => ({ type: 'image', data: b64(GIF_1X1), mimeType: 'image/gif' });
const cli = (v) => v.json;

describe('admission defaults', () => {
  it('the defaults come from the component, and DEFAULT_OPTIONS equals them', async () => {
    const gate = await mediagate.createGate();
    assert.deepEqual(gate.componentDefaults, { downsample: true, provider: 'anthropic', verify: 'full', keepMetadata: false });
    assert.deepEqual(gate.componentDefaults, mediagate.DEFAULT_OPTIONS);
    assert.deepEqual(gate.defaults, gate.componentDefaults);
  });

  it('DEFAULT_OPTIONS is what a call without options gets, for every function', async () => {
    const d = mediagate.DEFAULT_OPTIONS;
    // `convert` is no option of the component's (converting is another component, off by default).
    assert.deepEqual(Object.keys(d).sort(), mediagate.ADMIT_OPTION_KEYS.filter((k) => k !== 'convert').sort());
    const gate = await mediagate.createGate();
    assert.deepEqual(gate.defaults, d);
    const corrupt = await corruptPng();
    const wide = await widePng();
    for (const [bytes, mime] of [
      [corrupt, 'image/png'],
      [wide, 'image/png'],
      [GIF_1X1, 'image/gif'],
    ]) {
      assert.equal(cli(gate.admit(bytes, mime)), cli(gate.admit(bytes, mime, d)));
      assert.equal(cli(gate.admit(bytes, mime)), cli(gate.admit(bytes, mime, { ...d })));
      assert.equal(cli(gate.admit(bytes)), cli(gate.admit(bytes, undefined, d)));
      assert.equal(cli(await mediagate.admit(bytes, mime)), cli(gate.admit(bytes, mime, d)));
    }
    const content = [{ type: 'image', data: b64(corrupt), mimeType: 'image/png' }, gifBlock()];
    assert.deepEqual(gate.admitToolResult('t', content).refused, gate.admitToolResult('t', content, d).refused);
    assert.deepEqual((await mediagate.admitToolResult('t', content)).refused, gate.admitToolResult('t', content, d).refused);
    const pdf = minimalPdf();
    assert.equal(gate.admit(pdf, 'application/pdf').json, gate.admit(pdf, 'application/pdf', d).json);
    assert.equal((await mediagate.admit(pdf, 'application/pdf')).json, gate.admit(pdf, 'application/pdf', d).json);
  });

  it('each option changes the verdict (so a test of its default means something)', async () => {
    const gate = await mediagate.createGate();
    const corrupt = await corruptPng();
    assert.equal(gate.admit(corrupt, 'image/png', { verify: 'header' }).ok, true);
    assert.equal(gate.admit(corrupt, 'image/png', { verify: 'full' }).ok, false);
    const wide = await widePng();
    assert.equal(gate.admit(wide, 'image/png', { downsample: true }).resized, true);
    assert.deepEqual([gate.admit(wide, 'image/png', { downsample: false })].map((v) => ({ width: v.width, height: v.height }))[0], { width: 2400, height: 10 });
    assert.equal(gate.admit(GIF_1X1, 'image/gif', { provider: 'anthropic' }).ok, true);
    assert.equal(gate.admit(GIF_1X1, 'image/gif', { provider: 'gemini' }).reason, 'mime_unsupported');
  });

  it('keepMetadata and the input (name, mime, page) reach the component', async () => {
    const gate = await mediagate.createGate();
    const photo = readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg'));
    assert.deepEqual(gate.admit(photo).dropped, ['exif']);
    const kept = gate.admit(photo, {}, { keepMetadata: true });
    assert.equal(kept.dropped, undefined, kept.json);
    assert.ok(Buffer.from(mediagate.admittedBytes(kept)).equals(photo), 'kept as given');
    // The name is the extension hint when the bytes carry no type the gate admits; a claimed type
    // is checked against the bytes.
    assert.equal(gate.admit(SVG_BYTES, { name: 'diagram.png' }).reason, 'magic_mismatch');
    assert.equal(gate.admit(SVG_BYTES, { name: 'diagram.svg' }).reason, 'mime_unsupported');
    assert.equal(gate.admit(GIF_1X1, { mime: 'image/png' }).reason, 'magic_mismatch');
    const pdf = minimalPdf();
    assert.equal(gate.admit(pdf).kind, 'document');
    const converting = await mediagate.createGate({ convert: true });
    assert.equal(converting.admit(pdf, { page: 1 }).mime, 'image/png');
    const missing = converting.admit(pdf, { page: 2 });
    assert.deepEqual([missing.reason, missing.requested, missing.count], ['no_such_page', 2, 1], missing.json);
    assert.equal(converting.admit(SVG_BYTES, { name: 'd.svg' }).converted.from, 'image/svg+xml');
    assert.equal(converting.admit(SVG_BYTES, { name: 'd.svg' }, { convert: false }).reason, 'mime_unsupported');
  });

  it("an instance's defaults apply to every method; a call's own options win", async () => {
    const gate = await mediagate.createGate({ provider: 'gemini', verify: 'full', downsample: false });
    // Every option the instance applies: the given ones over the component's (keepMetadata: false).
    assert.deepEqual(gate.defaults, { provider: 'gemini', verify: 'full', downsample: false, keepMetadata: false });
    const corrupt = await corruptPng();
    const wide = await widePng();
    for (const call of ['admit']) {
      assert.equal(gate[call](GIF_1X1, 'image/gif').reason, 'mime_unsupported', call);
      assert.equal(gate[call](GIF_1X1, 'image/gif', { provider: 'anthropic' }).ok, true, call);
      assert.equal(gate[call](GIF_1X1, 'image/gif', { provider: undefined }).reason, 'mime_unsupported', call);
      assert.equal(gate[call](corrupt, 'image/png').ok, false, call);
      assert.equal(gate[call](corrupt, 'image/png', { verify: 'header' }).ok, true, call);
      assert.equal(gate[call](wide, 'image/png').resized, false, call);
      assert.equal(gate[call](wide, 'image/png', { downsample: true }).resized, true, call);
    }
    const refused = gate.admitToolResult('capture', [gifBlock(), { type: 'image', data: b64(corrupt), mimeType: 'image/png' }]).refused;
    assert.deepEqual(
      refused.map((r) => [r.index, r.reason]),
      [
        [0, 'mime_unsupported'],
        [1, 'undecodable'],
      ],
    );
    assert.deepEqual(gate.admitToolResult('capture', [gifBlock()], { provider: 'anthropic' }).refused, []);
    // A document is judged by its own rules; the options still have to be valid.
    assert.equal(gate.admit(minimalPdf()).ok, true);
    assert.throws(() => gate.admit(minimalPdf(), 'application/pdf', { provider: 'acme' }), TypeError);
  });

  it('refuses bad and unknown options, per call and in createGate', async () => {
    const gate = await mediagate.createGate();
    const png = await widePng();
    for (const call of ['admit']) {
      assert.throws(() => gate[call](png, 'image/png', { verfy: 'full' }), /unknown option "verfy"/, call);
      assert.throws(() => gate[call](png, 'image/png', { provider: 'acme' }), /provider must be one of/, call);
    }
    assert.throws(() => gate.admitToolResult('t', [], { downsample: 'no' }), /downsample must be a boolean/);
    assert.throws(() => gate.admitToolResult('t', [], { profile: 'openai' }), /unknown option "profile"/);
    await assert.rejects(mediagate.admitToolResult('t', [], { verify: 'deep' }), /verify must be one of/);
    await assert.rejects(mediagate.createGate({ provider: 'acme' }), /provider must be one of/);
    await assert.rejects(mediagate.createGate({ wasmbase: '/x/' }), /unknown option "wasmbase"/);
    await assert.rejects(mediagate.createGate({ cache: 'no' }), /cache must be a boolean/);
    // The component has no output (it imports nothing), so there are no stdout/stderr sinks to give.
    await assert.rejects(mediagate.createGate({ stderr: console.error }), /unknown option "stderr"/);
    await assert.rejects(mediagate.createGate({ stdout: console.log }), /unknown option "stdout"/);
    await assert.rejects(mediagate.createGate({ getCoreModule: 1 }), /getCoreModule must be a function/);
    await assert.rejects(mediagate.createGate({ wasmUrls: {} }), /wasmUrls lacks mediagate\.core\.wasm/);
    await assert.rejects(mediagate.createGate({ wasmBase: '/a/', wasmUrls: {} }), /at most one of/);
    assert.throws(() => mediagate.configure({ verify: 'deep' }), /verify must be one of/);
  });
});

describe('loading options', () => {
  it('wasmBase: the core modules are read from there, and a wrong place fails with its path', async () => {
    const gate = await mediagate.createGate({ wasmBase: pathToFileURL(copiedCores() + '/'), cache: false });
    assert.equal(gate.admit(GIF_1X1, 'image/gif').ok, true);
    const empty = mkdtempSync(join(scratch, 'empty-'));
    await assert.rejects(mediagate.createGate({ wasmBase: pathToFileURL(empty) }), (e) => e.message.includes(empty));
  });

  it('wasmUrls: one URL per core module', async () => {
    const dir = copiedCores();
    const wasmUrls = Object.fromEntries(mediagate.CORE_MODULES.map((n) => [n, pathToFileURL(join(dir, n)).href]));
    const gate = await mediagate.createGate({ wasmUrls });
    assert.equal(gate.admit(GIF_1X1).sniffed, 'image/gif');
    wasmUrls['mediagate.core.wasm'] = pathToFileURL(join(dir, 'gone.wasm')).href;
    await assert.rejects(mediagate.createGate({ wasmUrls, cache: false }), /gone\.wasm/);
  });

  it('getCoreModule is asked for every core module; cache: false compiles afresh', async () => {
    const asked = [];
    const gate = await mediagate.createGate({
      getCoreModule: async (name) => {
        asked.push(name);
        const { readFile } = await import('node:fs/promises');
        return WebAssembly.compile(await readFile(join(GENERATED, name)));
      },
    });
    assert.deepEqual([...asked].sort(), [...mediagate.CORE_MODULES].sort());
    assert.equal(gate.admit(GIF_1X1, 'image/gif').ok, true);
    const fresh = await mediagate.createGate({ cache: false });
    assert.equal(fresh.admit(GIF_1X1, 'image/gif').ok, true);
  });
});

describe('module-level functions honour configure()', () => {
  after(() => mediagate.configure({}));

  it('every function applies the configured admission defaults', async () => {
    mediagate.configure({ provider: 'gemini', verify: 'full' });
    const corrupt = await corruptPng();
    assert.equal((await mediagate.admit(GIF_1X1, 'image/gif')).reason, 'mime_unsupported');
    assert.equal((await mediagate.admit(new Blob([GIF_1X1]), 'image/gif')).reason, 'mime_unsupported');
    assert.equal((await mediagate.admit(corrupt, 'image/png')).ok, false);
    assert.equal((await mediagate.admit(corrupt, 'image/png', { verify: 'header' })).ok, true);
    assert.deepEqual(
      (await mediagate.admitToolResult('t', [gifBlock()])).refused.map((r) => r.reason),
      ['mime_unsupported'],
    );
    assert.equal((await mediagate.admit(minimalPdf())).ok, true);
    assert.equal((await mediagate.admit(GIF_1X1)).sniffed, 'image/gif');
    assert.deepEqual((await mediagate.ready()).defaults, { ...mediagate.DEFAULT_OPTIONS, provider: 'gemini', verify: 'full' });
  });

  it('loading options too: a wrong wasmBase fails every call, naming the place; configure({}) restores', async () => {
    const empty = mkdtempSync(join(scratch, 'empty-'));
    mediagate.configure({ wasmBase: pathToFileURL(empty) });
    await assert.rejects(mediagate.admit(GIF_1X1, 'image/gif'), (e) => e.message.includes(empty));
    await assert.rejects(mediagate.admit(GIF_1X1), (e) => e.message.includes(empty));
    mediagate.ready({ wasmBase: pathToFileURL(copiedCores() + '/') });
    assert.equal((await mediagate.admit(GIF_1X1, 'image/gif')).ok, true);
    mediagate.configure({});
    assert.equal((await mediagate.admit(GIF_1X1, 'image/gif')).ok, true);
  });
});

// The package carries the components the CLI embeds (both built from guest/ by cargo, then
// transpiled by npm run build): a stale side fails here, in words, rather than as odd verdicts.
describe('the build', () => {
  const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
  const built = JSON.parse(readFileSync(join(GENERATED, 'BUILD.json'), 'utf8'));
  for (const [world, recorded] of [
    ['preflight', built],
    ['convert', built.convert],
  ]) {
    it(`dist/generated holds the ${world} component the CLI embeds`, async () => {
      assert.ok(recorded, `dist/generated/ has no ${world} component: cargo build, then npm run build`);
      const embedded = join(scratch, `cli-${world}.wasm`);
      const run = await runCli(['component', '--world', world, '--out', embedded]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        sha256(readFileSync(embedded)),
        recorded.componentSha256,
        `${run.bin} embeds another ${world} component than ${recorded.component}: rebuild the stale one ` +
          '(cargo build, then npm run build)',
      );
    });
  }
});
