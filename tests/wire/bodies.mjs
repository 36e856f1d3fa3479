// The request bodies of the wire suite, made here: each names the URL path a client posts it to,
// the dialect the gate judges it in, and what must hold of what reaches the provider. The media
// are made by code (js/test's encoders) or read from tests/corpus/ (its README says whose).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { GIF_1X1, b64, corruptPng, widePng } from '../../js/test/fixtures.js';
import { CORPUS, SVG_BYTES, minimalPdf, noisePng } from '../../js/test/helpers.js';

const dataUrl = (mime, bytes) => `data:${mime};base64,${b64(bytes)}`;

// Concrete paths a client posts to. They are not the endpoint list: the suite checks that the list
// (REQUEST_ENDPOINTS, generated from the guest) gives each path the dialect its body is written in.
const PATH = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  inputTokens: '/v1/responses/input_tokens',
  compact: '/v1/responses/compact',
  conversations: '/v1/conversations',
  conversationItems: '/v1/conversations/conv_wire/items',
  messages: '/v1/messages',
  countTokens: '/v1/messages/count_tokens',
  rawPredict: '/v1/projects/wire/locations/us-east5/publishers/anthropic/models/claude-wire:rawPredict',
  streamRawPredict: '/v1/projects/wire/locations/us-east5/publishers/anthropic/models/claude-wire:streamRawPredict',
  generateContent: '/v1beta/models/gemini-wire:generateContent',
  streamGenerateContent: '/v1beta/models/gemini-wire:streamGenerateContent',
  geminiCountTokens: '/v1beta/models/gemini-wire:countTokens',
  batches: '/v1/messages/batches',
};

/**
 * The bodies, as `{ id, path, dialect, text, expect, bad, keep }`:
 *   expect.identical   the body arrives byte for byte
 *   expect.changed     what arrives differs from what was sent
 *   expect.refused     how many blocks the gate refuses (each replaced in its slot by its words)
 *   expect.whole       the request is refused whole: nothing arrives from any front end
 *   bad                payloads (bytes) that must not arrive, in any string of the body
 *   keep               strings that must arrive exactly as sent (audio)
 */
export async function makeBodies() {
  const png = await noisePng(48, 32, 3);
  const png2 = await noisePng(20, 20, 5);
  const wide = await widePng(); // 2400 x 10: fitted into 2000 x 2000
  const tall = await noisePng(12, 2300, 9); // 12 x 2300: fitted too
  const jpegExif = readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg')); // EXIF (GPS) dropped
  const bigJpeg = readFileSync(join(CORPUS, 'bench', 'photo-12mp.jpg')); // 12 MP: fitted
  const pdf = minimalPdf('wire suite');
  const shortPdf = new TextEncoder().encode('%PDF-1.4\n'); // nine bytes: no document
  const cutPng = png.subarray(0, Math.floor(png.length * 0.6));
  const broken = await corruptPng(); // all chunks there, the pixels undecodable
  const svg = SVG_BYTES;
  // A WAV header and a few samples: audio passes a request as it is.
  const wav = Buffer.concat([Buffer.from('RIFF$\0\0\0WAVEfmt ', 'latin1'), Buffer.alloc(48, 7)]);
  const wavB64 = b64(wav);

  const bodies = [];
  const add = (id, path, dialect, value, extra = {}) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    bodies.push({ id, path, dialect, text, expect: {}, bad: [], keep: [], ...extra });
  };
  const chat = (content, more = {}) => ({ model: 'gpt-wire', messages: [{ role: 'user', content }], ...more });
  const imageUrl = (url) => ({ type: 'image_url', image_url: { url } });
  const text = (t) => ({ type: 'text', text: t });

  // ---- OpenAI Chat Completions
  add('chat: a PNG data URL', PATH.chat, 'openai', chat([text('what is this?'), imageUrl(dataUrl('image/png', png))]));
  add('chat: a JPEG with GPS EXIF (dropped)', PATH.chat, 'openai', chat([imageUrl(dataUrl('image/jpeg', jpegExif))]), {
    expect: { changed: true },
    bad: [jpegExif],
  });
  add('chat: a still GIF', PATH.chat, 'openai', chat([imageUrl(dataUrl('image/gif', GIF_1X1))]));
  add(
    'chat: a PDF file part',
    PATH.chat,
    'openai',
    chat([text('summarise'), { type: 'file', file: { filename: 'wire.pdf', file_data: dataUrl('application/pdf', pdf) } }]),
  );
  add(
    'chat: input_audio beside an image',
    PATH.chat,
    'openai',
    chat([{ type: 'input_audio', input_audio: { data: wavB64, format: 'wav' } }, imageUrl(dataUrl('image/png', png2))]),
    { keep: [wavB64] },
  );
  add(
    'chat: 30 images over two messages',
    PATH.chat,
    'openai',
    {
      model: 'gpt-wire',
      messages: [
        { role: 'user', content: Array.from({ length: 15 }, () => imageUrl(dataUrl('image/png', png2))) },
        { role: 'assistant', content: 'seen' },
        { role: 'user', content: Array.from({ length: 15 }, (_, i) => imageUrl(dataUrl(i % 2 ? 'image/gif' : 'image/png', i % 2 ? GIF_1X1 : png))) },
      ],
    },
  );
  add('chat: an oversize PNG (2400 px wide)', PATH.chat, 'openai', chat([imageUrl(dataUrl('image/png', wide))]), {
    expect: { changed: true },
    bad: [wide],
  });
  add('chat: an SVG that claims to be a PNG', PATH.chat, 'openai', chat([text('look'), imageUrl(dataUrl('image/png', svg))]), {
    expect: { refused: 1 },
    bad: [svg],
  });
  add('chat: a truncated PNG', PATH.chat, 'openai', chat([imageUrl(dataUrl('image/png', cutPng))]), {
    expect: { changed: true },
    bad: [cutPng],
  });
  add('chat: a PNG whose pixels do not decode', PATH.chat, 'openai', chat([imageUrl(dataUrl('image/png', broken))]), {
    expect: { refused: 1 },
    bad: [broken],
  });
  add(
    'chat: a nine-byte %PDF-1.4 file part',
    PATH.chat,
    'openai',
    chat([{ type: 'file', file: { filename: 'short.pdf', file_data: dataUrl('application/pdf', shortPdf) } }]),
    { expect: { refused: 1 }, bad: [shortPdf] },
  );
  add(
    'chat: data: URLs under keys no API names',
    PATH.chat,
    'openai',
    chat('plain text', { metadata: { thumbnail: dataUrl('image/png', svg) }, x_attachment: dataUrl('image/png', wide) }),
    { expect: { refused: 1 }, bad: [svg, wide] },
  );
  add('chat: an http image URL (the provider fetches it)', PATH.chat, 'openai', chat([imageUrl('https://example.com/cat.png')]), {
    expect: { identical: true },
  });
  // Odd JSON a re-serialising host would change: a number past double range, a negative zero
  // with an exponent, escapes (a solidus, a lone surrogate, a surrogate pair), spacing, key order.
  add(
    'chat: no media, odd JSON',
    PATH.chat,
    'openai',
    '{ "temperature": 1e400, "model" : "gpt-wire",\n  "messages": [ {"role":"user","content":"caf\\u00e9 \\ud800 \\ud83d\\ude00 \\/ \\"quoted\\" data:image/png;base64 is words"} ],\n\t"top_p": -0.0E-5, "seed": 12345678901234567890123 }',
    { expect: { identical: true } },
  );
  add(
    'chat: no media, a text that mentions a data: URL',
    PATH.chat,
    'openai',
    chat([text(`this text quotes ${dataUrl('image/png', svg)} and is not judged`)]),
    { expect: { identical: true } },
  );
  add('chat: not a Chat Completions request (no messages)', PATH.chat, 'openai', { model: 'gpt-wire', prompt: 'hi' }, {
    expect: { whole: true },
  });

  // ---- OpenAI Responses (judged inside the guest's envelope)
  const userInput = (content) => ({ model: 'gpt-wire', input: [{ role: 'user', content }] });
  add(
    'responses: input_image',
    PATH.responses,
    'responses',
    userInput([{ type: 'input_text', text: 'what is it?' }, { type: 'input_image', image_url: dataUrl('image/png', png) }]),
  );
  add(
    'responses: input_file with file_data',
    PATH.responses,
    'responses',
    userInput([{ type: 'input_file', filename: 'wire.pdf', file_data: dataUrl('application/pdf', pdf) }]),
  );
  add(
    'responses: input_file with a data: file_url (an SVG named PDF)',
    PATH.responses,
    'responses',
    userInput([{ type: 'input_file', file_url: dataUrl('application/pdf', svg) }]),
    { expect: { refused: 1 }, bad: [svg] },
  );
  add(
    'responses: a computer-use screenshot, oversize',
    PATH.responses,
    'responses',
    {
      model: 'computer-use-wire',
      previous_response_id: 'resp_1',
      input: [
        {
          type: 'computer_call_output',
          call_id: 'call_1',
          output: { type: 'computer_screenshot', image_url: dataUrl('image/png', wide) },
        },
      ],
    },
    { expect: { changed: true }, bad: [wide] },
  );
  add(
    'responses: an SVG computer-use screenshot',
    PATH.responses,
    'responses',
    {
      model: 'computer-use-wire',
      input: [{ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: dataUrl('image/png', svg) } }],
    },
    { expect: { refused: 1 }, bad: [svg] },
  );
  add(
    'responses: input_tokens, no media, odd JSON',
    PATH.inputTokens,
    'responses',
    '{"model":"gpt-wire","input":"\\u2028 line separator \\\\ backslash","max_output_tokens":1E+2,"x":[ ]}',
    { expect: { identical: true } },
  );
  add('responses: compact with a JPEG', PATH.compact, 'responses', userInput([{ type: 'input_image', image_url: dataUrl('image/jpeg', jpegExif) }]), {
    expect: { changed: true },
    bad: [jpegExif],
  });
  add(
    'conversations: create with items',
    PATH.conversations,
    'responses',
    { items: [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: dataUrl('image/png', tall) }] }] },
    { expect: { changed: true }, bad: [tall] },
  );
  add(
    'conversations: items added, an SVG among them',
    PATH.conversationItems,
    'responses',
    {
      items: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'two' }, { type: 'input_image', image_url: dataUrl('image/png', svg) }] },
        { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: dataUrl('image/gif', GIF_1X1) }] },
      ],
    },
    { expect: { refused: 1 }, bad: [svg] },
  );

  // ---- Anthropic Messages
  const messages = (content, more = {}) => ({ model: 'claude-wire', max_tokens: 64, messages: [{ role: 'user', content }], ...more });
  const image = (mime, bytes) => ({ type: 'image', source: { type: 'base64', media_type: mime, data: b64(bytes) } });
  const documentBlock = (bytes) => ({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(bytes) } });
  add('anthropic: an image block', PATH.messages, 'anthropic', messages([image('image/png', png), text('and?')]));
  add('anthropic: a PDF document block', PATH.messages, 'anthropic', messages([documentBlock(pdf)]));
  add(
    'anthropic: a tool_result with two images, one an SVG',
    PATH.messages,
    'anthropic',
    {
      model: 'claude-wire',
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'take a screenshot' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'shot', input: { window: 'main' } }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: [image('image/png', svg), image('image/png', wide), text('done')] }],
        },
      ],
    },
    { expect: { refused: 1 }, bad: [svg, wide] },
  );
  add('anthropic: count_tokens with an image', PATH.countTokens, 'anthropic', messages([image('image/gif', GIF_1X1)]));
  add('anthropic: rawPredict on Vertex, an oversize JPEG', PATH.rawPredict, 'anthropic', messages([image('image/jpeg', bigJpeg)]), {
    expect: { changed: true },
    bad: [bigJpeg],
  });
  add(
    'anthropic: streamRawPredict, a nine-byte PDF',
    PATH.streamRawPredict,
    'anthropic',
    messages([documentBlock(shortPdf), text('read it')]),
    { expect: { refused: 1 }, bad: [shortPdf] },
  );
  add(
    'anthropic: 105 images (past the request limit)',
    PATH.messages,
    'anthropic',
    messages(Array.from({ length: 105 }, () => image('image/gif', GIF_1X1))),
    { expect: { refused: 5 } },
  );
  add(
    'anthropic: bare base64 with a PNG signature under an unknown key',
    PATH.messages,
    'anthropic',
    messages('hello', { metadata: { user_id: 'u1', attachment: b64(tall) } }),
    { expect: { changed: true }, bad: [tall] },
  );
  add(
    'anthropic: no media, odd JSON',
    PATH.messages,
    'anthropic',
    '{"model":"claude-wire","max_tokens":64e0,"messages":[{"role":"user","content":[{"type":"text","text":"\\u0000 nul, \\t tab, \\ud83d\\ude00, \\udfff alone"}]}],"metadata":{"n":-1e-400,"deep":[[[[[[[[[[{}]]]]]]]]]]}}',
    { expect: { identical: true } },
  );
  add('anthropic: no media, plain', PATH.countTokens, 'anthropic', messages('how many tokens is this?'), { expect: { identical: true } });

  // ---- Gemini generateContent (the dialect the other engineer is adding)
  const gemini = (parts, more = {}) => ({ contents: [{ role: 'user', parts }], ...more });
  add(
    'gemini: inline_data parts, one an SVG',
    PATH.generateContent,
    'gemini',
    gemini([{ text: 'two pictures' }, { inline_data: { mime_type: 'image/png', data: b64(png) } }, { inline_data: { mime_type: 'image/png', data: b64(svg) } }]),
    { expect: { refused: 1 }, bad: [svg] },
  );
  add(
    'gemini: inlineData (camelCase), oversize, streamed',
    PATH.streamGenerateContent,
    'gemini',
    gemini([{ inlineData: { mimeType: 'image/png', data: b64(wide) } }], { generationConfig: { temperature: 0 } }),
    { expect: { changed: true }, bad: [wide] },
  );
  add(
    'gemini: countTokens with a PDF',
    PATH.geminiCountTokens,
    'gemini',
    gemini([{ inlineData: { mimeType: 'application/pdf', data: b64(shortPdf) } }]),
    { expect: { refused: 1 }, bad: [shortPdf] },
  );

  // ---- Anthropic Message Batches (the dialect the other engineer is adding)
  const batch = (...requests) => ({ requests: requests.map((params, i) => ({ custom_id: `wire-${i}`, params })) });
  add(
    'anthropic-batch: two requests, an SVG in the second',
    PATH.batches,
    'anthropic-batch',
    batch(messages([image('image/png', png)]), messages([image('image/png', svg)])),
    { expect: { refused: 1 }, bad: [svg] },
  );
  add(
    'anthropic-batch: an oversize image and a document',
    PATH.batches,
    'anthropic-batch',
    batch(messages([image('image/png', wide)]), messages([documentBlock(pdf)])),
    { expect: { changed: true }, bad: [wide] },
  );

  return bodies;
}
