// @mediagate/preflight/ai-sdk: a language-model middleware for the Vercel AI SDK (`ai`) that puts
// the image and PDF parts of every prompt through the gate before the model sees them:
//
//   const model = wrapLanguageModel({ model: anthropic('claude-…'), middleware: mediagateMiddleware() });
//
// The prompt's media parts (user and assistant `file` parts, `file` items of tool results) are
// laid out as the blocks of one provider request and admitted by the component's request walk
// (`admitRequest`), so the request-level rules (images per request, bytes per request, the tighter
// side for many images) hold across the whole prompt; the answer is put back part by part.

import { PROFILES } from './facts.js';
import { admit, admitRequest } from './index.js';
import { WRAPPER_OPTION_KEYS, checkWrapperOptions } from './wrapper-options.js';

export { ON_REFUSAL } from './wrapper-options.js';

/** A prompt part (or tool-result item) refused with `onRefusal: 'error'`: `refused` lists why. */
export class MediaRefusedError extends Error {
  constructor(message, refused) {
    super(message);
    this.name = 'MediaRefusedError';
    this.refused = refused;
  }
}

// The AI SDK names its providers `anthropic.messages`, `openai.chat`, `google.generative-ai`, …
const PROVIDER_PREFIXES = [
  [/^anthropic|bedrock.*anthropic|vertex\.anthropic/, 'anthropic'],
  [/^(openai|azure)/, 'openai'],
  [/^(google|vertex)/, 'gemini'],
  [/ollama/, 'ollama'],
];

/**
 * The gate's provider profile for an AI SDK model: `model.provider` read by its prefix, else
 * `anthropic` (the tightest limits of the four, so an unknown provider gets no larger image than
 * any provider takes).
 */
export function providerOf(model) {
  const name = String(model?.provider ?? '').toLowerCase();
  for (const [pattern, provider] of PROVIDER_PREFIXES) if (pattern.test(name)) return provider;
  return PROFILES[0]; // the gate's default, as every integration's for a model it cannot place
}

function isMedia(mediaType) {
  const m = String(mediaType ?? '').toLowerCase();
  return m === 'image' || m.startsWith('image/') || m === 'application/pdf';
}

function base64Of(bytes) {
  if (typeof Buffer !== 'undefined') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * What a file part carries, as the gate reads it: `{ base64 }`, `{ url }`, or null (a provider
 * file reference or inline text: nothing of it is sent from here). Takes the AI SDK's tagged data
 * (`{ type: 'data' | 'url' | 'reference' | 'text' }`) and the untagged form of its v3 models
 * (`Uint8Array`, base64 text, `URL`).
 */
function payloadOf(data) {
  if (data instanceof Uint8Array) return { base64: base64Of(data) };
  if (typeof data === 'string') return { base64: data };
  if (data instanceof URL) return { url: data.href };
  if (data && typeof data === 'object') {
    if (data.type === 'data') return payloadOf(data.data);
    if (data.type === 'url') return { url: data.originalUrl ?? String(data.url) };
  }
  return null;
}

/**
 * The type a part claims. The AI SDK lets a part name only the top-level type (`image`, `image/*`)
 * and leaves the subtype to the provider adapter, which reads it from the bytes; the gate's own
 * signature reader does the same here (an SVG so sent is then refused as the SVG it is).
 */
async function claimOf(part, payload, g) {
  const mime = String(part.mediaType);
  if (!/^image(\/\*)?$/i.test(mime) || payload.base64 === undefined) return mime;
  const head = payload.base64.slice(0, 64);
  let bytes;
  try {
    bytes = Uint8Array.from(atob(head.slice(0, head.length - (head.length % 4))), (c) => c.charCodeAt(0));
  } catch {
    return mime; // not base64: the gate refuses it in words
  }
  // The gate's answer on the head names the type the bytes carry (`sniffed`); its verdict is moot.
  const { sniffed } = g ? g.admit(bytes) : await admit(bytes);
  return sniffed.startsWith('image/') ? sniffed : mime;
}

/** The part as a block of the `api` request (what the component's walk reads). */
function blockOf(api, part, payload, mime) {
  const pdf = mime.toLowerCase() === 'application/pdf';
  if (api === 'anthropic') {
    const source = payload.url !== undefined ? { type: 'url', url: payload.url } : { type: 'base64', media_type: mime, data: payload.base64 };
    return { type: pdf ? 'document' : 'image', source };
  }
  const url = payload.url ?? `data:${mime};base64,${payload.base64}`;
  if (pdf) return { type: 'file', file: { filename: part.filename ?? 'document.pdf', file_data: url } };
  return { type: 'image_url', image_url: { url } };
}

/** The admitted block back as `{ mediaType, base64 }`, or `{ text }` for a placeholder. */
function admittedOf(block) {
  if (block.type === 'text') return { text: block.text };
  if (block.source) return { mediaType: block.source.media_type, base64: block.source.data };
  const url = block.image_url?.url ?? block.file?.file_data;
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url ?? '');
  if (!m) throw new Error(`the gate answered a block this middleware cannot read back (${block.type})`);
  return { mediaType: m[1], base64: m[2] };
}

/** Every media part of the prompt with where it sits: `{ holder, index, part, payload }`. */
function mediaSlots(prompt) {
  const slots = [];
  const visit = (holder) => {
    holder.forEach((part, index) => {
      if (part?.type === 'file' && isMedia(part.mediaType)) {
        const payload = payloadOf(part.data);
        if (payload) slots.push({ holder, index, part, payload });
      } else if (part?.type === 'tool-result' && part.output?.type === 'content' && Array.isArray(part.output.value)) {
        visit(part.output.value);
      }
    });
  };
  for (const message of prompt) if (Array.isArray(message.content)) visit(message.content);
  return slots;
}

/**
 * Admit the media parts of `prompt` (an AI SDK language-model prompt): a new prompt with each
 * part admitted (downsampled parts carry the admitted bytes as base64 and their media type) or
 * replaced by a text part that says why; the same prompt when nothing changed. Answers
 * `{ prompt, changes }` (`changes`: the gate's, `path` naming the part's place in the request the
 * parts were laid out as). Options as `mediagateMiddleware`'s, with `provider` required.
 */
export async function admitPrompt(prompt, { provider, onRefusal = 'placeholder', onChange, gate, ...admitOptions } = {}) {
  const slots = mediaSlots(prompt);
  if (slots.length === 0) return { prompt, changes: [] };
  const api = provider === 'anthropic' ? 'anthropic' : 'openai';
  const g = gate ? await gate : null;
  const content = [];
  for (const s of slots) content.push(blockOf(api, s.part, s.payload, await claimOf(s.part, s.payload, g)));
  const request = { messages: [{ role: 'user', content }] };
  const options = Object.fromEntries(Object.entries({ ...admitOptions, provider }).filter(([, v]) => v !== undefined));
  const answer = g ? g.admitRequest(api, request, options) : await admitRequest(api, request, options);
  const { refusal } = answer;
  if (refusal !== null && onChange) onChange({ path: '', what: 'refused', reason: refusal.reason, message: refusal.message, rule: refusal.rule });
  if (refusal !== null) throw new MediaRefusedError(`mediagate refused the prompt's media: ${refusal.reason}: ${refusal.message}`, []);
  if (answer.changed.length === 0) return { prompt, changes: [] };
  if (onChange) for (const change of answer.changed) onChange(change);
  const refused = answer.changed.filter((c) => c.what === 'refused');
  if (onRefusal === 'error' && refused.length > 0) {
    const words = refused.map((c) => `${slots[slotIndex(c.path)].part.filename ?? `part ${slotIndex(c.path)}`}: ${c.reason}: ${c.message}`);
    throw new MediaRefusedError(`mediagate refused ${refused.length} media part${refused.length === 1 ? '' : 's'} of the prompt: ${words.join('; ')}`, refused);
  }
  // Copy the containers that change, so the caller's prompt is left as it was.
  const copies = new Map();
  const copyOf = (holder) => {
    if (!copies.has(holder)) copies.set(holder, [...holder]);
    return copies.get(holder);
  };
  const blocks = answer.request.messages[0].content;
  for (const change of answer.changed) {
    const i = slotIndex(change.path);
    const slot = slots[i];
    const admitted = admittedOf(blocks[i]);
    copyOf(slot.holder)[slot.index] =
      admitted.text !== undefined
        ? { type: 'text', text: admitted.text }
        : { ...slot.part, mediaType: admitted.mediaType, data: inTheFormOf(slot.part.data, admitted.base64) };
  }
  return { prompt: rebuild(prompt, copies), changes: answer.changed };
}

/**
 * The admitted bytes as the part gave its own: tagged (`{ type: 'data', data }`, the v4 models of
 * `ai` 7) or bare base64 text (the v3 models of `ai` 6, whose adapters take `data` as bytes, base64
 * text or a URL, and would write a tagged object as `[object Object]`).
 */
function inTheFormOf(original, base64) {
  return original?.type === 'data' ? { ...original, data: base64 } : base64;
}

function slotIndex(path) {
  const m = /^\/messages\/0\/content\/(\d+)$/.exec(path);
  if (!m) throw new Error(`the gate named a change at ${path}, not one of the prompt's media parts`);
  return Number(m[1]);
}

/** The prompt with the copied containers in place of their originals (new objects on the way). */
function rebuild(prompt, copies) {
  const parts = (holder) => {
    const list = copies.get(holder) ?? holder;
    let out = list;
    list.forEach((part, index) => {
      if (part?.type === 'tool-result' && part.output?.type === 'content' && Array.isArray(part.output.value)) {
        const value = parts(part.output.value);
        if (value !== part.output.value) {
          if (out === holder) out = [...holder];
          out[index] = { ...part, output: { ...part.output, value } };
        }
      }
    });
    return out;
  };
  return prompt.map((message) => {
    if (!Array.isArray(message.content)) return message;
    const content = parts(message.content);
    return content === message.content ? message : { ...message, content };
  });
}

/**
 * A `wrapLanguageModel` middleware that admits the image and PDF parts of every call's prompt
 * (`transformParams`, for generate and stream alike).
 *
 * Options: `provider` (the gate's profile; default read from the model's provider name, else
 * `anthropic`), `downsample`, `verify`, `convert` (as `admitRequest` takes them), `gate` (a `Gate`
 * or a promise of one; default the module-level shared instance), `onChange` (called with each
 * change the gate made, refusals too), `onRefusal`: `'placeholder'`
 * (default: a refused part becomes a text part that says why) or `'error'` (the call rejects with
 * a `MediaRefusedError` and the model is not called).
 */
export function mediagateMiddleware(options = {}) {
  checkWrapperOptions('mediagateMiddleware', options, WRAPPER_OPTION_KEYS);
  return {
    specificationVersion: 'v4',
    async transformParams({ params, model }) {
      const provider = options.provider ?? providerOf(model);
      const { prompt } = await admitPrompt(params.prompt, { ...options, provider });
      return prompt === params.prompt ? params : { ...params, prompt };
    },
  };
}
