// The CLI's limits in JavaScript: a memory cap and a CPU deadline equal to the Rust host's, and
// whatever leaves an instance other than an answer (a trap, the wasm stack exhausted, the memory
// limit) drops that instance and is answered in the CLI's words. The bombs are made here: a PDF
// of about 1 KB whose page carries a 7000 × 7000 image compressed twice (Flate inside Flate).
// The Chromium side is in browser-limits.test.js.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import * as facts from '../src/facts.js';
import * as mediagate from '../src/index.js';
import * as inWorker from '../src/worker.js';
import { CORPUS, runCli } from './helpers.js';
import { flateBombPdf } from './bombs.js';

const scratch = mkdtempSync(join(tmpdir(), 'mediagate-limits-'));
after(() => {
  inWorker.terminate();
  rmSync(scratch, { recursive: true, force: true });
});

const PHOTO = readFileSync(join(CORPUS, 'bench', 'photo-12mp.jpg'));

/** The CLI's answer for page 1 of `bytes`: its JSON (a verdict, or `{error: {code, message}}`). */
async function cliPage(bytes, name) {
  const file = join(scratch, name);
  writeFileSync(file, bytes);
  const run = await runCli(['admit', file, '--page', '1', '--json']);
  return { code: run.code, text: run.stdout, json: JSON.parse(run.stdout), file };
}

describe('limits: the CLI’s, in Node', () => {
  it('are the Rust host’s: the memory limit and CPU deadline generated from lib/src/facts.rs', () => {
    // scripts/check-facts.sh holds src/facts.js to the Rust source; the package must export those.
    assert.equal(mediagate.MEMORY_LIMIT_BYTES, facts.MEMORY_LIMIT_BYTES);
    assert.equal(mediagate.CPU_DEADLINE_MS, facts.CPU_DEADLINE_MS);
    assert.deepEqual(mediagate.REFUSAL_REASONS, facts.REFUSAL_REASONS);
  });

  it('a PDF bomb gets the CLI’s verdict, in its words, and the next call answers', async () => {
    const bomb = flateBombPdf();
    const cli = await cliPage(bomb, 'bomb.pdf');
    const gate = await mediagate.createGate({ convert: true });
    let js;
    try {
      js = gate.admitPdfPage(bomb, 1);
    } catch (e) {
      js = e;
    }
    if (cli.json.error) {
      // The CLI stopped the call (out of memory at its limit): the same words, no verdict.
      assert.equal(cli.code, 2);
      assert.ok(js instanceof mediagate.GateError, `the CLI said ${cli.json.error.message}; JS answered ${JSON.stringify(js)}`);
      assert.equal(`${cli.file}: ${js.message.replace(/^admit: /, '')}`, cli.json.error.message);
      assert.equal(gate.trapped, true, 'the instance is dropped');
    } else {
      // The gate refuses it in words (a bound before the decoder): the same verdict, byte for byte.
      assert.equal(`${js.json}\n`, cli.text);
    }
    // The module-level functions answer with a fresh instance after it: the same answer again.
    const again = mediagate.admitPdfPage(bomb, 1);
    if (cli.json.error) {
      await assert.rejects(again, (e) => e.message === js.message);
    } else {
      assert.equal((await again).reason, cli.json.reason);
    }
    assert.equal((await mediagate.admit(PHOTO, 'image/jpeg')).ok, true);
  });

  it('a grow past the memory limit stops the call there, before the memory is taken', async () => {
    // Under the 12 MP photo's peak (12.2 MiB for its fit from the JPEG's planes, BENCHMARKS.md).
    const limit = 8 << 20;
    const gate = await mediagate.createGate({ memoryLimit: limit });
    assert.throws(
      () => gate.admit(PHOTO, 'image/jpeg'),
      (e) =>
        e instanceof mediagate.GateError &&
        e.kind === 'out_of_memory' &&
        e.message === 'admit: the guest ran out of memory (limit 8 MiB) and was stopped',
    );
    assert.equal(gate.trapped, true);
    assert.throws(() => gate.admit(PHOTO), /stopped earlier/);
    // The same image under the CLI's limit is admitted.
    assert.equal((await mediagate.createGate()).admit(PHOTO, 'image/jpeg').ok, true);
    assert.throws(() => mediagate.checkGateOptions({ memoryLimit: mediagate.MEMORY_LIMIT_BYTES + 65536 }), /memoryLimit/);
  });

  it('the wasm stack exhausted (V8: RangeError) is a trap: the instance is dropped', async () => {
    const gate = await mediagate.createGate();
    // Recurse until JavaScript's own stack runs out, then call the gate on the way back up, frame
    // by frame, until the call gets far enough to enter the gate: there the stack runs out inside it.
    let outcome = null;
    const dive = () => {
      try {
        dive();
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
      }
      if (outcome !== null) return;
      try {
        outcome = gate.admit(PHOTO, 'image/jpeg');
      } catch (e) {
        if (e instanceof mediagate.GateError || !(e instanceof RangeError)) outcome = e;
      }
    };
    dive();
    // The first call that entered the gate stopped in it (with so little stack left, it may be the
    // next call that reports it: the instance was marked first).
    assert.ok(outcome instanceof mediagate.GateError, `got ${outcome?.stack ?? JSON.stringify(outcome)}`);
    assert.equal(outcome.kind, 'trap');
    assert.throws(
      () => gate.admit(PHOTO),
      (e) =>
        e.kind === 'trap' &&
        e.message ===
          'the gate instance stopped earlier (the gate trapped: call stack exhausted (a fault in the gate, not a verdict on the input)); create a new one',
    );
    assert.equal(gate.trapped, true);
  });
});

describe('limits: the CPU deadline, in a Worker', () => {
  it('is the CLI’s by default and cannot be raised', async () => {
    assert.equal(inWorker.CPU_DEADLINE_MS, mediagate.CPU_DEADLINE_MS);
    await assert.rejects(inWorker.createWorkerGate({ deadlineMs: mediagate.CPU_DEADLINE_MS + 1 }), /deadlineMs/);
  });

  it('a call past the deadline ends the Worker and is answered in the CLI’s words; a new Worker answers after', async () => {
    const worker = await inWorker.createWorkerGate({ deadlineMs: 50 });
    await worker.admit(PHOTO.subarray(0, 16)); // loaded: the deadline counts the call, not the load
    const started = Date.now();
    await assert.rejects(
      worker.admit(PHOTO, 'image/jpeg'),
      (e) =>
        e instanceof mediagate.GateError &&
        e.kind === 'deadline' &&
        e.message === 'admit: the guest exceeded its CPU deadline of 50ms and was interrupted',
    );
    assert.ok(Date.now() - started < 5000, 'the call did not run to its end');
    assert.equal(worker.closed, true);
    await assert.rejects(worker.admit(PHOTO), /ended when a call ran past its deadline/);
    inWorker.configure({ deadlineMs: 50 });
    await assert.rejects(inWorker.admit(PHOTO, 'image/jpeg'), { kind: 'deadline' });
    inWorker.configure({});
    assert.equal((await inWorker.admit(PHOTO, 'image/jpeg')).ok, true, 'the shared Worker was replaced');
  });

  it('a PDF bomb in the Worker gets the in-thread answer (the memory cap crosses)', async () => {
    const bomb = flateBombPdf();
    const cli = await cliPage(bomb, 'bomb-worker.pdf');
    const worker = await inWorker.createWorkerGate();
    try {
      const answer = await worker.admitPdfPage(bomb, 1).then(
        (v) => v,
        (e) => e,
      );
      if (cli.json.error) {
        assert.equal(answer.name, 'GateError');
        assert.equal(answer.kind, 'out_of_memory');
        assert.equal(`${cli.file}: ${answer.message.replace(/^admit: /, '')}`, cli.json.error.message);
      } else {
        assert.equal(`${answer.json}\n`, cli.text);
      }
      assert.equal((await worker.admit(PHOTO, 'image/jpeg')).ok, true, 'the Worker made a new instance');
    } finally {
      worker.terminate();
    }
  });
});
