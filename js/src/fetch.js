// @mediagate/preflight/fetch: a `fetch` that puts every request body bound for a model API through
// the gate before it leaves. The OpenAI and Anthropic TypeScript SDKs take it as their `fetch`
// option, so every image and PDF a program sends (however it was built) is admitted under the
// provider's profile:
//
//   const client = new OpenAI({ fetch: gatedFetch() });
//
// The walk over the request is the component's (`admitRequest`); this module only finds the
// endpoint, hands the body over and sends what the gate answers.

import { REQUEST_ENDPOINTS, RESPONSES_ENVELOPE } from './facts.js';
import { admitRequest } from './index.js';
import { WRAPPER_OPTION_KEYS, checkWrapperOptions } from './wrapper-options.js';

export { ON_REFUSAL } from './wrapper-options.js';

// The endpoints whose bodies are admitted, by the end of the URL's path, as the guest lists them
// (facts.js): a `*` stands for one path segment.
const ENDPOINTS = REQUEST_ENDPOINTS.map(([pattern, dialect]) => ({
  ending: new RegExp(`${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
  dialect,
}));

const OPTION_KEYS = ['fetch', ...WRAPPER_OPTION_KEYS];

/**
 * The dialect a request to `url` with `method` is in (`'openai'`, `'responses'`, `'anthropic'`,
 * `'gemini'`, `'anthropic-batch'`), or null when its body is not admitted (other endpoints, other
 * methods).
 */
export function endpointDialect(url, method = 'GET') {
  if (String(method).toUpperCase() !== 'POST') return null;
  let path;
  try {
    path = new URL(String(url), 'http://relative.invalid').pathname.replace(/\/+$/, '');
  } catch {
    return null;
  }
  const found = ENDPOINTS.find((e) => e.ending.test(path));
  return found ? found.dialect : null;
}

// The Responses API is not one of the component's request dialects (its media sit in `input`
// items, not `messages`): its body goes to the Chat Completions walk inside the envelope the
// guest defines (facts.js), and is cut back out of the answer exactly.
const { prefix: RESPONSES_PREFIX, suffix: RESPONSES_SUFFIX, pointer: RESPONSES_POINTER } = RESPONSES_ENVELOPE;

/** The answer's keys, with `request` as text (the admitted body; null when refused whole). */
function withRequestText(answer) {
  return { ...answer, request: answer.requestText };
}

function unwrapResponses(answer) {
  const rebase = (path) => (path.startsWith(RESPONSES_POINTER) ? path.slice(RESPONSES_POINTER.length) : path);
  if (answer.refusal !== null) return withRequestText(answer);
  const changed = answer.changed.map((c) => ({ ...c, path: rebase(c.path) }));
  const request = answer.requestText;
  if (!request.startsWith(RESPONSES_PREFIX) || !request.endsWith(RESPONSES_SUFFIX)) {
    throw new Error('the gate answered a Responses request in a shape this wrapper cannot cut back out');
  }
  return {
    ...answer,
    request: request.slice(RESPONSES_PREFIX.length, request.length - RESPONSES_SUFFIX.length),
    changed,
    refused: answer.refused.map(rebase),
  };
}

/**
 * Admit a request body (JSON text) in `dialect` (`'openai'` Chat Completions, `'responses'`,
 * `'anthropic'` Messages, `'gemini'`, `'anthropic-batch'`): `admitRequest`'s answer (the keys `mediagate admit-request --json`
 * prints), with `request` as text: the body to send. `options.provider` defaults to the API's own
 * profile; `gate` is a `Gate` (else the module-level shared one).
 */
export async function admitRequestBody(dialect, text, options = {}, gate) {
  const g = gate ? await gate : null;
  const admitText = (api, body) => (g ? g.admitRequest(api, body, options) : admitRequest(api, body, options));
  if (dialect === 'responses') {
    return unwrapResponses(await admitText('openai', RESPONSES_PREFIX + text + RESPONSES_SUFFIX));
  }
  return withRequestText(await admitText(dialect, text));
}

async function bodyText(body) {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    const view = body instanceof ArrayBuffer ? new Uint8Array(body) : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(view);
  }
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.text();
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) return new Response(body).text();
  // URLSearchParams, FormData: not a JSON request to a model API; nothing is sent unchecked.
  throw new TypeError(`gatedFetch: a request body of type ${body?.constructor?.name ?? typeof body} cannot be read as JSON text`);
}

function refusalWords(dialect, answer) {
  const { refusal } = answer;
  if (refusal !== null) return `mediagate refused the request: ${refusal.reason}: ${refusal.message}`;
  const each = answer.changed
    .filter((c) => c.what === 'refused')
    .map((c) => `${c.path || '/'}: ${c.reason}: ${c.message}`);
  return `mediagate refused ${each.length} block${each.length === 1 ? '' : 's'} of the ${dialect} request: ${each.join('; ')}`;
}

// Each API's own error body, so its SDK raises its own error with the gate's words (OpenAI's
// shape for the rest).
const anthropicError = (error) => ({ type: 'error', error });
const ERROR_BODIES = {
  anthropic: anthropicError,
  'anthropic-batch': anthropicError,
  gemini: (error, message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT', details: [error] } }),
};

/**
 * The answer given instead of sending a refused request: HTTP 400 in the provider's own error
 * shape (so the SDK raises its `BadRequestError`), `x-should-retry: false` (the same body would be
 * refused again), and `mediagate-refused: true` so a log can tell it from the provider's.
 */
function refusalResponse(dialect, answer) {
  const message = refusalWords(dialect, answer);
  const { refusal } = answer;
  const detail =
    refusal === null
      ? { refused: answer.changed.filter((c) => c.what === 'refused') }
      : { reason: refusal.reason, rule: refusal.rule, unusable: refusal.unusable };
  const error = { type: 'mediagate_refused', message, mediagate: detail };
  const body = ERROR_BODIES[dialect]?.(error, message) ?? { error: { ...error, code: 'mediagate_refused', param: null } };
  return new Response(JSON.stringify(body), {
    status: 400,
    statusText: 'Refused by mediagate',
    headers: { 'content-type': 'application/json', 'x-should-retry': 'false', 'mediagate-refused': 'true' },
  });
}

function checkOptions(options) {
  checkWrapperOptions('gatedFetch', options, OPTION_KEYS);
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new TypeError('gatedFetch: fetch must be a function');
}

/**
 * A `fetch` that admits every POST body to a model endpoint before it leaves (each endpoint of
 * the guest's list in its dialect, any other JSON body as `'other'`: its media judged wherever
 * they sit, no request rules); every other request passes untouched.
 *
 * Options: `fetch` (the one that sends, default `globalThis.fetch`); `provider` (the per-image
 * profile; default the endpoint's own: `openai` for chat-completions and responses, `anthropic`
 * for messages); `downsample`, `verify`, `convert` (as `admitRequest` takes them); `gate` (a
 * `Gate` or a promise of one, from `createGate`; default the module-level shared instance);
 * `onChange`: called with each change the gate made (refusals too, also when nothing is sent), its
 * `dialect` added; `onRefusal`: `'placeholder'` (default: a refused block is replaced in its slot by a text block
 * that says why, and the request is sent) or `'error'` (nothing is sent; the answer is HTTP 400,
 * which the SDKs raise as their `BadRequestError`, its `error.type` `'mediagate_refused'`).
 * A body the gate cannot read as a request of the API is never sent: it gets that answer whatever
 * `onRefusal` says.
 */
export function gatedFetch(options = {}) {
  checkOptions(options);
  const { fetch: send = globalThis.fetch, onRefusal = 'placeholder', onChange, gate, ...given } = options;
  const admitOptions = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  if (typeof send !== 'function') throw new TypeError('gatedFetch: no fetch to send with (pass options.fetch)');
  return async function mediagateFetch(input, init) {
    const isRequest = typeof Request !== 'undefined' && input instanceof Request;
    const method = init?.method ?? (isRequest ? input.method : 'GET');
    // Only a POST carries a body to judge: anything else goes untouched, without a look at it.
    if (String(method).toUpperCase() !== 'POST') return send(input, init);
    const headers = new Headers(init?.headers ?? (isRequest ? input.headers : undefined));
    const dialect = endpointDialect(isRequest ? input.url : input, method) ?? (isJson(headers.get('content-type')) ? 'other' : null);
    if (dialect === null) return send(input, init);
    // fetch sends the init's body unless it is null or undefined, else the Request's own.
    const rawBody = init?.body != null ? init.body : isRequest ? await input.clone().text() : undefined;
    if (rawBody == null) return send(input, init);
    const text = await bodyText(rawBody);
    const answer = await admitRequestBody(dialect, text, admitOptions, gate);
    if (onChange) tell(onChange, dialect, answer);
    if (answer.refusal !== null || (onRefusal === 'error' && answer.refused.length > 0)) return refusalResponse(dialect, answer);
    // A stream was read to the end: the text goes in its place. Any other body is sent as given.
    const consumed = typeof ReadableStream !== 'undefined' && rawBody instanceof ReadableStream;
    if (answer.changed.length === 0) return send(input, consumed ? { ...init, body: text } : init);
    // The admitted body; its length is not the caller's any more.
    headers.delete('content-length');
    return send(isRequest ? input.url : input, { ...(isRequest ? requestInit(input) : {}), ...init, headers, body: answer.request });
  };
}

/** Whether a `Content-Type` names JSON (`application/json`, or a `+json` type). */
function isJson(contentType) {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** Each change of `answer` to `onChange`, with the dialect; a request refused whole as one change at `''`. */
function tell(onChange, dialect, answer) {
  const { refusal } = answer;
  const changes =
    refusal === null ? answer.changed : [{ path: '', what: 'refused', reason: refusal.reason, message: refusal.message, rule: refusal.rule }];
  for (const change of changes) onChange({ ...change, dialect });
}

function requestInit(request) {
  return { method: request.method, headers: request.headers, signal: request.signal, redirect: request.redirect };
}
