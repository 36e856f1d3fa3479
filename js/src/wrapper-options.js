// What the two request wrappers (`./fetch`, `./ai-sdk`) take alike: the options that reach the gate,
// what a refusal becomes, and the check that names a wrong option in words before any request.

/** What a refusal becomes: a text block in the refused block's slot, or an error. */
export const ON_REFUSAL = Object.freeze(['placeholder', 'error']);

/** The options both wrappers take; each may add its own. */
export const WRAPPER_OPTION_KEYS = Object.freeze(['provider', 'onRefusal', 'onChange', 'gate', 'convert', 'verify', 'downsample', 'keepMetadata']);

/**
 * Throws a TypeError, naming `caller`, for an option not in `keys`, an `onRefusal` not in
 * ON_REFUSAL or an `onChange` that is not a function.
 */
export function checkWrapperOptions(caller, options, keys) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller} options must be an object`);
  const unknown = Object.keys(options).filter((k) => !keys.includes(k));
  if (unknown.length) {
    throw new TypeError(`${caller}: unknown option ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${keys.join(', ')})`);
  }
  if (options.onChange !== undefined && typeof options.onChange !== 'function') {
    throw new TypeError(`${caller}: onChange must be a function`);
  }
  if (options.onRefusal !== undefined && !ON_REFUSAL.includes(options.onRefusal)) {
    throw new TypeError(`${caller}: onRefusal must be one of ${ON_REFUSAL.join(', ')} (got ${JSON.stringify(options.onRefusal)})`);
  }
}
