// The http-gate component's behaviour under each engine (wasmtime serve, jco serve): every route
// and status, bodies over the cap (declared and streamed), a body that never ends, malformed JSON,
// wrong methods, /v1/contract, and verdict parity with `mediagate admit --json` on corpus images.
// Run by tests/http/test.sh, which sets MEDIAGATE_BIN, MEDIAGATE_WASMTIME and MEDIAGATE_HTTP_GATE.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CORPUS, JCO, componentPath, engineNames, runCli, startEngine } from './engines.mjs';
import { chunks, rawRequest } from './rawhttp.mjs';

const RAW_CAP = 5 * 1024 * 1024;
const RAW_CAP_DOWNSAMPLE = 64 * 1024 * 1024;
const JSON_CAP = 48 * 1024 * 1024;

/** Every request is bounded in time. */
async function call(url, path, { method = 'POST', body, type, timeoutMs = 60_000 } = {}) {
  const headers = type ? { 'content-type': type } : {};
  const r = await fetch(url + path, { method, body, headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, text, json };
}

function assertError(r, status) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json?.error?.status, status, `error object: ${r.text}`);
  assert.equal(typeof r.json.error.message, 'string');
  assert.ok(r.json.error.message.length > 0);
}

const MIME = {
  png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', pdf: 'application/pdf',
  tif: 'image/tiff', bmp: 'image/bmp', ico: 'image/vnd.microsoft.icon',
};
const mimeOf = (file) => MIME[file.split('.').pop().toLowerCase()];

/** Images with GPS EXIF, a camera and a comment: the canonical form drops them unless kept. */
const METADATA_FILES = ['gps-exif.jpg', 'gps-exif.png'].map((f) => join(CORPUS, 'metadata', f));

/** Corpus images for parity: admitted (PNG kinds, photos, a rotated JPEG, metadata dropped),
 * refused (corrupt PngSuite). */
export function parityFiles() {
  const png = readdirSync(join(CORPUS, 'pngsuite'))
    .filter((f) => f.endsWith('.png'))
    .filter((f, i) => f.startsWith('x') || i % 6 === 0)
    .map((f) => join(CORPUS, 'pngsuite', f));
  const photos = readdirSync(join(CORPUS, 'photos')).map((f) => join(CORPUS, 'photos', f));
  return [...png, ...photos, join(CORPUS, 'bench', 'photo-exif-rotated.jpg'), ...METADATA_FILES];
}

/** The conformance files every host's parity test runs (tests/corpus/conformance/parity.txt). */
export function conformanceParityFiles() {
  return readFileSync(join(CORPUS, 'conformance', 'parity.txt'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => join(CORPUS, 'conformance', line.trim()));
}

/** The CLI's verdict for `file` claimed as `mime`: its JSON object and the admitted bytes. */
export async function cliVerdict(file, mime, dir, args = []) {
  const out = join(dir, 'admitted');
  rmSync(out, { force: true });
  const r = await runCli(['admit', '--json', '--mime', mime, '--out', out, ...args, file]);
  const verdict = JSON.parse(r.stdout);
  return { verdict, bytes: verdict.ok ? readFileSync(out) : null };
}

/** The HTTP answer in the CLI's terms: the verdict object without `data`, and `data` decoded. */
export function splitAnswer(json) {
  const { data, ...verdict } = json;
  return { verdict, bytes: data === undefined ? null : Buffer.from(data, 'base64') };
}

// `include wasi:http/proxy` and nothing else: the component may import only what proxy declares.
const PROXY_IMPORTS = new Set([
  'wasi:io/poll', 'wasi:clocks/monotonic-clock', 'wasi:clocks/wall-clock', 'wasi:random/random',
  'wasi:io/error', 'wasi:io/streams', 'wasi:cli/stdout', 'wasi:cli/stderr', 'wasi:cli/stdin',
  'wasi:http/types', 'wasi:http/outgoing-handler',
]);

test('the component imports only what wasi:http/proxy declares, and exports the handler', async () => {
  const { execFileSync } = await import('node:child_process');
  const wit = execFileSync(process.execPath, [JCO, 'wit', componentPath()], { encoding: 'utf8' });
  const imports = [...wit.matchAll(/^\s*import ([^;]+);/gm)].map((m) => m[1].split('@')[0]);
  const exports = [...wit.matchAll(/^\s*export ([^;]+);/gm)].map((m) => m[1].split('@')[0]);
  assert.ok(imports.length > 0, wit);
  for (const i of imports) assert.ok(PROXY_IMPORTS.has(i), `${i} is not one of wasi:http/proxy's imports:\n${wit}`);
  assert.ok(!imports.includes('wasi:http/outgoing-handler'), 'the gate makes no outgoing request');
  assert.deepEqual(exports, ['wasi:http/incoming-handler']);
});

for (const name of engineNames()) {
  describe(`http-gate under ${name}`, { concurrency: false }, () => {
    let engine;
    before(async () => {
      engine = await startEngine(name);
    });
    after(() => engine?.stop());

    test('GET /healthz and /v1/contract', async () => {
      const h = await call(engine.url, '/healthz', { method: 'GET' });
      assert.equal(h.status, 200);
      assert.equal(h.headers.get('content-type'), 'application/json');
      assert.deepEqual(h.json, { status: 'ok' });
      const c = await call(engine.url, '/v1/contract', { method: 'GET' });
      assert.equal(c.status, 200);
      assert.equal(c.json.contract, 'mediagate:gate@0.3.0');
      assert.equal(c.json.world, 'http-gate');
      assert.deepEqual(c.json.defaults, { profile: 'anthropic', downsample: true, verify: 'full' });
      assert.equal(c.json.limits.admit_image_bytes, RAW_CAP_DOWNSAMPLE);
      assert.equal(c.json.limits.admit_image_bytes_without_downsample, RAW_CAP);
      assert.equal(c.json.limits.admit_document_bytes, 20 * 1024 * 1024);
      assert.equal(c.json.limits.admit_tool_result_bytes, JSON_CAP);
      assert.equal(c.json.limits.admit_request_bytes, JSON_CAP);
      assert.ok(c.json.limits.body_idle_timeout_ms > 0);
      assert.ok(c.json.routes.length === 5);
    });

    test('unknown paths are 404, wrong methods 405 with Allow', async () => {
      assertError(await call(engine.url, '/v2/admit', { method: 'GET' }), 404);
      const r = await call(engine.url, '/v1/admit', { method: 'GET' });
      assertError(r, 405);
      assert.equal(r.headers.get('allow'), 'POST');
      const d = await call(engine.url, '/healthz', { method: 'DELETE' });
      assertError(d, 405);
      assert.equal(d.headers.get('allow'), 'GET');
      assertError(await call(engine.url, '/v1/admit-request?api=openai', { method: 'PUT', body: '{}' }), 405);
    });

    test('bad query values are 400', async () => {
      const png = readFileSync(join(CORPUS, 'pngsuite', 'basn2c08.png'));
      for (const q of ['profile=nobody', 'downsample=maybe', 'verify=deep', 'convert=webp', 'profile=openai&profile=gemini']) {
        assertError(await call(engine.url, `/v1/admit?${q}`, { body: png, type: 'image/png' }), 400);
      }
      const json = 'application/json';
      assertError(await call(engine.url, '/v1/admit-request?api=gemini', { body: '{}', type: json }), 400);
      assertError(await call(engine.url, '/v1/admit-tool-result', { body: '[]', type: json }), 400);
    });

    test('POST /v1/admit: 200 with the verdict and the bytes, 422 refused, 415 unclaimable', async () => {
      const file = join(CORPUS, 'photos', 'kodim23.png');
      const png = readFileSync(file);
      const ok = await call(engine.url, '/v1/admit?profile=openai&verify=header', { body: png, type: 'image/png' });
      assert.equal(ok.status, 200, ok.text);
      // The canonical form: kodim23's tEXt chunk left out, and said so; kept with keep_metadata=1.
      assert.deepEqual([ok.json.ok, ok.json.dropped], [true, ['text']]);
      assert.equal(Buffer.from(ok.json.data, 'base64').length, png.length - 32);
      const kept = await call(engine.url, '/v1/admit?profile=openai&verify=header&keep_metadata=1', { body: png, type: 'image/png' });
      assert.deepEqual(Buffer.from(kept.json.data, 'base64'), png);
      // No Content-Type: the bytes' own type, as the CLI sniffs.
      const sniffed = await call(engine.url, '/v1/admit', { body: png });
      assert.equal(sniffed.json.mime, 'image/png');
      const refused = await call(engine.url, '/v1/admit', { body: png, type: 'image/jpeg' });
      assert.equal(refused.status, 422);
      assert.equal(refused.json.reason, 'magic_mismatch');
      assert.equal(refused.json.data, undefined);
      assertError(await call(engine.url, '/v1/admit', { body: png, type: 'text/plain' }), 415);
      assertError(await call(engine.url, '/v1/admit', { body: 'hello, plain text' }), 415);
    });

    test('POST /v1/admit-tool-result and /v1/admit-request answer as the CLI', async () => {
      const result = '[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},{"type":"text","text":"x"}]';
      const r = await call(engine.url, '/v1/admit-tool-result?tool=read_file', { body: result, type: 'application/json' });
      assert.equal(r.status, 200, r.text);
      const cli = await runCliStdin(['admit-tool-result', '--tool', 'read_file'], result);
      assert.deepEqual(r.json, JSON.parse(cli));
      const request = JSON.stringify({
        model: 'm',
        max_tokens: 8,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'aGVsbG8=' } }] }],
      });
      const q = await call(engine.url, '/v1/admit-request?api=anthropic', { body: request, type: 'application/json' });
      assert.equal(q.status, 200, q.text);
      const cliRequest = await runCliStdin(['admit-request', '--api', 'anthropic', '--json'], request);
      assert.deepEqual(q.json, JSON.parse(cliRequest));
      assert.equal(q.json.refused.length, 1);
    });

    test('a Content-Encoding the gate does not decode is 415; identity passes', async () => {
      const { gzipSync } = await import('node:zlib');
      const png = readFileSync(join(CORPUS, 'pngsuite', 'basn2c08.png'));
      const post = (path, body, type, encoding) =>
        fetch(engine.url + path, {
          method: 'POST',
          body,
          headers: { 'content-type': type, 'content-encoding': encoding },
          signal: AbortSignal.timeout(60_000),
        }).then(async (r) => ({ status: r.status, text: await r.text() }));
      // A gzip-compressed PNG, and a raw PNG labelled gzip: neither is judged as something it is not.
      for (const [body, encoding] of [[gzipSync(png), 'gzip'], [png, 'gzip'], [png, 'br'], [png, 'identity, gzip']]) {
        const r = await post('/v1/admit', body, 'image/png', encoding);
        assert.equal(r.status, 415, `${encoding}: ${r.text}`);
        assert.match(JSON.parse(r.text).error.message, /Content-Encoding/);
      }
      assert.equal((await post('/v1/admit-tool-result?tool=t', gzipSync('[]'), 'application/json', 'gzip')).status, 415);
      assert.equal((await post('/v1/admit-request?api=openai', '{}', 'application/json', 'deflate')).status, 415);
      assert.equal((await post('/v1/admit', png, 'image/png', 'identity')).status, 200);
    });

    test('repeated keys and disguised data: URLs in a tool result are refused in their slots', async () => {
      const b64 = (b) => Buffer.from(b).toString('base64');
      const png = b64(readFileSync(join(CORPUS, 'pngsuite', 'basn2c08.png')));
      const svg = b64('<svg xmlns="http://www.w3.org/2000/svg"/>');
      const body = `[{"type":"image_url","image_url":{"url":"data:image/png;base64,${png}","url":"data:image/png;base64,${svg}"}},` +
        `{"type":"image_url","image_url":{"url":"\\u0000 Da\\tta:image/png;base64,${svg}"}}]`;
      const r = await call(engine.url, '/v1/admit-tool-result?tool=t', { body, type: 'application/json' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.refused.map((x) => x.reason), ['undecodable', 'magic_mismatch']);
      assert.ok(!r.text.includes(svg));
    });

    test('malformed JSON is 400 on both JSON routes; a non-JSON type 415', async () => {
      for (const path of ['/v1/admit-tool-result?tool=t', '/v1/admit-request?api=openai']) {
        assertError(await call(engine.url, path, { body: '{"messages": [', type: 'application/json' }), 400);
        assertError(await call(engine.url, path, { body: '[]', type: 'text/html' }), 415);
      }
    });

    test('a declared Content-Length over the cap is 413 before the body is read', async () => {
      const head = `POST /v1/admit HTTP/1.1\r\nContent-Type: image/png\r\nContent-Length: ${RAW_CAP_DOWNSAMPLE + 1}`;
      const r = await rawRequest(engine.url, head, { body: [Buffer.alloc(1024)], end: false });
      assert.equal(r.status, 413, r.text);
      assert.equal(r.json.error.status, 413);
      const j = `POST /v1/admit-request?api=openai HTTP/1.1\r\nContent-Length: ${JSON_CAP + 1}`;
      assert.equal((await rawRequest(engine.url, j, { body: [Buffer.from('{')], end: false })).status, 413);
    });

    test('a streamed (chunked) body past the cap is 413 once it passes', async () => {
      const head = 'POST /v1/admit?downsample=false HTTP/1.1\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked';
      const r = await rawRequest(engine.url, head, { body: chunks(RAW_CAP + 256 * 1024), end: false });
      assert.equal(r.status, 413, r.text);
      assert.equal(r.json.error.status, 413);
    });

    test('a chunked body that never ends is 408 after the idle deadline, not a hang', async () => {
      const head = 'POST /v1/admit HTTP/1.1\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked';
      const r = await rawRequest(engine.url, head, { body: chunks(16), end: false, timeoutMs: 60_000 });
      assert.equal(r.status, 408, r.text);
      assert.equal(r.json.error.status, 408);
      // The engine still serves.
      assert.equal((await call(engine.url, '/healthz', { method: 'GET' })).status, 200);
    });

    test('verdicts equal `mediagate admit --json` for corpus images', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mediagate-http-'));
      try {
        const files = parityFiles();
        assert.ok(files.length > 30);
        let refused = 0;
        for (const file of files) {
          const mime = mimeOf(file);
          const cli = await cliVerdict(file, mime, dir);
          const r = await call(engine.url, '/v1/admit', { body: readFileSync(file), type: mime });
          assert.equal(r.status, cli.verdict.ok ? 200 : 422, `${file}: ${r.text.slice(0, 300)}`);
          const http = splitAnswer(r.json);
          assert.deepEqual(http.verdict, cli.verdict, file);
          assert.deepEqual(http.bytes, cli.bytes, `${file}: admitted bytes`);
          if (!cli.verdict.ok) refused++;
        }
        assert.ok(refused > 5, `some corpus files are refused (${refused})`);
        // The conformance files with conversion on (convert=1 is --convert): the same canonical
        // re-mux or conversion, byte for byte.
        for (const file of conformanceParityFiles()) {
          const mime = mimeOf(file);
          const cli = await cliVerdict(file, mime, dir, ['--convert']);
          assert.ok(cli.verdict.ok, `${file}: admitted by the CLI: ${JSON.stringify(cli.verdict)}`);
          const r = await call(engine.url, '/v1/admit?convert=1', { body: readFileSync(file), type: mime });
          assert.equal(r.status, 200, `${file}: ${r.text.slice(0, 300)}`);
          const http = splitAnswer(r.json);
          assert.deepEqual(http.verdict, cli.verdict, file);
          assert.deepEqual(http.bytes, cli.bytes, `${file}: admitted bytes`);
        }
        // keep_metadata=1 is --keep-metadata: the input as given.
        for (const file of METADATA_FILES) {
          const mime = mimeOf(file);
          const cli = await cliVerdict(file, mime, dir, ['--keep-metadata']);
          const r = await call(engine.url, '/v1/admit?keep_metadata=1', { body: readFileSync(file), type: mime });
          assert.equal(r.status, 200, `${file}: ${r.text.slice(0, 300)}`);
          const http = splitAnswer(r.json);
          assert.deepEqual(http.verdict, cli.verdict, file);
          assert.deepEqual(http.bytes, readFileSync(file), `${file}: kept as given`);
          assert.deepEqual(cli.bytes, readFileSync(file), `${file}: kept as given by the CLI`);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

async function runCliStdin(args, input) {
  const { spawn } = await import('node:child_process');
  const bin = process.env.MEDIAGATE_BIN;
  return new Promise((resolveRun, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', () => resolveRun(out));
    child.stdin.end(input);
  });
}
