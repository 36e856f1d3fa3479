// The integrations against the real, pinned SDKs (openai, @anthropic-ai/sdk, ai) and a provider
// on 127.0.0.1 that records what it receives: what the provider's record holds is what is asserted.
// Every image is made here: a small noise PNG (no metadata, so the gate's canonical form of it is
// itself), an SVG claimed as PNG, a 6 MB screenshot-sized PNG (2400 x 850 noise), a one-page PDF.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from 'ai';
import { generateText as generateText6, wrapLanguageModel as wrapLanguageModel6 } from 'ai-v6';
import { createAnthropic as createAnthropic3 } from 'ai-sdk-anthropic-v3';
import { MockLanguageModelV4 } from 'ai/test';
import OpenAI from 'openai';

import { admit, admittedBytes, createGate } from '../src/index.js';
import { endpointDialect, gatedFetch } from '../src/fetch.js';
import { MediaRefusedError, mediagateMiddleware } from '../src/ai-sdk.js';
import { SVG_BYTES, crc32, minimalPdf, noisePng } from './helpers.js';
import { imageSize, startProvider } from './provider-server.js';

// The providers' own limits on one image (their docs): Anthropic 5 MB of base64, OpenAI 20 MB.
const BASE64_LIMIT = { anthropic: 5 * 1024 * 1024, openai: 20_000_000 };
const FIT_SIDE = 2000;

const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const fromB64 = (s) => Buffer.from(s, 'base64');
const dataUrl = (mime, bytes) => `data:${mime};base64,${b64(bytes)}`;

let provider;
let good;
let screenshot;
const svg = SVG_BYTES;
const pdf = minimalPdf('integrations');

before(async () => {
  provider = await startProvider();
  good = await noisePng(64, 48, 3);
  screenshot = await noisePng(2400, 850, 5);
  assert.ok(screenshot.length > 6_000_000, `the screenshot is ${screenshot.length} bytes`);
  // The gate's own answer for the good image is the image itself (no metadata to drop).
  const verdict = await admit(good, 'image/png');
  assert.ok(verdict.ok);
  assert.deepEqual(Buffer.from(admittedBytes(verdict)), Buffer.from(good));
});
after(() => provider?.close());

/** Sends `request` through a client made by `makeClient(fetch)` and answers the provider's record of it. */
async function sent(send, fetch) {
  const before = provider.records.length;
  await send(fetch);
  assert.equal(provider.records.length, before + 1, 'one request reached the provider');
  return provider.records.at(-1);
}

// Each SDK endpoint: how to send content, and where the media sit in what the provider receives.
const ENDPOINTS = [
  {
    name: 'OpenAI Chat Completions',
    profile: 'openai',
    send: (content) => (fetch) =>
      new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, fetch, maxRetries: 0 }).chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, ...content] }],
      }),
    image: (mime, bytes) => ({ type: 'image_url', image_url: { url: dataUrl(mime, bytes) } }),
    pdf: (bytes) => ({ type: 'file', file: { filename: 'doc.pdf', file_data: dataUrl('application/pdf', bytes) } }),
    blocks: (json) => json.messages[0].content.slice(1),
    imageBytes: (block) => fromB64(block.image_url.url.split(',')[1]),
    pdfBytes: (block) => fromB64(block.file.file_data.split(',')[1]),
    text: 'text',
    SdkError: OpenAI.BadRequestError,
    errorBody: (err) => err.error,
  },
  {
    name: 'OpenAI Responses',
    profile: 'openai',
    send: (content) => (fetch) =>
      new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, fetch, maxRetries: 0 }).responses.create({
        model: 'gpt-test',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Look.' }, ...content] }],
      }),
    image: (mime, bytes) => ({ type: 'input_image', image_url: dataUrl(mime, bytes), detail: 'auto' }),
    pdf: (bytes) => ({ type: 'input_file', filename: 'doc.pdf', file_data: dataUrl('application/pdf', bytes) }),
    blocks: (json) => json.input[0].content.slice(1),
    imageBytes: (block) => fromB64(block.image_url.split(',')[1]),
    pdfBytes: (block) => fromB64(block.file_data.split(',')[1]),
    text: 'input_text',
    SdkError: OpenAI.BadRequestError,
    errorBody: (err) => err.error,
  },
  {
    name: 'Anthropic Messages',
    profile: 'anthropic',
    send: (content) => (fetch) =>
      new Anthropic({ apiKey: 'test', baseURL: provider.url, fetch, maxRetries: 0 }).messages.create({
        model: 'claude-test',
        max_tokens: 16,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, ...content] }],
      }),
    image: (mime, bytes) => ({ type: 'image', source: { type: 'base64', media_type: mime, data: b64(bytes) } }),
    pdf: (bytes) => ({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(bytes) } }),
    blocks: (json) => json.messages[0].content.slice(1),
    imageBytes: (block) => fromB64(block.source.data),
    pdfBytes: (block) => fromB64(block.source.data),
    text: 'text',
    SdkError: Anthropic.BadRequestError,
    errorBody: (err) => err.error.error,
  },
];

for (const e of ENDPOINTS) {
  describe(`gatedFetch: ${e.name} through the real SDK`, () => {
    it('a request with no media arrives byte for byte as the SDK sends it without the gate', async () => {
      const send = e.send([]);
      const plain = await sent(send, globalThis.fetch);
      const gated = await sent(send, gatedFetch());
      assert.deepEqual(gated.body, plain.body);
    });

    it('a good image arrives unchanged, byte for byte', async () => {
      const send = e.send([e.image('image/png', good)]);
      const plain = await sent(send, globalThis.fetch);
      const gated = await sent(send, gatedFetch());
      assert.deepEqual(gated.body, plain.body, 'the whole request is what the SDK made');
      assert.deepEqual(e.imageBytes(e.blocks(JSON.parse(gated.body))[0]), Buffer.from(good));
    });

    it('an SVG claimed as PNG never arrives: a placeholder in its slot says why', async () => {
      const record = await sent(e.send([e.image('image/png', svg), e.image('image/png', good)]), gatedFetch());
      const [placeholder, kept] = e.blocks(JSON.parse(record.body));
      assert.equal(placeholder.type, e.text);
      assert.match(placeholder.text, /magic_mismatch/);
      assert.match(placeholder.text, /image\/svg\+xml/);
      assert.ok(!record.body.includes(b64(svg)), 'none of the SVG reached the provider');
      assert.deepEqual(e.imageBytes(kept), Buffer.from(good), 'its good neighbour is kept');
    });

    it("with onRefusal: 'error', nothing is sent and the SDK raises an error that says why", async () => {
      const count = provider.records.length;
      const err = await e.send([e.image('image/png', svg)])(gatedFetch({ onRefusal: 'error' })).then(
        () => assert.fail('the call should have failed'),
        (err) => err,
      );
      assert.ok(err instanceof e.SdkError, `${err?.constructor?.name}: ${err?.message}`);
      assert.equal(e.errorBody(err).type, 'mediagate_refused');
      assert.match(e.errorBody(err).message, /magic_mismatch/);
      assert.equal(provider.records.length, count, 'the provider received nothing');
    });

    it("a 6 MB screenshot arrives downsampled within the provider's limit", async () => {
      const record = await sent(e.send([e.image('image/png', screenshot)]), gatedFetch());
      const [block] = e.blocks(JSON.parse(record.body));
      const arrived = e.imageBytes(block);
      const { width, height } = imageSize(arrived);
      assert.ok(Math.max(width, height) <= FIT_SIDE, `${width} x ${height}`);
      assert.ok(width < 2400, `${width} x ${height}`);
      assert.ok(b64(arrived).length <= BASE64_LIMIT[e.profile], `${b64(arrived).length} base64 bytes`);
    });

    it('a PDF arrives as the document it is', async () => {
      const record = await sent(e.send([e.pdf(pdf)]), gatedFetch());
      assert.deepEqual(e.pdfBytes(e.blocks(JSON.parse(record.body))[0]), Buffer.from(pdf));
    });
  });
}

describe('gatedFetch: options', () => {
  it('convert: an SVG sent as what it is arrives converted to PNG (Anthropic SDK)', async () => {
    const send = ENDPOINTS.find((e) => e.profile === 'anthropic');
    const record = await sent(send.send([send.image('image/svg+xml', svg)]), gatedFetch({ convert: true }));
    const [block] = send.blocks(JSON.parse(record.body));
    assert.equal(block.source.media_type, 'image/png');
    const { type, width, height } = imageSize(fromB64(block.source.data));
    assert.equal(type, 'png');
    assert.equal(width / height, 120 / 60, `${width} x ${height}: the SVG's 120 x 60, rendered`);
  });

  it('keepMetadata: a PNG text chunk arrives only when asked for', async () => {
    const send = ENDPOINTS.find((e) => e.profile === 'anthropic');
    const text = new TextEncoder().encode('tEXtComment\0kept or dropped');
    const chunk = Buffer.alloc(12 + text.length - 4);
    chunk.writeUInt32BE(text.length - 4, 0);
    Buffer.from(text).copy(chunk, 4);
    chunk.writeUInt32BE(crc32(text), 8 + text.length - 4);
    const iend = good.length - 12;
    const tagged = Buffer.concat([Buffer.from(good.subarray(0, iend)), chunk, Buffer.from(good.subarray(iend))]);
    const arrived = async (options) =>
      send.imageBytes(send.blocks(JSON.parse((await sent(send.send([send.image('image/png', tagged)]), gatedFetch(options))).body))[0]);
    assert.ok(!(await arrived({})).includes('kept or dropped'), 'the canonical form leaves it out');
    assert.ok((await arrived({ keepMetadata: true })).includes('kept or dropped'));
  });

  it('a gate of your own, with its defaults (downsample off: the 6 MB screenshot is refused in its slot)', async () => {
    const send = ENDPOINTS.find((e) => e.profile === 'anthropic');
    const gate = createGate({ downsample: false });
    const record = await sent(send.send([send.image('image/png', screenshot)]), gatedFetch({ gate }));
    const [block] = send.blocks(JSON.parse(record.body));
    assert.equal(block.type, 'text');
    assert.match(block.text, /raw_too_large/);
  });
});

describe('gatedFetch: media in every shape the SDK sends', () => {
  const openai = (fetch) => new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, fetch, maxRetries: 0 });
  const computerUseTurn = (bytes) => [
    {
      type: 'computer_call_output',
      call_id: 'call_1',
      output: { type: 'computer_screenshot', image_url: dataUrl('image/png', bytes) },
    },
  ];

  it('a computer-use screenshot is judged like any image: refused in words, or sent byte for byte', async () => {
    const send = (bytes) => (fetch) => openai(fetch).responses.create({ model: 'computer-use-preview', input: computerUseTurn(bytes) });
    const record = await sent(send(svg), gatedFetch());
    const { output } = JSON.parse(record.body).input[0];
    assert.equal(output.type, 'input_text');
    assert.match(output.text, /magic_mismatch/);
    assert.ok(!record.body.includes(b64(svg)));
    const plain = await sent(send(good), globalThis.fetch);
    assert.deepEqual((await sent(send(good), gatedFetch())).body, plain.body);
  });

  it("a Responses input_file given as a data: file_url is judged", async () => {
    const record = await sent(
      (fetch) =>
        openai(fetch).responses.create({
          model: 'gpt-test',
          input: [{ role: 'user', content: [{ type: 'input_file', file_url: dataUrl('application/pdf', Buffer.from('%PDF-1.4')) }] }],
        }),
      gatedFetch(),
    );
    const [block] = JSON.parse(record.body).input[0].content;
    assert.equal(block.type, 'input_text');
    assert.match(block.text, /undecodable/);
  });

  it('audio arrives as the SDK sent it', async () => {
    const send = (fetch) =>
      openai(fetch).chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: b64(Buffer.from('RIFF\x24\0\0\0WAVEfmt ')), format: 'wav' } }] }],
      });
    const plain = await sent(send, globalThis.fetch);
    assert.deepEqual((await sent(send, gatedFetch())).body, plain.body);
  });

  it("a Request's body is judged when init names no body", async () => {
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl('image/png', svg) } }] }] });
    const request = new Request(`${provider.url}/v1/chat/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const record = await sent((fetch) => fetch(request, { body: undefined }), gatedFetch());
    assert.ok(!record.body.includes(b64(svg)));
    assert.match(JSON.parse(record.body).messages[0].content[0].text, /magic_mismatch/);
  });
});

describe('the wrappers tell every change', () => {
  it('gatedFetch and the middleware call onChange with each change and refusal', async () => {
    const told = [];
    const content = [
      { type: 'image_url', image_url: { url: dataUrl('image/png', screenshot) } },
      { type: 'image_url', image_url: { url: dataUrl('image/png', svg) } },
    ];
    await sent(
      (fetch) =>
        new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, fetch, maxRetries: 0 }).chat.completions.create({
          model: 'gpt-test',
          messages: [{ role: 'user', content }],
        }),
      gatedFetch({ onChange: (c) => told.push(c) }),
    );
    assert.deepEqual(
      told.map((c) => [c.path, c.what, c.dialect]),
      [
        ['/messages/0/content/0', 'downsampled', 'openai'],
        ['/messages/0/content/1', 'refused', 'openai'],
      ],
    );
    assert.equal(told[1].reason, 'magic_mismatch');
    const middlewareTold = [];
    const model = wrapLanguageModel({
      model: createAnthropic({ apiKey: 'test', baseURL: `${provider.url}/v1` })('claude-test'),
      middleware: mediagateMiddleware({ onChange: (c) => middlewareTold.push(c) }),
    });
    await sent(() => generateText({ model, messages: [{ role: 'user', content: [{ type: 'file', data: svg, mediaType: 'image/png' }] }] }));
    assert.deepEqual(middlewareTold.map((c) => [c.what, c.reason]), [['refused', 'magic_mismatch']]);
    assert.throws(() => gatedFetch({ onChange: 'log' }), TypeError);
    assert.throws(() => mediagateMiddleware({ onChange: 1 }), TypeError);
  });
});

describe('gatedFetch: what it leaves alone', () => {
  it('passes other endpoints and methods through untouched', async () => {
    const calls = [];
    const fetch = gatedFetch({ fetch: async (input, init) => (calls.push([input, init]), new Response('{}')) });
    const init = { method: 'POST', body: 'not json at all' };
    await fetch(`${provider.url}/v1/embeddings`, init);
    await fetch(`${provider.url}/v1/messages`, { method: 'GET' });
    await fetch(`${provider.url}/v1/threads/thread_1/messages`, init); // OpenAI Assistants, not Anthropic
    assert.equal(calls.length, 3);
    assert.equal(calls[2][1], init);
    assert.equal(calls[0][1], init);
  });

  it('judges a JSON body to any other endpoint wherever its media sit; a body without media arrives byte for byte', async () => {
    const fetch = gatedFetch();
    const post = (path, body, type = 'application/json') =>
      fetch(`${provider.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    const withMedia = JSON.stringify({ role: 'user', attachments: [{ preview: dataUrl('image/png', svg) }], note: 'x' });
    await post('/v1/threads/thread_1/messages', withMedia);
    const arrived = provider.records.at(-1).body.toString();
    assert.ok(!arrived.includes(b64(svg)), arrived);
    assert.match(JSON.parse(arrived).attachments[0].preview, /^\[mediagate\].*magic_mismatch/);
    const plain = '{"input": "text",  "n": 1e400}';
    await post('/v1/embeddings', plain, 'application/json; charset=utf-8');
    assert.equal(provider.records.at(-1).body.toString(), plain);
    // Not JSON (a multipart upload): not the gate's to read, sent as it is.
    const form = new FormData();
    form.append('file', new Blob([svg]), 'a.svg');
    await fetch(`${provider.url}/v1/files`, { method: 'POST', body: form });
    assert.ok(provider.records.at(-1).body.includes(Buffer.from(svg)));
  });

  it('never sends a body it cannot read as a request of the API', async () => {
    const count = provider.records.length;
    const res = await gatedFetch()(`${provider.url}/v1/chat/completions`, { method: 'POST', body: '{"model":"x"}' });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('mediagate-refused'), 'true');
    assert.match((await res.json()).error.message, /no `messages` list/);
    assert.equal(provider.records.length, count);
  });

  it('knows the endpoints by the end of their path, POST only', () => {
    const cases = [
      ['https://api.openai.com/v1/chat/completions', 'openai'],
      ['https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1', 'openai'],
      ['https://api.openai.com/v1/responses', 'responses'],
      ['https://api.openai.com/v1/responses/input_tokens', 'responses'],
      ['https://api.anthropic.com/v1/messages?beta=true', 'anthropic'],
      ['https://api.anthropic.com/v1/messages/count_tokens', 'anthropic'],
      ['https://api.openai.com/v1/responses/compact', 'responses'],
      ['https://api.openai.com/v1/conversations', 'responses'],
      ['https://api.openai.com/v1/conversations/conv_1/items', 'responses'],
      ['https://api.openai.com/v1/conversations/conv_1/items/item_1', null],
      ['https://eu-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/anthropic/models/claude:rawPredict', 'anthropic'],
      ['https://eu-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/anthropic/models/claude:streamRawPredict', 'anthropic'],
      ['https://api.openai.com/v1/threads/t/messages', null],
      ['https://api.anthropic.com/v1/messages/batches', 'anthropic-batch'],
      ['https://api.anthropic.com/v1/messages/batches/msgbatch_1/cancel', null],
      ['https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent', 'gemini'],
      ['https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', 'gemini'],
      ['https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:countTokens', 'gemini'],
      ['https://eu-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:generateContent', 'gemini'],
      ['https://api.openai.com/v1/embeddings', null],
    ];
    for (const [url, dialect] of cases) assert.equal(endpointDialect(url, 'POST'), dialect, url);
    assert.equal(endpointDialect('https://api.openai.com/v1/chat/completions', 'GET'), null);
  });

  it('refuses a misspelt option', () => {
    assert.throws(() => gatedFetch({ onrefusal: 'error' }), TypeError);
    assert.throws(() => gatedFetch({ onRefusal: 'raise' }), TypeError);
  });
});

// The AI SDK: a mock model from `ai/test` whose doGenerate and doStream post the prompt they were
// given to the loopback provider, so the record holds what the model received.
const postPrompt = (prompt) =>
  fetch(`${provider.url}/model`, {
    method: 'POST',
    body: JSON.stringify(prompt, (_, v) => (v instanceof Uint8Array ? { bytes: b64(v) } : v)),
  });
function recordingModel(provider_name = 'anthropic.messages') {
  return new MockLanguageModelV4({
    provider: provider_name,
    doStream: async ({ prompt }) => {
      await postPrompt(prompt);
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'seen' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } },
          ],
        }),
      };
    },
    doGenerate: async ({ prompt }) => {
      await postPrompt(prompt);
      return {
        content: [{ type: 'text', text: 'seen' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
        warnings: [],
      };
    },
  });
}

/** The bytes a recorded file part carries (Uint8Array recorded as `{bytes}`, or base64 text). */
function partBytes(part) {
  const data = part.data.type === 'data' ? part.data.data : part.data;
  return fromB64(typeof data === 'string' ? data : data.bytes);
}

describe('mediagateMiddleware: the Vercel AI SDK (wrapLanguageModel, generateText)', () => {
  const ask = (content, model) => async () =>
    generateText({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, ...content] }] });
  const gated = (options, name) => wrapLanguageModel({ model: recordingModel(name), middleware: mediagateMiddleware(options) });
  const parts = (record) => JSON.parse(record.body)[0].content.slice(1);

  it('a prompt with no media reaches the model byte for byte as without the middleware', async () => {
    const plain = await sent(ask([], recordingModel()));
    const through = await sent(ask([], gated()));
    assert.deepEqual(through.body, plain.body);
  });

  it('a good image reaches the model unchanged, byte for byte', async () => {
    const content = [{ type: 'file', data: good, mediaType: 'image/png' }];
    const plain = await sent(ask(content, recordingModel()));
    const through = await sent(ask(content, gated()));
    assert.deepEqual(through.body, plain.body);
    assert.deepEqual(partBytes(parts(through)[0]), Buffer.from(good));
  });

  it('an SVG claimed as PNG never reaches the model: a text part says why', async () => {
    const record = await sent(
      ask([{ type: 'file', data: svg, mediaType: 'image/png' }, { type: 'image', image: good }], gated()),
    );
    const [placeholder, kept] = parts(record);
    assert.equal(placeholder.type, 'text');
    assert.match(placeholder.text, /magic_mismatch/);
    assert.deepEqual(partBytes(kept), Buffer.from(good), 'an image part without a subtype is read from its bytes');
  });

  it("with onRefusal: 'error', the call rejects with a MediaRefusedError and the model is not called", async () => {
    const count = provider.records.length;
    const err = await ask([{ type: 'file', data: svg, mediaType: 'image/png', filename: 'chart.png' }], gated({ onRefusal: 'error' }))().then(
      () => assert.fail('the call should have failed'),
      (err) => err,
    );
    assert.ok(err instanceof MediaRefusedError, `${err?.constructor?.name}: ${err?.message}`);
    assert.match(err.message, /chart\.png: magic_mismatch/);
    assert.equal(err.refused[0].reason, 'magic_mismatch');
    assert.equal(provider.records.length, count);
  });

  for (const [name, profile] of [['anthropic.messages', 'anthropic'], ['openai.chat', 'openai']]) {
    it(`a 6 MB screenshot reaches a ${name} model downsampled within ${profile}'s limit`, async () => {
      const record = await sent(ask([{ type: 'file', data: screenshot, mediaType: 'image/png' }], gated({}, name)));
      const [part] = parts(record);
      const arrived = partBytes(part);
      const { width, height } = imageSize(arrived);
      assert.equal(part.mediaType, `image/${imageSize(arrived).type}`);
      assert.ok(Math.max(width, height) <= FIT_SIDE && width < 2400, `${width} x ${height}`);
      assert.ok(b64(arrived).length <= BASE64_LIMIT[profile], `${b64(arrived).length} base64 bytes`);
    });
  }

  it('a PDF reaches the model as the document it is', async () => {
    const record = await sent(ask([{ type: 'file', data: pdf, mediaType: 'application/pdf' }], gated()));
    assert.deepEqual(partBytes(parts(record)[0]), Buffer.from(pdf));
  });

  it('what it gives a real provider adapter is sent: @ai-sdk/anthropic posts the downsampled screenshot', async () => {
    const model = wrapLanguageModel({
      model: createAnthropic({ apiKey: 'test', baseURL: `${provider.url}/v1` })('claude-test'),
      middleware: mediagateMiddleware(),
    });
    const record = await sent(ask([{ type: 'file', data: screenshot, mediaType: 'image/png' }], model));
    assert.equal(record.path, '/v1/messages');
    const [image] = JSON.parse(record.body).messages[0].content.filter((b) => b.type === 'image');
    const arrived = fromB64(image.source.data);
    const { type, width, height } = imageSize(arrived);
    assert.equal(image.source.media_type, `image/${type}`);
    assert.ok(Math.max(width, height) <= FIT_SIDE, `${width} x ${height}`);
    assert.ok(image.source.data.length <= BASE64_LIMIT.anthropic, `${image.source.data.length} base64 bytes`);
  });

  it('with ai 6 and its @ai-sdk/anthropic 3, a changed image and a refused one arrive as the adapter sends them', async () => {
    const model = wrapLanguageModel6({
      model: createAnthropic3({ apiKey: 'test', baseURL: `${provider.url}/v1` })('claude-test'),
      middleware: mediagateMiddleware(),
    });
    const record = await sent(() =>
      generateText6({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look.' },
              { type: 'file', data: screenshot, mediaType: 'image/png' },
              { type: 'file', data: svg, mediaType: 'image/png' },
            ],
          },
        ],
      }),
    );
    const [, image, placeholder] = JSON.parse(record.body).messages[0].content;
    assert.equal(image.type, 'image');
    const arrived = fromB64(image.source.data);
    assert.equal(b64(arrived), image.source.data, 'the adapter sent base64 of the admitted bytes');
    const { type, width, height } = imageSize(arrived);
    assert.equal(image.source.media_type, `image/${type}`);
    assert.ok(Math.max(width, height) <= FIT_SIDE, `${width} x ${height}`);
    assert.equal(placeholder.type, 'text');
    assert.match(placeholder.text, /magic_mismatch/);
  });

  it('admits a streamed call the same way (streamText)', async () => {
    const model = gated();
    const result = streamText({
      model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, { type: 'file', data: svg, mediaType: 'image/png' }] }],
    });
    assert.equal(await result.text, 'seen');
    const [placeholder] = parts(provider.records.at(-1));
    assert.equal(placeholder.type, 'text');
    assert.match(placeholder.text, /magic_mismatch/);
  });

  it('admits the file items of a tool result too', async () => {
    const model = gated();
    const messages = [
      { role: 'user', content: 'Take a screenshot.' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'screenshot', input: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'screenshot',
            output: { type: 'content', value: [{ type: 'file-data', data: b64(svg), mediaType: 'image/png' }] },
          },
        ],
      },
    ];
    const record = await sent(() => generateText({ model, messages }));
    const tool = JSON.parse(record.body).find((m) => m.role === 'tool');
    const [item] = tool.content[0].output.value;
    assert.equal(item.type, 'text');
    assert.match(item.text, /magic_mismatch/);
  });
});
