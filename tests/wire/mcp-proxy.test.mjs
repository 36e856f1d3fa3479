// The MCP proxy seat at the wire: tool results (the tool-result walk, not a request's) answered by
// a server (mcp-peer.mjs) behind `mediagate proxy`, and the line the proxy passes on compared byte
// for byte with the server's line, its `result` replaced by what `mediagate admit-tool-result`
// writes for it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { GIF_1X1, b64, widePng } from '../../js/test/fixtures.js';
import { CORPUS, SVG_BYTES, minimalPdf, noisePng } from '../../js/test/helpers.js';
import { imageSize } from '../../js/test/provider-server.js';
import { BIN, REPO_ROOT, runCli } from './cli.mjs';

const image = (mimeType, bytes) => ({ type: 'image', mimeType, data: b64(bytes) });
const wide = await widePng();
const jpegExif = readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg'));

// A tool's name → the text of its result.
const RESULTS = {
  svg_shot: JSON.stringify({ content: [{ type: 'text', text: 'the page' }, image('image/png', SVG_BYTES)] }),
  wide_shot: JSON.stringify({ content: [image('image/png', wide)] }),
  photo: JSON.stringify({ content: [image('image/jpeg', jpegExif), { type: 'text', text: 'a photo' }] }),
  small_pngs: JSON.stringify({ content: [image('image/png', await noisePng(30, 20, 8)), image('image/gif', GIF_1X1)] }),
  pdf_resource: JSON.stringify({
    content: [{ type: 'resource', resource: { uri: 'file:///wire.pdf', mimeType: 'application/pdf', blob: b64(minimalPdf('mcp')) } }],
  }),
  short_pdf_resource: JSON.stringify({
    content: [{ type: 'resource', resource: { uri: 'file:///short.pdf', mimeType: 'application/pdf', blob: b64(Buffer.from('%PDF-1.4\n')) } }],
  }),
  audio: JSON.stringify({ content: [{ type: 'audio', mimeType: 'audio/wav', data: b64(Buffer.from('RIFF$\0\0\0WAVEfmt wire audio')) }] }),
  odd_text: '{ "content" : [ {"text":"lone \\ud800, 1e400, \\/","type":"text"} ], "isError": false, "_meta": {"n": 1e400} }',
};

const work = mkdtempSync(join(tmpdir(), 'mediagate-wire-mcp-'));
let proxy;
const answers = new Map();

/** `mediagate proxy -- node mcp-peer.mjs`, driven line by line; `call` answers the raw line. */
function startProxy(resultsFile) {
  const child = spawn(BIN, ['proxy', '--', process.execPath, join(REPO_ROOT, 'tests', 'wire', 'mcp-peer.mjs'), resultsFile], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buffered = '';
  const waiting = new Map();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buffered += d;
    for (let at; (at = buffered.indexOf('\n')) >= 0; ) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const { id } = JSON.parse(line);
      waiting.get(id)?.(line);
      waiting.delete(id);
    }
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const request = (id, method, params) =>
    new Promise((resolveLine, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} ${id}: ${stderr}`)), 60_000);
      waiting.set(id, (line) => {
        clearTimeout(timer);
        resolveLine(line);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  return {
    request,
    notify: (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
    stop: () => {
      child.stdin.end();
      return new Promise((r) => child.once('exit', r));
    },
  };
}

/** The text of a top-level member of the JSON object `text` (its value as written). */
function rawMember(text, name) {
  const parsed = JSON.parse(text);
  assert.ok(name in parsed, `no ${name} in ${text.slice(0, 200)}`);
  // The member's value is the text between its key and the next top-level member: found by
  // trying each candidate end until the slice parses to the parsed value.
  const key = `"${name}":`;
  const start = text.indexOf(key) + key.length;
  for (let end = start + 1; end <= text.length; end++) {
    if (text[end] !== ',' && text[end] !== '}') continue;
    const slice = text.slice(start, end);
    try {
      assert.deepEqual(JSON.parse(slice), parsed[name]);
      return slice;
    } catch {}
  }
  throw new Error(`the ${name} member of ${text.slice(0, 200)} could not be cut out`);
}

before(async () => {
  const resultsFile = join(work, 'results.json');
  writeFileSync(resultsFile, JSON.stringify(RESULTS));
  proxy = startProxy(resultsFile);
  await proxy.request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'wire', version: '1' } });
  proxy.notify('notifications/initialized');
  let id = 1;
  for (const name of Object.keys(RESULTS)) answers.set(name, { id, line: await proxy.request(id++, 'tools/call', { name, arguments: {} }) });
});
after(async () => {
  await proxy?.stop();
  rmSync(work, { recursive: true, force: true });
});

// An embedded resource with a `blob` is found by the proxy itself (the guest's tool-result walk
// names no such block) and written back whole, its members in another order, even when the gate
// admits its bytes as they are: the same value, not the same bytes. Known, and left to the proxy.
async function judged(name) {
  const file = join(work, `${name}.json`);
  writeFileSync(file, RESULTS[name]);
  const run = await runCli(['admit-tool-result', '--tool', name, file]);
  assert.ok([0, 1].includes(run.code), `admit-tool-result exited ${run.code}: ${run.stderr}`);
  return rawMember(run.stdout.toString('utf8'), 'content');
}

describe('the MCP proxy passes what admit-tool-result writes', () => {
  for (const name of Object.keys(RESULTS)) {
    test(`${name}: the same value, and nothing refused passes`, async () => {
      const written = await judged(name);
      const { id, line } = answers.get(name);
      assert.deepEqual(JSON.parse(line), { jsonrpc: '2.0', id, result: JSON.parse(written) });
      for (const block of JSON.parse(written).content) {
        const data = block.data ?? block.resource?.blob;
        if (data === undefined || block.type === 'audio') continue;
        const bytes = Buffer.from(data, 'base64');
        assert.ok(!/^\s*(<\?xml|<svg)/.test(bytes.subarray(0, 64).toString('latin1')), 'no SVG passes');
        assert.ok(!bytes.equals(Buffer.from('%PDF-1.4\n')), 'the nine-byte PDF does not pass');
        let size = null;
        try {
          size = imageSize(bytes);
        } catch {} // a GIF: imageSize reads PNG and JPEG
        if (size) assert.ok(Math.max(size.width, size.height) <= 2000, `${size.width}x${size.height}`);
      }
    });
    test(`${name}: byte for byte`, async () => {
      const { id, line } = answers.get(name);
      assert.equal(line, `{"jsonrpc":"2.0","id":${id},"result":${await judged(name)}}`);
    });
  }
});
