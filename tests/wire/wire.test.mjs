// At the wire, differentially: every body of bodies.mjs through every front end that takes a raw
// request body, and what reaches a provider on 127.0.0.1 compared byte for byte with what the CLI
// (`mediagate admit-request`, the reference) prints. The gate is one component in all of them, so
// any difference is a host's doing: a re-serialisation, a lost change, a body sent unjudged.
//   cli      `mediagate admit-request --api DIALECT` (a Responses body inside the guest's envelope)
//   http     the http-gate component under `wasmtime serve`, `POST /v1/admit-request?api=`
//   fetch    gatedFetch (js/src/fetch.js) in this process, posting to the provider
//   python   the Python transport (GateTransport on an httpx.Client, send.py), posting to it
// tests/wire/test.sh sets the environment: MEDIAGATE_BIN, MEDIAGATE_WASMTIME, MEDIAGATE_HTTP_GATE,
// MEDIAGATE_WIRE_PYTHON (with PYTHONPATH and MEDIAGATE_AGENT_TOOL_WASM for it).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { REQUEST_ENDPOINTS, RESPONSES_ENVELOPE } from '../../js/src/facts.js';
import { gatedFetch } from '../../js/src/fetch.js';
import { imageSize, startProvider } from '../../js/test/provider-server.js';
import { startEngine } from '../http/engines.mjs';
import { makeBodies } from './bodies.mjs';
import { REPO_ROOT, runCli } from './cli.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.MEDIAGATE_WIRE_PYTHON ?? join(REPO_ROOT, 'tests', 'wire', '.venv', 'bin', 'python');
/** The largest side an image may arrive with: the gate fits anything larger (README). */
const MAX_SIDE = 2000;
const FRONTS = ['http', 'fetch', 'python'];

const bodies = (await makeBodies()).map((b, i) => ({ ...b, key: `w${String(i).padStart(2, '0')}` }));

// ---------------------------------------------------------------------------------------------
// Reading what each front end answered

/** The end (exclusive) of the JSON value starting at `i` of `text` (well-formed JSON assumed). */
function valueEnd(text, i) {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') {
      for (j++; text[j] !== '"'; j++) if (text[j] === '\\') j++;
      if (depth === 0) return j + 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
      if (depth < 0) return j;
    } else if (depth === 0 && (c === ',' || c === '}' || c === ']')) return j;
  }
  return text.length;
}

/**
 * The text of a report's `request` member as the component wrote it (the report carries the request
 * inline, unparsed: parsing and writing it again would lose what this suite checks).
 */
function rawRequest(reportText) {
  const head = /^\{"api":"[a-z-]+","request":/.exec(reportText);
  if (!head) throw new Error(`a report that does not start with api and request: ${reportText.slice(0, 120)}`);
  const start = head[0].length;
  const end = valueEnd(reportText, start);
  assert.equal(reportText.slice(end, end + 11), ',"changed":', 'the report goes on with `changed` after the request');
  return reportText.slice(start, end);
}

const { prefix: PREFIX, suffix: SUFFIX } = RESPONSES_ENVELOPE;
/** What a front end hands to the gate, and the gate's API: a Responses body goes in the envelope. */
const asGateSees = (body) => (body.dialect === 'responses' ? ['openai', PREFIX + body.text + SUFFIX] : [body.dialect, body.text]);
/** The body to send, out of what the gate wrote for it. */
function outOfEnvelope(body, written) {
  if (body.dialect !== 'responses') return written;
  assert.ok(written.startsWith(PREFIX) && written.endsWith(SUFFIX), 'the admitted Responses body is inside the envelope');
  return written.slice(PREFIX.length, written.length - SUFFIX.length);
}

/** Whether `path` ends as an endpoint `pattern` of the list says (`*`: one path segment). */
function matches(pattern, path) {
  const ending = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`${ending}$`).test(path);
}

/** The dialect the generated endpoint list gives a path, null when it lists none. */
function listedDialect(path) {
  return REQUEST_ENDPOINTS.find(([pattern]) => matches(pattern, path))?.[1] ?? null;
}

async function pool(items, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Running every body through every front end, once

const work = mkdtempSync(join(tmpdir(), 'mediagate-wire-'));
const results = new Map(bodies.map((b) => [b.key, { arrived: {} }]));
let provider;
let engine;

async function throughCli(body) {
  const [api, text] = asGateSees(body);
  const file = join(work, `${body.key}.gate.json`);
  writeFileSync(file, text);
  const [plain, json] = await Promise.all([runCli(['admit-request', '--api', api, file]), runCli(['admit-request', '--api', api, '--json', file])]);
  results.get(body.key).cli = { plain, json };
}

async function throughHttp(body) {
  const [api, text] = asGateSees(body);
  const r = await fetch(`${engine.url}/v1/admit-request?api=${encodeURIComponent(api)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
  });
  results.get(body.key).http = { status: r.status, text: await r.text() };
}

const send = gatedFetch();
async function throughFetch(body) {
  const r = await send(provider.url + body.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-wire-case': body.key, 'x-wire-front': 'fetch' },
    body: body.text,
  });
  results.get(body.key).fetch = { status: r.status, refused: r.headers.get('mediagate-refused'), text: await r.text() };
}

async function throughPython() {
  const manifest = join(work, 'manifest.json');
  writeFileSync(
    manifest,
    JSON.stringify({ provider: provider.url, bodies: bodies.map((b) => ({ id: b.key, path: b.path, file: join(work, `${b.key}.body.json`) })) }),
  );
  const child = spawn(PYTHON, [join(HERE, 'send.py'), manifest], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.once('close', r));
  if (code !== 0) throw new Error(`send.py exited ${code}: ${err}`);
  for (const line of out.split('\n').filter(Boolean)) {
    const outcome = JSON.parse(line);
    results.get(outcome.id).python = outcome;
  }
}

before(async () => {
  for (const b of bodies) writeFileSync(join(work, `${b.key}.body.json`), b.text);
  provider = await startProvider();
  engine = await startEngine('wasmtime');
  const started = Date.now();
  // A front end that throws on one body fails that body's test, not the others'.
  const each = (front, through) => async (body) => {
    try {
      await through(body);
    } catch (e) {
      results.get(body.key)[front] = { error: e.stack ?? String(e) };
    }
  };
  await Promise.all([
    pool(bodies, 2, each('cli', throughCli)),
    pool(bodies, 1, each('http', throughHttp)),
    pool(bodies, 1, each('fetch', throughFetch)),
    throughPython(),
  ]);
  for (const record of provider.records) {
    const front = record.headers['x-wire-front'];
    const result = results.get(record.headers['x-wire-case']);
    assert.ok(result, `the provider got a request no body sent: ${record.path}`);
    assert.equal(result.arrived[front], undefined, `${front} sent ${record.headers['x-wire-case']} twice`);
    result.arrived[front] = record;
  }
  console.log(`${bodies.length} bodies through cli, ${FRONTS.join(', ')} in ${Date.now() - started} ms`);
});

after(async () => {
  engine?.stop();
  await provider?.close();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// What must hold of what arrives

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function assertSameBytes(front, got, want) {
  if (want === null || got === null) {
    assert.equal(got === null ? 'nothing' : `${got.length} bytes`, want === null ? 'nothing' : `${want.length} bytes`, `${front}: what arrived`);
    return;
  }
  if (!got.equals(want)) {
    const at = firstDifference(got, want);
    assert.fail(
      `${front}: ${got.length} bytes arrived, the CLI wrote ${want.length}; first difference at byte ${at}: ` +
        `${JSON.stringify(got.subarray(Math.max(0, at - 40), at + 40).toString())} vs ${JSON.stringify(want.subarray(Math.max(0, at - 40), at + 40).toString())}`,
    );
  }
}

/** Every string value in a parsed body, with its JSON Pointer. */
function* strings(value, path = '') {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${path}/${i}`);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* strings(v, `${path}/${k}`);
}

/** The bytes a string carries when it is a base64 data: URL or bare base64 (at least 16 characters). */
function payloadOf(s) {
  const data = /^data:[^,]*;base64,(.*)$/s.exec(s);
  if (data) return Buffer.from(data[1], 'base64');
  if (s.length >= 16 && /^[A-Za-z0-9+/]+={0,2}$/.test(s)) return Buffer.from(s, 'base64');
  return null;
}

function assertNothingRefusedArrives(body, bytes) {
  const parsed = JSON.parse(bytes.toString('utf8'));
  for (const [path, s] of strings(parsed)) {
    const payload = payloadOf(s);
    if (!payload) continue;
    const head = payload.subarray(0, 256).toString('latin1').trimStart();
    assert.ok(!/^(<\?xml|<svg|<!DOCTYPE svg)/i.test(head), `an SVG arrives at ${path}`);
    for (const bad of body.bad) assert.ok(!payload.equals(Buffer.from(bad)), `a payload the gate must not pass arrives as it was at ${path}`);
    let size = null;
    try {
      size = imageSize(payload);
    } catch {}
    if (size) assert.ok(Math.max(size.width, size.height) <= MAX_SIDE, `a ${size.width}x${size.height} ${size.type} arrives at ${path}`);
  }
}

describe('the endpoint list', () => {
  test('gives each body path the dialect its body is written in', () => {
    const wrong = bodies
      .map((b) => [b.path, b.dialect, listedDialect(b.path)])
      .filter(([, want, got]) => want !== got)
      .map(([path, want, got]) => `${path}: ${got ?? 'not listed'}, the body is ${want}`);
    assert.deepEqual(wrong, []);
  });
  test('has every endpoint exercised by a body', () => {
    const unused = REQUEST_ENDPOINTS.filter(([pattern]) => !bodies.some((b) => matches(pattern, b.path)));
    assert.deepEqual(unused, []);
  });
});

describe('at the wire, every front end sends what the CLI writes', () => {
  for (const body of bodies) {
    test(`${body.key} ${body.id} (${body.dialect}, ${body.path})`, () => {
      const r = results.get(body.key);
      for (const front of ['cli', ...FRONTS]) {
        assert.ok(r[front], `${front}: no outcome (send.py ended early?)`);
        assert.equal(r[front].error, undefined, `${front} threw: ${r[front].error}`);
      }
      const { plain, json } = r.cli;
      assert.ok([0, 1, 2].includes(json.code), `the CLI exited ${json.code}: ${json.stderr}`);
      const reportText = json.stdout.toString('utf8');
      const report = /^\{"api":/.test(reportText) ? JSON.parse(reportText) : null;
      assert.ok(report, `the CLI wrote no report (exit ${json.code}): ${reportText.trim()} ${json.stderr.trim()}`);
      // The reference: what the CLI writes, or nothing when it refuses the request whole.
      let want = null;
      if (report.refusal === null) {
        assert.equal(plain.code, json.code, 'admit-request exits alike with and without --json');
        assert.equal(plain.stdout.toString('utf8'), rawRequest(reportText), 'the CLI prints the request its report carries');
        want = Buffer.from(outOfEnvelope(body, plain.stdout.toString('utf8')));
      } else {
        assert.equal(plain.stdout.length, 0, 'a request refused whole: the CLI prints none');
      }

      // The HTTP gate answers the CLI's report.
      if (report.refusal === null) {
        assert.equal(r.http.status, 200, `http: ${r.http.text.slice(0, 300)}`);
        const httpReport = JSON.parse(r.http.text);
        assert.deepEqual([httpReport.changed, httpReport.refused], [report.changed, report.refused], 'http: the changes the CLI reports');
        assertSameBytes('http', Buffer.from(outOfEnvelope(body, rawRequest(r.http.text))), want);
      } else {
        // A body that is no request of the API is a bad request (400); one refused whole, 422.
        const answer = JSON.parse(r.http.text);
        if (report.refusal.unusable) {
          assert.equal(r.http.status, 400, `http: not a request of the API: ${r.http.text.slice(0, 300)}`);
          assert.ok(answer.error.message.endsWith(report.refusal.message), `http: the CLI's words: ${answer.error.message}`);
        } else {
          assert.equal(r.http.status, 422, `http: a request refused whole: ${r.http.text.slice(0, 300)}`);
          assert.deepEqual(answer.refusal, report.refusal);
        }
      }

      // gatedFetch and the Python transport: what reached the provider.
      for (const front of ['fetch', 'python']) {
        const record = r.arrived[front];
        assertSameBytes(front, record ? record.body : null, want);
        if (record) assert.equal(record.path, body.path, `${front}: the path`);
      }
      if (want === null) {
        assert.equal(r.fetch.status, 400, 'fetch: a refused request is answered 400 in the provider\'s shape');
        assert.equal(r.fetch.refused, 'true');
        assert.equal(r.python.outcome, 'refused', `python: ${JSON.stringify(r.python)}`);
      } else {
        assert.equal(r.fetch.status, 200);
        assert.equal(r.python.outcome, 'sent', `python: ${JSON.stringify(r.python)}`);
      }

      // What the body itself asks of the gate.
      const { expect } = body;
      if (expect.whole) assert.equal(want, null, 'the request is refused whole');
      else assert.notEqual(want, null, `the request was refused whole: ${JSON.stringify(report.refusal)}`);
      if (expect.identical) assertSameBytes('the body itself', want, Buffer.from(body.text));
      if (expect.changed) assert.ok(!want.equals(Buffer.from(body.text)), 'the gate changed the body');
      assert.equal(report.refused.length, expect.refused ?? 0, `refused blocks: ${JSON.stringify(report.refused)}`);
      if (want !== null) {
        assertNothingRefusedArrives(body, want);
        for (const k of body.keep) assert.ok(want.includes(JSON.stringify(k)), 'a string that must arrive as it was sent');
      }
      if (!expect.changed && !expect.refused && !expect.whole) {
        // Media the gate admits as they are: nothing to change, so the body arrives byte for byte.
        assertSameBytes('the body itself', want, Buffer.from(body.text));
      }
    });
  }
});
