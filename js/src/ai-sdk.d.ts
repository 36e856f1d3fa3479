import type { AdmitOptions, Provider, RequestChange } from './index.js';
import type { OnRefusal, WrapperOptions } from './wrapper-options.js';

export type { OnRefusal } from './wrapper-options.js';
export { ON_REFUSAL } from './wrapper-options.js';

export interface MediagateMiddlewareOptions extends WrapperOptions {
  /** The gate's profile; default read from the model's provider name, else `anthropic`. */
  provider?: Provider;
  /** `'placeholder'` (default) or `'error'` (the call rejects with a `MediaRefusedError`). */
  onRefusal?: OnRefusal;
}

/** Media parts refused with `onRefusal: 'error'`; `refused` is the gate's changes for them. */
export class MediaRefusedError extends Error {
  readonly refused: RequestChange[];
}

/** The gate's profile for an AI SDK model (by `model.provider`), else `anthropic`. */
export function providerOf(model: { provider?: string } | undefined): Provider;

/** The prompt with its image and PDF parts admitted (the same prompt when nothing changed). */
export function admitPrompt<P extends readonly unknown[]>(
  prompt: P,
  options: MediagateMiddlewareOptions & { provider: Provider },
): Promise<{ prompt: P; changes: RequestChange[] }>;

/** A `wrapLanguageModel` middleware (`specificationVersion: 'v4'`) admitting every prompt's media parts. */
export function mediagateMiddleware(options?: MediagateMiddlewareOptions): {
  readonly specificationVersion: 'v4';
  transformParams(options: { type: 'generate' | 'stream'; params: any; model: any }): PromiseLike<any>;
};
