// pydantic-ai at the wire (pydantic_ai_wire.py, the pinned pydantic-ai of
// hosts/python/requirements-integrations.txt): the body pydantic-ai sends without the gate, judged
// by `mediagate admit-request`, against the body that arrives with the capability and the transport
// (docs/integrations.md's "at the wire" setup), for OpenAI Chat and Anthropic models. Inline media,
// and URLs pydantic-ai downloads from 127.0.0.1 (the capability leaves those to the transport).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { widePng } from '../../js/test/fixtures.js';
import { CORPUS, SVG_BYTES, minimalPdf, noisePng } from '../../js/test/helpers.js';
import { startProvider } from '../../js/test/provider-server.js';
import { REPO_ROOT, runCli } from './cli.mjs';
import { startMediaServer } from './media-server.mjs';

const PYTHON = process.env.MEDIAGATE_WIRE_PYTHON ?? join(REPO_ROOT, 'tests', 'wire', '.venv', 'bin', 'python');
const work = mkdtempSync(join(tmpdir(), 'mediagate-wire-pydantic-'));
const media = (name, bytes, media_type) => {
  writeFileSync(join(work, name), bytes);
  return { file: join(work, name), media_type };
};
const png = await noisePng(30, 20, 4);
const pdf = minimalPdf('pydantic-ai downloads it');
// The media server's port is not known yet: URL parts name a path, the manifest the whole URL.
const SERVED = {
  '/media/small.png': { type: 'image/png', bytes: png },
  '/media/diagram.png': { type: 'image/png', bytes: Buffer.from(SVG_BYTES) },
  '/media/report.pdf': { type: 'application/pdf', bytes: pdf },
};
const PROMPTS = [
  ['a small PNG (admitted as it is)', [{ text: 'what is it?' }, media('small.png', await noisePng(36, 24, 2), 'image/png')]],
  ['an oversize PNG (fitted)', [{ text: 'read it' }, media('wide.png', await widePng(), 'image/png')]],
  ['a JPEG with GPS EXIF (dropped)', [{ text: 'where?' }, media('exif.jpg', readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg')), 'image/jpeg')]],
  ['a PDF', [{ text: 'summarise' }, media('doc.pdf', minimalPdf('pydantic-ai at the wire'), 'application/pdf')]],
  ['an SVG claimed as a PNG', [{ text: 'look' }, media('svg.png', SVG_BYTES, 'image/png')]],
].flatMap(([name, parts]) => ['openai', 'anthropic'].map((system) => ({ name: `${system}: ${name}`, system, parts })));
// `fetched`: the bytes the body sent without the gate must carry, so that the case stays one of
// pydantic-ai's downloads.
PROMPTS.push(
  ...[
    ['a PNG by URL, downloaded', [{ text: 'what is it?' }, { image_url: '/media/small.png' }], png],
    ['an SVG served as a PNG by URL, downloaded', [{ text: 'look' }, { image_url: '/media/diagram.png' }], SVG_BYTES],
    ['a PDF by URL, downloaded', [{ text: 'summarise' }, { document_url: '/media/report.pdf' }], pdf],
  ].flatMap(([name, parts, fetched]) => ['openai', 'anthropic'].map((system) => ({ name: `${system}: ${name}`, system, parts, fetched }))),
);

let provider;
let server;
const bodies = new Map();
before(async () => {
  provider = await startProvider();
  server = await startMediaServer(SERVED);
  const manifest = join(work, 'manifest.json');
  const at = (part) => Object.fromEntries(Object.entries(part).map(([k, v]) => [k, k.endsWith('_url') ? server.url + v : v]));
  const prompts = PROMPTS.map(({ fetched, ...p }) => ({ ...p, parts: p.parts.map(at) }));
  writeFileSync(manifest, JSON.stringify({ provider: provider.url, prompts }));
  const child = spawn(PYTHON, [join(REPO_ROOT, 'tests', 'wire', 'pydantic_ai_wire.py'), manifest], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.once('close', r));
  assert.equal(code, 0, `pydantic_ai_wire.py: ${err}`);
  const runs = out.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  // One request a run, in the order of the runs.
  assert.equal(provider.records.length, runs.length, 'one request reached the provider per run');
  for (const [i, run] of runs.entries()) {
    if (!bodies.has(run.name)) bodies.set(run.name, {});
    bodies.get(run.name)[run.gated ? 'gated' : 'plain'] = provider.records[i];
  }
});
after(async () => {
  await provider?.close();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('pydantic-ai at the wire: what arrives with the gate is what admit-request makes of what pydantic-ai sends', () => {
  for (const { name, system, fetched } of PROMPTS) {
    test(name, async () => {
      const { plain, gated } = bodies.get(name);
      assert.equal(gated.path, plain.path);
      if (fetched) assert.ok(plain.body.includes(Buffer.from(fetched).toString('base64')), 'pydantic-ai sent the bytes it downloaded');
      const file = join(work, 'request.json');
      writeFileSync(file, plain.body);
      const judged = await runCli(['admit-request', '--api', system, file]);
      assert.ok([0, 1].includes(judged.code), `admit-request exited ${judged.code}: ${judged.stderr}`);
      let want = judged.stdout;
      if (judged.code === 1 && system === 'openai' && !fetched) {
        // The capability refuses a part before pydantic-ai writes it as an `image_url` block, so
        // its placeholder names the part (an image) where the CLI names the block it reads. A
        // downloaded part is judged by the transport only, in the block pydantic-ai wrote.
        want = Buffer.from(want.toString('utf8').replaceAll('[mediagate] The image_url (', '[mediagate] The image ('));
        assert.ok(!want.equals(judged.stdout), 'the CLI named the image_url block');
      }
      if (!gated.body.equals(want)) {
        assert.fail(`with the gate ${gated.body.length} bytes arrived; the CLI writes ${want.length} of what pydantic-ai sends without it:\n${gated.body.toString().slice(0, 700)}\n---\n${want.toString().slice(0, 700)}`);
      }
    });
  }
});
