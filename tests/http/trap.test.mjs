// A request that traps the component ends that request only: the engine keeps serving, under both
// engines' documented lines. The trap is one no fix to the gate can take away: an instance that
// needs more memory than the engine allows it. Each engine is started with its documented line and
// the memory cap lowered (8 MiB: the 12 MP photo's fit from its planes peaks at 12.2 MiB) so that an ordinary 12 MP photo (tests/corpus/bench) runs
// the instance out of memory; a small image still fits, and is admitted before and after.
// Run by tests/http/test.sh (MEDIAGATE_BIN, MEDIAGATE_WASMTIME, MEDIAGATE_HTTP_GATE).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CORPUS, engineNames, runCli, startEngine } from './engines.mjs';

const LOW_MEMORY = 8 << 20;
const PHOTO = join(CORPUS, 'bench', 'photo-12mp.jpg');
const SMALL = join(CORPUS, 'photos', 'Transparency.png');

/** The answer; a connection the engine closed without one is status 0 (its way of ending a request). */
async function post(url, file, type) {
  try {
    const r = await fetch(`${url}/v1/admit`, {
      method: 'POST',
      body: readFileSync(file),
      headers: { 'content-type': type },
      signal: AbortSignal.timeout(120_000),
    });
    return { status: r.status, text: await r.text() };
  } catch (e) {
    if (e.name === 'TimeoutError') throw e;
    return { status: 0, text: `no answer: ${e.cause?.message ?? e.message}` };
  }
}
/** Not a verdict: the engine's own error status, or the connection closed. */
const stopped = (r) => r.status === 0 || r.status >= 500;

for (const name of engineNames()) {
  describe(`a trapping request under ${name}`, { concurrency: false }, () => {
    let engine;
    let cli;
    before(async () => {
      engine = await startEngine(name, { memoryBytes: LOW_MEMORY });
      cli = JSON.parse((await runCli(['admit', '--json', '--mime', 'image/png', SMALL])).stdout);
    });
    after(() => engine?.stop());

    const admitsSmall = async () => {
      const r = await post(engine.url, SMALL, 'image/png');
      assert.equal(r.status, 200, r.text);
      const { data, ...verdict } = JSON.parse(r.text);
      assert.ok(data);
      assert.deepEqual(verdict, cli);
    };

    test('ends that request only; the engine answers every later request', async () => {
      await admitsSmall();
      for (let i = 0; i < 3; i++) {
        const r = await post(engine.url, PHOTO, 'image/jpeg');
        // The engine's own error for a stopped instance, never a verdict.
        assert.ok(stopped(r), `the photo under ${LOW_MEMORY} bytes: ${r.status} ${r.text.slice(0, 200)}`);
        const h = await fetch(`${engine.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
        assert.equal(h.status, 200, `after trap ${i + 1}: ${engine.output()}`);
        await h.arrayBuffer();
        await admitsSmall();
      }
    });

    test('a trap among requests in flight ends only its own', async () => {
      const results = await Promise.all([
        post(engine.url, PHOTO, 'image/jpeg'),
        post(engine.url, SMALL, 'image/png'),
        post(engine.url, SMALL, 'image/png'),
        post(engine.url, PHOTO, 'image/jpeg'),
        post(engine.url, SMALL, 'image/png'),
      ]);
      assert.deepEqual(
        results.map(stopped),
        [true, false, false, true, false],
        results.map((r) => `${r.status} ${r.text.slice(0, 80)}`).join('\n'),
      );
      await admitsSmall();
    });
  });
}
