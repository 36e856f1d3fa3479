// The AI SDK middleware at the wire: the middleware never sees a request body (it admits the
// prompt's parts; the provider adapter writes the body after it), so its differential is: the body
// the adapter sends without the gate, judged by `mediagate admit-request`, equals byte for byte the
// body that arrives with the middleware. Under `ai` 7 with @ai-sdk/anthropic and `ai` 6 with its
// @ai-sdk/anthropic 3 (both in js/node_modules, as js/test/integrations.test.js uses them).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { mediagateMiddleware } from '../../js/src/ai-sdk.js';
import { GIF_1X1, widePng } from '../../js/test/fixtures.js';
import { CORPUS, SVG_BYTES, minimalPdf, noisePng } from '../../js/test/helpers.js';
import { startProvider } from '../../js/test/provider-server.js';
import { REPO_ROOT, runCli } from './cli.mjs';

const fromJs = createRequire(join(REPO_ROOT, 'js', 'package.json'));
const load = (name) => import(pathToFileURL(fromJs.resolve(name)).href);

// The adapters warn that the model name is unknown to them, once per call: noise here.
globalThis.AI_SDK_LOG_WARNINGS = false;

const SDKS = [
  { name: 'ai 7, @ai-sdk/anthropic', ai: await load('ai'), anthropic: (await load('@ai-sdk/anthropic')).createAnthropic },
  { name: 'ai 6, @ai-sdk/anthropic 3', ai: await load('ai-v6'), anthropic: (await load('ai-sdk-anthropic-v3')).createAnthropic },
];

const file = (data, mediaType) => ({ type: 'file', data, mediaType });
const png = await noisePng(40, 30, 21);
const PROMPTS = [
  ['a small PNG (admitted as it is)', [{ type: 'text', text: 'what is it?' }, file(png, 'image/png')]],
  ['an oversize PNG (fitted)', [file(await widePng(), 'image/png')]],
  ['a JPEG with GPS EXIF (dropped)', [file(readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg')), 'image/jpeg')]],
  ['a PDF', [{ type: 'text', text: 'summarise' }, file(minimalPdf('ai sdk at the wire'), 'application/pdf')]],
  ['22 images, one oversize (the request rules across parts)', [...Array.from({ length: 21 }, () => file(GIF_1X1, 'image/gif')), file(await noisePng(10, 2200, 4), 'image/png')]],
  ['an SVG claimed as a PNG beside a good image', [file(SVG_BYTES, 'image/png'), file(png, 'image/png')]],
];

let provider;
const work = mkdtempSync(join(tmpdir(), 'mediagate-wire-ai-'));
before(async () => {
  provider = await startProvider();
});
after(async () => {
  await provider?.close();
  rmSync(work, { recursive: true, force: true });
});

function admitRequest(body) {
  const path = join(work, 'request.json');
  writeFileSync(path, body);
  return runCli(['admit-request', '--api', 'anthropic', path]);
}

/** What the adapter of `sdk` posts for `content`, with `middleware` or without. */
async function posted(sdk, content, middleware) {
  const base = sdk.anthropic({ apiKey: 'test', baseURL: `${provider.url}/v1` })('claude-wire');
  const model = middleware ? sdk.ai.wrapLanguageModel({ model: base, middleware }) : base;
  const before = provider.records.length;
  await sdk.ai.generateText({ model, maxRetries: 0, messages: [{ role: 'user', content }] });
  assert.equal(provider.records.length, before + 1, 'one request reached the provider');
  const record = provider.records.at(-1);
  assert.equal(record.path, '/v1/messages');
  return record.body;
}

for (const sdk of SDKS) {
  describe(`the AI SDK middleware at the wire (${sdk.name})`, () => {
    for (const [name, content] of PROMPTS) {
      test(name, async () => {
        const plain = await posted(sdk, content, null);
        const judged = await admitRequest(plain);
        assert.ok([0, 1].includes(judged.code), `admit-request exited ${judged.code}: ${judged.stderr}`);
        const gated = await posted(sdk, content, mediagateMiddleware());
        if (judged.code === 1) {
          // A refused part is a text part the adapter writes ({"type","text"}), where the CLI puts
          // its placeholder in the block's slot ({"text","type"}): the same words, members in
          // another order. Everything else is the same value.
          assert.deepEqual(JSON.parse(gated), JSON.parse(judged.stdout));
          assert.match(gated.toString(), /\[mediagate\] The image \(image\/png\)[^"]*magic_mismatch/);
        } else if (!gated.equals(judged.stdout)) {
          assert.fail(`with the middleware ${gated.length} bytes arrived; the CLI writes ${judged.stdout.length} of the body sent without it:\n${gated.toString().slice(0, 600)}\n---\n${judged.stdout.toString().slice(0, 600)}`);
        }
      });
    }
  });
}
