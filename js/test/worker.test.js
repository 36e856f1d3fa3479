// @mediagate/preflight/worker in Node (worker_threads): the same answers as the in-thread API, the
// createGate options carried across, errors that keep their type, and a clear failure when the
// Worker script or the core modules are not where they were said to be. The browser side (a module
// Worker in Chromium, through an esbuild bundle) is in package.test.js.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';

import * as inThread from '../src/index.js';
import * as inWorker from '../src/worker.js';
import { PKG_DIR, SVG_BYTES, minimalPdf } from './helpers.js';
import { GIF_1X1, b64, corruptPng, widePng } from './fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'mediagate-worker-'));
after(() => {
  inWorker.terminate();
  rmSync(scratch, { recursive: true, force: true });
});

describe('createWorkerGate (Node worker_threads)', () => {
  it('answers as the in-thread gate does, for every function', async () => {
    const worker = await inWorker.createWorkerGate();
    const gate = await inThread.createGate();
    try {
      const wide = await widePng();
      for (const [bytes, mime] of [
        [wide, 'image/png'],
        [SVG_BYTES, 'image/png'],
        [GIF_1X1, 'image/gif'],
        [minimalPdf(), 'application/pdf'],
      ]) {
        // The same verdict, its text, the type the bytes carry, the hint and the admitted bytes.
        const here = gate.admit(bytes, mime);
        for (const there of [await worker.admit(bytes, mime), await worker.admit(new Blob([bytes]), mime)]) {
          assert.deepEqual(there, here);
          assert.deepEqual(inThread.verdictParts(there), inThread.verdictParts(here));
        }
      }
      assert.equal((await worker.admit(wide)).json, gate.admit(wide).json);
      const { File } = await import('node:buffer');
      assert.equal((await worker.admit(new File([SVG_BYTES], 'diagram.png'))).reason, 'magic_mismatch', "a File's name crosses");
      assert.deepEqual((await worker.admit(wide, 'image/png')).bytes, gate.admit(wide, 'image/png').bytes);
      const content = [
        { type: 'text', text: 'x' },
        { type: 'image', data: b64(SVG_BYTES), mimeType: 'image/png' },
      ];
      assert.equal((await worker.admitToolResult('shot', content)).json, gate.admitToolResult('shot', content).json);
      assert.deepEqual(await worker.admitToolResult('shot', JSON.stringify(content)), gate.admitToolResult('shot', JSON.stringify(content)));
      const plain = { content: [{ type: 'text', text: 'no media' }] };
      const unchanged = await worker.admitToolResult('grep', plain);
      assert.deepEqual([unchanged.content, unchanged.changed], [plain, false]);
    } finally {
      worker.terminate();
    }
  });

  it('applies the createGate admission defaults it was given, and a call’s own options over them', async () => {
    const worker = await inWorker.createWorkerGate({ provider: 'gemini', verify: 'full', downsample: false });
    try {
      assert.equal((await worker.admit(GIF_1X1, 'image/gif')).reason, 'mime_unsupported');
      assert.equal((await worker.admit(GIF_1X1, 'image/gif', { provider: 'anthropic' })).ok, true);
      const corrupt = await corruptPng();
      assert.equal((await worker.admit(corrupt, 'image/png')).ok, false);
      assert.equal((await worker.admit(corrupt, 'image/png', { verify: 'header' })).ok, true);
      assert.equal((await worker.admit(await widePng(), 'image/png')).resized, false);
      const gif = { type: 'image', data: b64(GIF_1X1), mimeType: 'image/gif' };
      assert.deepEqual((await worker.admitToolResult('t', [gif])).refused.map((r) => r.reason), ['mime_unsupported']);
    } finally {
      worker.terminate();
    }
  });

  it('keeps error types across the thread: TypeError for bad input and options', async () => {
    const worker = await inWorker.createWorkerGate();
    try {
      await assert.rejects(worker.admit('not bytes', 'image/png'), TypeError);
      await assert.rejects(worker.admit(GIF_1X1, 'image/gif', { provider: 'acme' }), (e) => e instanceof TypeError && /provider must be one of/.test(e.message));
      await assert.rejects(worker.admit(GIF_1X1, 'image/gif', { verfy: 'full' }), /unknown option "verfy"/);
      await assert.rejects(worker.admitToolResult('t', undefined), TypeError);
      // The gate is still usable after refused arguments.
      assert.equal((await worker.admit(GIF_1X1, 'image/gif')).ok, true);
    } finally {
      worker.terminate();
    }
    await assert.rejects(worker.admit(GIF_1X1), /terminated/);
    assert.equal(worker.closed, true);
    await assert.rejects(inWorker.createWorkerGate({ wasmbase: '/x/' }), /unknown option "wasmbase"/);
    await assert.rejects(inWorker.createWorkerGate({ getCoreModule: () => null }), /getCoreModule cannot cross to a Worker/);
  });

  it('carries wasmBase to the Worker: copied core modules load, a wrong place fails naming it', async () => {
    const dir = mkdtempSync(join(scratch, 'cores-'));
    for (const name of inThread.CORE_MODULES) copyFileSync(join(PKG_DIR, 'dist', 'generated', name), join(dir, name));
    const worker = await inWorker.createWorkerGate({ wasmBase: pathToFileURL(dir + '/'), cache: false });
    assert.equal((await worker.admit(GIF_1X1, 'image/gif')).ok, true);
    worker.terminate();
    const empty = mkdtempSync(join(scratch, 'empty-'));
    await assert.rejects(inWorker.createWorkerGate({ wasmBase: pathToFileURL(empty) }), (e) => e.message.includes(empty));
  });

  it('fails clearly when the Worker script is not there', async () => {
    const missing = pathToFileURL(join(scratch, 'no-such-worker.js'));
    await assert.rejects(inWorker.createWorkerGate({ workerUrl: missing }), (e) => {
      assert.match(e.message, /gate Worker/);
      assert.ok(e.message.includes('no-such-worker.js'), e.message);
      assert.match(e.message, /workerUrl/);
      return true;
    });
  });
});

describe('module-level functions over the shared Worker', () => {
  after(() => inWorker.configure({}));

  it('admit, then honour configure() for every function', async () => {
    assert.equal((await inWorker.admit(GIF_1X1, 'image/gif')).ok, true);
    assert.equal((await inWorker.admit(SVG_BYTES, 'image/png')).reason, 'magic_mismatch');
    inWorker.configure({ provider: 'gemini' });
    assert.equal((await inWorker.admit(GIF_1X1, 'image/gif')).reason, 'mime_unsupported');
    assert.equal((await inWorker.admit(GIF_1X1, 'image/gif')).reason, 'mime_unsupported');
    assert.equal((await inWorker.admit(minimalPdf())).ok, true);
    const gif = { type: 'image', data: b64(GIF_1X1), mimeType: 'image/gif' };
    assert.deepEqual((await inWorker.admitToolResult('t', [gif])).refused.map((r) => r.reason), ['mime_unsupported']);
    assert.equal((await inWorker.admit(GIF_1X1)).sniffed, 'image/gif');
    assert.throws(() => inWorker.configure({ verify: 'deep' }), /verify must be one of/);
  });
});
