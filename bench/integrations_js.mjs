// What the TypeScript integrations add to one model request: `gatedFetch` under the real OpenAI
// SDK (chat completions, responses) and Anthropic SDK (messages), and `mediagateMiddleware` under
// the real AI SDK. For the fetch wrapper, the time from the SDK calling its `fetch` to the request
// being handed to the fetch that sends (a stub answering at once: the network is not measured);
// for the middleware, its `transformParams` on the prompt `generateText` gives the model. Cases:
// a request with no media; a 3.0 MB PNG of screen size (1000 × 1000 noise, admitted unchanged:
// the sniff, a full decode, the base64 both ways); the 4.2 MB retina screenshot of the corpus
// (3456 × 2234, downsampled). Medians and p90 after warm-up, one request at a time.
//
// Usage: (cd js && npm ci && npm run build) && node bench/integrations_js.mjs [--quick]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const js = join(root, 'js');
const load = (path) => import(pathToFileURL(join(js, path)).href);
// The SDKs as the package's devDependencies (js/node_modules), resolved from there.
const fromJs = createRequire(join(js, 'package.json'));
const sdk = (name) => import(pathToFileURL(fromJs.resolve(name)).href);

const { default: OpenAI } = await sdk('openai');
const { default: Anthropic } = await sdk('@anthropic-ai/sdk');
const { generateText } = await sdk('ai');
const { MockLanguageModelV4 } = await sdk('ai/test');
const { gatedFetch } = await load('src/fetch.js');
const { mediagateMiddleware } = await load('src/ai-sdk.js');
const { admit, ready } = await load('src/index.js');
const { noisePng } = await load('test/helpers.js');

const quick = process.argv.includes('--quick');
const RUNS = quick ? { none: 50, noise: 8, retina: 3 } : { none: 300, noise: 30, retina: 8 };

const noise = await noisePng(1000, 1000);
const retina = readFileSync(join(root, 'tests', 'corpus', 'bench', 'screenshot-3456x2234.png'));
const b64 = (bytes) => Buffer.from(bytes).toString('base64');

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
function summary(times) {
  const s = [...times].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p90: quantile(s, 0.9), runs: s.length };
}

function answer(url) {
  const path = new URL(url).pathname;
  const body = path.endsWith('/messages')
    ? { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }
    : path.endsWith('/responses')
      ? { id: 'r', object: 'response', created_at: 0, status: 'completed', model: 'x', output: [] }
      : { id: 'c', object: 'chat.completion', created: 0, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
}

/** The SDK's fetch, timed from its call to the hand-over to the sending stub. */
function timedFetch() {
  let entered = 0;
  const times = [];
  const stub = async (url) => {
    times.push(performance.now() - entered);
    return answer(String(url));
  };
  const gated = gatedFetch({ fetch: stub });
  const outer = (url, init) => {
    entered = performance.now();
    return gated(url, init);
  };
  return { fetch: outer, times };
}

const image = {
  chat: (bytes) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(bytes)}` } }),
  responses: (bytes) => ({ type: 'input_image', image_url: `data:image/png;base64,${b64(bytes)}`, detail: 'auto' }),
  messages: (bytes) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(bytes) } }),
};
const text = { chat: 'text', responses: 'input_text', messages: 'text' };

function send(kind, fetch, media) {
  const content = [{ type: text[kind], text: 'What does this show?' }, ...(media ? [image[kind](media)] : [])];
  if (kind === 'messages') {
    return new Anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', fetch, maxRetries: 0 }).messages.create({
      model: 'x',
      max_tokens: 8,
      messages: [{ role: 'user', content }],
    });
  }
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
  if (kind === 'responses') return client.responses.create({ model: 'x', input: [{ role: 'user', content }] });
  return client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content }] });
}

async function fetchCase(kind, media, runs) {
  const { fetch, times } = timedFetch();
  for (let i = 0; i < 3; i++) await send(kind, fetch, media);
  times.length = 0;
  for (let i = 0; i < runs; i++) await send(kind, fetch, media);
  return summary(times);
}

async function middlewareCase(media, runs) {
  let params;
  const model = new MockLanguageModelV4({
    provider: 'anthropic.messages',
    doGenerate: async (p) => {
      params = p;
      return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, warnings: [] };
    },
  });
  const content = [{ type: 'text', text: 'What does this show?' }, ...(media ? [{ type: 'file', data: media, mediaType: 'image/png' }] : [])];
  await generateText({ model, messages: [{ role: 'user', content }] }); // the params the model is given
  const middleware = mediagateMiddleware();
  const times = [];
  for (let i = 0; i < runs + 3; i++) {
    const start = performance.now();
    await middleware.transformParams({ type: 'generate', params, model });
    if (i >= 3) times.push(performance.now() - start);
  }
  return summary(times);
}

await ready(); // the shared gate made before timing (its first instantiation is a one-time cost)
const cases = [
  ['no media', null, RUNS.none],
  [`3.0 MB PNG, 1000 × 1000 (${noise.length} B, admitted unchanged)`, noise, RUNS.noise],
  [`4.2 MB retina screenshot, 3456 × 2234 (${retina.length} B, downsampled)`, retina, RUNS.retina],
];
const integrations = [
  ['gatedFetch, OpenAI SDK, chat.completions', (m, r) => fetchCase('chat', m, r)],
  ['gatedFetch, OpenAI SDK, responses', (m, r) => fetchCase('responses', m, r)],
  ['gatedFetch, Anthropic SDK, messages', (m, r) => fetchCase('messages', m, r)],
  ['mediagateMiddleware, AI SDK (anthropic profile)', (m, r) => middlewareCase(m, r)],
];
// Context, in the same run: the gate alone on the image's bytes (no request around it).
async function admitCase(media, runs) {
  const times = [];
  for (let i = 0; i < runs + 3; i++) {
    const start = performance.now();
    await admit(media, 'image/png');
    if (i >= 3) times.push(performance.now() - start);
  }
  return summary(times);
}
integrations.push(['context: admit(bytes) alone, no request around it', (m, r) => (m ? admitCase(m, r) : null)]);
const rows = [];
for (const [what, run] of integrations) {
  for (const [label, media, runs] of cases) {
    const s = await run(media, runs);
    if (!s) continue;
    rows.push({ integration: what, request: label, ...s });
    console.log(`${what} | ${label} | median ${s.median.toFixed(2)} ms | p90 ${s.p90.toFixed(2)} ms | ${s.runs} runs`);
  }
}
console.log(JSON.stringify({ node: process.version, rows }));
