// Slow uploads under each engine's documented line, with and without deploy/nginx.conf in front.
// A client that sends a body one byte every 4 s stays within the gate's 5 s idle timeout, so each
// such request holds an engine's instance (a jco Worker) until the gate's 120 s body deadline: the
// engine's bound on requests in flight is soon all held and /healthz waits. Through nginx, which
// reads a body whole before it opens the engine's request, the same clients hold nginx connections
// only, bounded per client address. Run by tests/http/test.sh (nginx from Debian's package).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CORPUS, IN_FLIGHT_BOUND, engineNames, startEngine, startProxy } from './engines.mjs';
import { trickle } from './rawhttp.mjs';

// A functional bound, far from both the ~40 s a held engine made /healthz wait and the tens of
// milliseconds it takes otherwise.
const PROMPT_MS = 10_000;
const EVERY_MS = 4_000;
const UPLOAD = 'POST /v1/admit HTTP/1.1\r\nContent-Type: image/png\r\nContent-Length: 1048576';
const PNG = readFileSync(join(CORPUS, 'pngsuite', 'basn2c08.png'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function timed(url, init = {}) {
  const t = Date.now();
  try {
    const r = await fetch(url, { ...init, signal: AbortSignal.timeout(PROMPT_MS) });
    const text = await r.text();
    return { status: r.status, json: JSON.parse(text), ms: Date.now() - t };
  } catch (e) {
    return { status: null, error: e.name, ms: Date.now() - t };
  }
}

const admitPng = (base) => timed(`${base}/v1/admit`, { method: 'POST', body: PNG, headers: { 'content-type': 'image/png' } });

/** A number the shipped config sets, read from it, so the test follows the file. */
function confNumber(conf, pattern) {
  const m = conf.match(pattern);
  assert.ok(m, `deploy/nginx.conf sets ${pattern}`);
  return Number(m[1]);
}

for (const name of engineNames()) {
  describe(`slow uploads under ${name}`, { concurrency: false }, () => {
    let engine;
    let proxy;
    before(async () => {
      engine = await startEngine(name);
      proxy = await startProxy(engine.url);
    });
    after(() => {
      proxy?.stop();
      engine?.stop();
    });

    test('through deploy/nginx.conf: the engine answers at once, a stalled body is ended (408), an address is held to its bound', async () => {
      const perAddress = confNumber(proxy.conf, /limit_conn per_address (\d+);/);
      const idleS = confNumber(proxy.conf, /client_body_timeout (\d+)s;/);
      assert.ok(idleS * 1000 > EVERY_MS, 'a byte every 4 s is within the proxy idle timeout, as within the gate');
      // More slow clients than the engine serves at once, one short of the address's bound so that
      // a real request from the same address still has its place.
      const slow = perAddress - 1;
      assert.ok(slow > IN_FLIGHT_BOUND[name], `${slow} slow clients outnumber ${name}'s ${IN_FLIGHT_BOUND[name]} in flight`);
      // Three bytes (0, 4, 8 s), then silence: past the idle timeout nginx ends each with 408.
      const lastByteMs = 2 * EVERY_MS;
      const stallAfterMs = lastByteMs + 500;
      const clients = Array.from({ length: slow }, () => trickle(proxy.url, UPLOAD, { everyMs: EVERY_MS, stallAfterMs }));
      try {
        await sleep(1000);
        const health = await timed(`${proxy.url}/healthz`);
        assert.equal(health.status, 200, `/healthz through nginx beside ${slow} slow uploads: ${JSON.stringify(health)}`);
        const admitted = await admitPng(proxy.url);
        assert.equal(admitted.status, 200, `POST /v1/admit through nginx beside ${slow} slow uploads: ${JSON.stringify(admitted)}`);
        assert.equal(admitted.json.ok, true);

        // One more fills the address's bound; the next request from it is refused at once.
        clients.push(trickle(proxy.url, UPLOAD, { everyMs: EVERY_MS, stallAfterMs }));
        await sleep(500);
        const refused = await admitPng(proxy.url);
        assert.equal(refused.status, 429, JSON.stringify(refused));
        assert.equal(refused.json.error.status, 429);
        assert.ok(refused.ms < PROMPT_MS);
        // The bound is per address and the health check is not counted.
        assert.equal((await timed(`${proxy.url}/healthz`)).status, 200);

        // nginx ends a stalled body by closing the connection, with no answer; its access log
        // records the 408.
        const answers = await Promise.all(clients.map((c) => c.answer));
        for (const a of answers) {
          assert.equal(a.status, null, JSON.stringify(a));
          assert.equal(a.error, 'closed without a response');
          // Not cut while it kept to the 4 s rhythm: only after it stopped, by the idle timeout.
          assert.ok(a.atMs >= lastByteMs + idleS * 1000 - 1000, `408 at ${a.atMs} ms`);
          assert.ok(a.atMs < lastByteMs + idleS * 1000 + PROMPT_MS, `408 at ${a.atMs} ms`);
        }
        const logged = proxy.accessLog().split('\n').filter((line) => line.includes('"POST /v1/admit HTTP/1.1" 408 '));
        assert.equal(logged.length, clients.length, proxy.accessLog());
        console.log(
          `${name}: ${slow} + 1 slow uploads through nginx; /healthz ${health.ms} ms, POST /v1/admit ${admitted.ms} ms; ` +
            `the next upload 429 in ${refused.ms} ms; closed (408) at ${Math.min(...answers.map((a) => a.atMs))}–${Math.max(...answers.map((a) => a.atMs))} ms`,
        );
      } finally {
        for (const c of clients) c.stop();
      }
    });

    test('without the proxy: slow uploads as many as the engine serves at once hold it, and /healthz waits', async () => {
      const held = IN_FLIGHT_BOUND[name];
      const clients = Array.from({ length: held }, () => trickle(engine.url, UPLOAD, { everyMs: EVERY_MS }));
      let health;
      try {
        await sleep(1000);
        health = await timed(`${engine.url}/healthz`);
      } finally {
        for (const c of clients) c.stop();
      }
      console.log(`${name}: ${held} slow uploads straight to the engine; /healthz ${JSON.stringify(health)}`);
      assert.notEqual(health.status, 200, `with ${held} slow uploads held, ${name} answered /healthz in ${health.ms} ms`);
      // Dropped, the slow clients free the engine (at the latest by the gate's 5 s idle timeout).
      const t = Date.now();
      for (;;) {
        const again = await timed(`${engine.url}/healthz`);
        if (again.status === 200) break;
        assert.ok(Date.now() - t < 60_000, `${name} did not answer /healthz again after the slow clients went`);
      }
    });
  });
}
