import type { AdmitOptions, Gate, Provider, RequestAdmission } from './index.js';
import type { OnRefusal, WrapperOptions } from './wrapper-options.js';

export type { OnRefusal } from './wrapper-options.js';
export { ON_REFUSAL } from './wrapper-options.js';

export interface GatedFetchOptions extends WrapperOptions {
  /** The fetch that sends (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** The per-image profile; default the endpoint's own (`openai`, `anthropic`). */
  provider?: Provider;
  /** `'placeholder'` (default) or `'error'`: nothing sent, HTTP 400 answered (`error.type` `'mediagate_refused'`). */
  onRefusal?: OnRefusal;
}

/** The dialect of a request to `url` by `method`, or null when its body is not admitted. */
export function endpointDialect(url: string | URL, method?: string): 'openai' | 'responses' | 'anthropic' | null;

/** A request body (JSON text) through the gate: `admitRequest`'s answer, `request` as text (the body to send). */
export function admitRequestBody(
  dialect: 'openai' | 'responses' | 'anthropic',
  text: string,
  options?: AdmitOptions,
  gate?: Gate | Promise<Gate>,
): Promise<Omit<RequestAdmission, 'request'> & { request: string | null }>;

/** A `fetch` that admits every POST body to chat-completions, responses and messages endpoints. */
export function gatedFetch(options?: GatedFetchOptions): typeof globalThis.fetch;
