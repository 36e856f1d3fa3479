// Compiled (not run) by test/types.test.js: the integrations' types fit the real SDKs' options.
import Anthropic from '@anthropic-ai/sdk';
import { wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import OpenAI from 'openai';

import { createGate } from '@mediagate/preflight';
import { MediaRefusedError, mediagateMiddleware } from '@mediagate/preflight/ai-sdk';
import { gatedFetch, type GatedFetchOptions } from '@mediagate/preflight/fetch';

const options: GatedFetchOptions = { onRefusal: 'error', provider: 'openai', gate: createGate() };
export const openai = new OpenAI({ apiKey: 'k', fetch: gatedFetch(options) });
export const anthropic = new Anthropic({ apiKey: 'k', fetch: gatedFetch() });
export const model = wrapLanguageModel({
  model: new MockLanguageModelV4(),
  middleware: mediagateMiddleware({ onRefusal: 'error' }),
});
export function reasons(err: unknown): string[] {
  return err instanceof MediaRefusedError ? err.refused.map((c) => String(c.reason)) : [];
}
