// The LiteLLM proxy at the wire, with what it downloads: the real `litellm --config` (the pinned
// hosts/python/requirements-litellm.txt, in tests/wire/.venv-litellm), twice in front of the
// loopback provider, once without the mediagate guardrail and once with it. Each client request (Chat
// Completions: data-URL media, `image_url` and `file` URLs that LiteLLM itself downloads from
// 127.0.0.1) goes to an `anthropic/…` and an `openai/…` deployment through both proxies; the
// body that arrives without the guardrail, judged by `mediagate admit-request` in the dialect it
// arrived in and under the deployment's profile, must be the body that arrives with it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SVG_BYTES, minimalPdf, noisePng } from '../../js/test/helpers.js';
import { startProvider } from '../../js/test/provider-server.js';
import { REPO_ROOT, runCli } from './cli.mjs';
import { startMediaServer } from './media-server.mjs';

const LITELLM = process.env.MEDIAGATE_WIRE_LITELLM ?? join(REPO_ROOT, 'tests', 'wire', '.venv-litellm', 'bin', 'litellm');
const work = mkdtempSync(join(tmpdir(), 'mediagate-wire-litellm-'));
const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const dataUrl = (type, bytes) => `data:${type};base64,${b64(bytes)}`;

const png = await noisePng(36, 24, 3);
const photo = readFileSync(join(REPO_ROOT, 'tests', 'corpus', 'bench', 'photo-12mp.jpg'));
const pdf = minimalPdf('LiteLLM at the wire');
const MEDIA = {
  '/media/small.png': { type: 'image/png', bytes: png },
  '/media/diagram.png': { type: 'image/png', bytes: Buffer.from(SVG_BYTES) },
  '/media/report.pdf': { type: 'application/pdf', bytes: pdf },
};

/** Deployment → [LiteLLM model, the dialect LiteLLM sends it, the gate profile its provider takes]. */
const DEPLOYMENTS = {
  'wire-claude': ['anthropic/claude-sonnet-4-5', 'anthropic', 'anthropic'],
  'wire-gpt': ['openai/gpt-4o', 'openai', 'openai'],
};

// `downloads`: the deployments LiteLLM downloads a URL's bytes for, checked in the body that
// arrives without the guardrail, so that the case stays about downloads. To the others LiteLLM
// passes the URL on (an OpenAI `image_url`, an Anthropic `document` with a URL source).
const CASES = (media) => [
  { name: 'a good PNG as a data URL', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: dataUrl('image/png', png) } }] },
  { name: 'an SVG claimed as a PNG, as a data URL', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: dataUrl('image/png', SVG_BYTES) } }] },
  { name: 'a 12 MP photo as a data URL (fitted)', content: [{ type: 'text', text: 'where?' }, { type: 'image_url', image_url: { url: dataUrl('image/jpeg', photo) } }] },
  { name: 'a good PNG by URL', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: `${media}/media/small.png` } }], downloads: { 'wire-claude': png } },
  { name: 'an SVG served as a PNG by URL', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `${media}/media/diagram.png` } }], downloads: { 'wire-claude': SVG_BYTES } },
  { name: 'a PDF by URL (`file.file_id`)', content: [{ type: 'text', text: 'summarise' }, { type: 'file', file: { file_id: `${media}/media/report.pdf` } }], downloads: { 'wire-gpt': pdf } },
];

function config(provider, gated) {
  const models = Object.entries(DEPLOYMENTS).map(([name, [model, dialect]]) =>
    [`  - model_name: ${name}`, '    litellm_params:', `      model: ${model}`, '      api_key: test-key',
      `      api_base: ${provider.url}${dialect === 'openai' ? '/v1' : ''}`].join('\n'));
  const guardrail = ['guardrails:', '  - guardrail_name: mediagate', '    litellm_params:',
    '      guardrail: mediagate_host.litellm_guardrail.MediagateGuardrail', '      mode: pre_call', '      default_on: true'];
  // LiteLLM refuses to download from loopback addresses unless told.
  return ['model_list:', ...models, 'litellm_settings:', '  user_url_allowed_hosts: ["127.0.0.1"]', ...(gated ? guardrail : []), ''].join('\n');
}

async function startProxy(provider, gated) {
  const dir = join(work, gated ? 'gated' : 'plain');
  mkdirSync(dir);
  const file = join(dir, 'config.yaml');
  writeFileSync(file, config(provider, gated));
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const p = probe.address().port;
      probe.close(() => resolve(p));
    });
  });
  const key = `sk-${randomBytes(24).toString('hex')}`;
  const log = join(dir, 'proxy.log');
  const out = openSync(log, 'w');
  const child = spawn(LITELLM, ['--config', file, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: dir,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      LITELLM_MASTER_KEY: key,
      // Offline: the bundled model cost map, no telemetry, nothing through a proxy.
      LITELLM_LOCAL_MODEL_COST_MAP: 'True',
      LITELLM_TELEMETRY: 'False',
      NO_PROXY: '*',
      HTTP_PROXY: '',
      HTTPS_PROXY: '',
    },
  });
  return { url: `http://127.0.0.1:${port}`, key, child, log };
}

async function waitLive(proxy, deadline) {
  for (;;) {
    if (proxy.child.exitCode !== null) assert.fail(`the LiteLLM proxy exited ${proxy.child.exitCode}:\n${readFileSync(proxy.log, 'utf8').slice(-3000)}`);
    try {
      if ((await fetch(`${proxy.url}/health/liveliness`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) assert.fail(`the LiteLLM proxy did not start in time:\n${readFileSync(proxy.log, 'utf8').slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function stop(proxy) {
  if (!proxy || proxy.child.exitCode !== null) return;
  const exited = new Promise((r) => proxy.child.once('exit', r));
  proxy.child.kill('SIGTERM');
  const timer = setTimeout(() => proxy.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The one request a chat through `proxy` made the provider receive. */
async function chat(proxy, provider, model, content) {
  const before = provider.records.length;
  const r = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxy.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, `the proxy answered ${r.status}: ${text.slice(0, 500)}`);
  const made = provider.records.slice(before);
  assert.equal(made.length, 1, `one provider request per chat, not ${made.length}`);
  return made[0];
}

let provider;
let media;
const proxies = [];
const runs = [];
before(async () => {
  provider = await startProvider();
  media = await startMediaServer(MEDIA);
  proxies.push(await startProxy(provider, false), await startProxy(provider, true));
  const deadline = Date.now() + 120_000;
  await Promise.all(proxies.map((p) => waitLive(p, deadline)));
  const [plainProxy, gatedProxy] = proxies;
  for (const c of CASES(media.url)) {
    for (const model of Object.keys(DEPLOYMENTS)) {
      const plain = await chat(plainProxy, provider, model, c.content);
      const gated = await chat(gatedProxy, provider, model, c.content);
      runs.push({ ...c, model, plain, gated });
    }
  }
});
after(async () => {
  await Promise.all(proxies.map(stop));
  await provider?.close();
  await media?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('LiteLLM at the wire: what arrives with the guardrail is what admit-request makes of what LiteLLM sends without it', () => {
  for (const c of CASES('')) {
    for (const model of Object.keys(DEPLOYMENTS)) {
      test(`${model}: ${c.name}`, async () => {
        const { plain, gated, downloads } = runs.find((r) => r.name === c.name && r.model === model);
        const [, dialect, profile] = DEPLOYMENTS[model];
        assert.equal(gated.path, plain.path);
        assert.equal(plain.path, dialect === 'anthropic' ? '/v1/messages' : '/v1/chat/completions');
        if (downloads?.[model]) assert.ok(plain.body.includes(b64(downloads[model])), 'LiteLLM sent the bytes it downloaded');
        const file = join(work, 'request.json');
        writeFileSync(file, plain.body);
        const judged = await runCli(['admit-request', '--api', dialect, '--profile', profile, file]);
        assert.ok([0, 1].includes(judged.code), `admit-request exited ${judged.code}: ${judged.stderr}`);
        if (!gated.body.equals(judged.stdout)) {
          assert.fail(`with the guardrail ${gated.body.length} bytes arrived; the CLI writes ${judged.stdout.length} of what LiteLLM sends without it:\n${gated.body.toString().slice(0, 700)}\n---\n${judged.stdout.toString().slice(0, 700)}`);
        }
      });
    }
  }
});
