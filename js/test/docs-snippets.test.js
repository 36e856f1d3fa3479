// docs/integrations.md's TypeScript snippets, run as written: each ```js block of the
// `## TypeScript` section is saved inside this package (so `@mediagate/preflight/…` resolves to
// it, and the SDKs to its devDependencies) and run by Node in a directory holding the files it
// reads, with the SDKs' own base-URL variables pointing at a provider on 127.0.0.1.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ARTIFACTS, REPO_ROOT, SVG_BYTES, minimalPdf, noisePng } from './helpers.js';
import { startProvider } from './provider-server.js';

const DOC = join(REPO_ROOT, 'docs', 'integrations.md');

/** The ```js blocks of the `## TypeScript` section, in order. */
export function typescriptSnippets(markdown = readFileSync(DOC, 'utf8')) {
  const start = markdown.indexOf('\n## TypeScript\n');
  assert.ok(start >= 0, 'docs/integrations.md has a ## TypeScript section');
  const rest = markdown.slice(start + 1);
  const next = rest.slice(1).search(/\n## /);
  const section = next < 0 ? rest : rest.slice(0, next + 1);
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
}

let provider;
let work;
let good;
const pdf = minimalPdf('report');

before(async () => {
  provider = await startProvider();
  work = mkdtempSync(join(tmpdir(), 'mediagate-snippets-'));
  good = await noisePng(64, 48, 9);
  writeFileSync(join(work, 'screenshot.png'), good);
  writeFileSync(join(work, 'chart.png'), SVG_BYTES); // an SVG saved as .png
  writeFileSync(join(work, 'report.pdf'), pdf);
});
after(async () => {
  await provider?.close();
  rmSync(work, { recursive: true, force: true });
});

function run(snippet, index) {
  const dir = join(ARTIFACTS, 'snippets');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `integrations-${index}.mjs`);
  writeFileSync(file, snippet);
  // The Anthropic SDK appends /v1/messages to its base URL; @ai-sdk/anthropic appends /messages.
  const anthropicBase = snippet.includes("'@ai-sdk/anthropic'") ? `${provider.url}/v1` : provider.url;
  const env = {
    PATH: process.env.PATH,
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: `${provider.url}/v1`,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: anthropicBase,
    AI_SDK_LOG_WARNINGS: 'false',
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: work, env, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

const b64 = (bytes) => Buffer.from(bytes).toString('base64');

describe('docs/integrations.md: the TypeScript snippets run as written', () => {
  const snippets = typescriptSnippets();

  it('has the three snippets (OpenAI, Anthropic with errors, AI SDK)', () => {
    assert.equal(snippets.length, 3);
  });

  it('OpenAI: the screenshot reaches the provider unchanged through gatedFetch', async () => {
    const count = provider.records.length;
    const r = await run(snippets[0], 0);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'seen');
    assert.equal(provider.records.length, count + 1);
    const { path, body } = provider.records.at(-1);
    assert.equal(path, '/v1/chat/completions');
    const image = JSON.parse(body).messages[0].content[1];
    assert.equal(image.image_url.url, `data:image/png;base64,${b64(good)}`);
  });

  it('Anthropic: the SVG saved as chart.png is refused, the error caught, nothing sent', async () => {
    const count = provider.records.length;
    const r = await run(snippets[1], 1);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /mediagate refused 1 block of the anthropic request: \/messages\/0\/content\/0: magic_mismatch/);
    assert.equal(provider.records.length, count);
  });

  it('AI SDK: the PDF and the screenshot reach the model through the middleware', async () => {
    const count = provider.records.length;
    const r = await run(snippets[2], 2);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'seen');
    assert.equal(provider.records.length, count + 1);
    const { path, body } = provider.records.at(-1);
    assert.equal(path, '/v1/messages');
    const content = JSON.parse(body).messages[0].content;
    const doc = content.find((b) => b.type === 'document');
    const image = content.find((b) => b.type === 'image');
    assert.equal(doc.source.data, b64(pdf));
    assert.equal(image.source.data, b64(good));
  });
});
