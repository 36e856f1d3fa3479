import type { Gate, Provider, RequestChange } from './index.js';

/** What a refusal becomes: a text block in the refused block's slot, or an error. */
export type OnRefusal = 'placeholder' | 'error';
export const ON_REFUSAL: readonly OnRefusal[];

/** The options both request wrappers (`./fetch`, `./ai-sdk`) take; each says its own defaults. */
export interface WrapperOptions {
  /** The per-image profile. */
  provider?: Provider;
  downsample?: boolean;
  verify?: 'full' | 'header';
  convert?: boolean;
  /** Admit an image's metadata as given (default: the canonical re-mux without it). */
  keepMetadata?: boolean;
  /** A gate of your own (default the module-level shared one). */
  gate?: Gate | Promise<Gate>;
  /** `'placeholder'` (default) or `'error'`. */
  onRefusal?: OnRefusal;
  /** Called with each change the gate made, refusals too (also when the request is not sent). */
  onChange?: (change: RequestChange & { dialect?: string }) => void;
}
export const WRAPPER_OPTION_KEYS: readonly (keyof WrapperOptions)[];

/** Throws a TypeError, naming `caller`, for an option not in `keys` or an `onRefusal` not in ON_REFUSAL. */
export function checkWrapperOptions(caller: string, options: unknown, keys: readonly string[]): void;
