// @mediagate/preflight: the mediagate admission gate (the `preflight` component, transpiled by
// jco) with an idiomatic JavaScript API. The same module runs in browsers and in Node >= 20.
//
//   import { admit, contentBlock } from '@mediagate/preflight';
//   const verdict = await admit(bytes, { name: 'diagram.png' });
//   if (verdict.ok) send(contentBlock(verdict)); else show(verdict.reason, verdict.message);
//
// A verdict is the component's JSON (the text `mediagate admit --json` prints) parsed: the gate
// writes the vocabulary once, for every host.
//
// The module-level functions are async (the first call compiles and instantiates the component;
// `configure()` sets the options that instance is made with). `createGate()` gives an instance
// whose methods are synchronous. `@mediagate/preflight/worker` (src/worker.js) is the same async
// API run in a dedicated Worker, so a downsample never blocks a page's main thread.

import { instantiate } from '../dist/generated/mediagate.js';
import {
  CALL_ERROR_KIND,
  CALL_ERROR_KINDS,
  CPU_DEADLINE_MS,
  MEMORY_LIMIT_BYTES,
  PROFILES,
  REFUSAL_REASONS,
  REQUEST_APIS,
} from './facts.js';
import { DEFAULT_OPTIONS } from '../dist/generated/defaults.js';
import { SharedInstance } from './shared-instance.js';

/**
 * The CLI's limits (the Rust host's `Limits::default`, generated into src/facts.js): the most
 * linear memory one instance may grow to, and the CPU deadline of one call (kept by the Worker API).
 * The refusal reasons and the kinds of a `GateError` are generated there too.
 */
export { CALL_ERROR_KINDS, CPU_DEADLINE_MS, MEMORY_LIMIT_BYTES, REFUSAL_REASONS };

const GENERATED = new URL('../dist/generated/', import.meta.url);

// The core module jco's glue asks for, named by a literal `new URL('…', import.meta.url)` so that
// bundlers which follow that pattern (webpack 5, Vite, Parcel) emit the file on their own. esbuild
// does not: pass `wasmUrls` (its `file` loader) or `wasmBase` (files copied) instead. The component
// imports nothing, so jco makes one core module and no shim: no WASI to give it.
const CORE_URLS = {
  'mediagate.core.wasm': () => new URL('../dist/generated/mediagate.core.wasm', import.meta.url),
};
/** The core module files the gate loads (the keys `wasmUrls` must give). */
export const CORE_MODULES = Object.freeze(Object.keys(CORE_URLS));
/**
 * The core module files a converting gate loads instead (the keys `wasmUrls` must give for
 * `createGate({ convert: true })`): the converter component, a file of its own that the preflight
 * path never fetches. It is served from the same directory (`wasmBase`).
 */
export const CONVERT_CORE_MODULES = Object.freeze(['mediagate-convert.core.wasm']);

/**
 * The admission options (per call, or as an instance's defaults given to `createGate`). `convert`
 * turns a type no provider takes (SVG, BMP, TIFF, ICO, an animated GIF for a profile that refuses
 * animation) into an image it does, in the sandbox, instead of refusing it (`mime_unsupported`).
 */
export const ADMIT_OPTION_KEYS = Object.freeze(['downsample', 'provider', 'verify', 'convert', 'keepMetadata']);
/** The options `createGate` takes besides the admission defaults. */
export const LOAD_OPTION_KEYS = Object.freeze(['wasmBase', 'wasmUrls', 'getCoreModule', 'cache', 'memoryLimit']);

export const PROVIDERS = PROFILES;
/** The request dialects `admitRequest` reads (each with its request-level rules). */
export { REQUEST_APIS };
export const VERIFY_MODES = Object.freeze(['header', 'full']);


/** The Batch APIs whose files `admitBatchLine` and `checkBatchFile` read (OpenAI Batch, Anthropic Message Batches). */
export const BATCH_APIS = Object.freeze(['openai', 'anthropic']);

const PLAIN_WORDS = {
  mime_unsupported: "The file's type is not one the model provider accepts.",
  raw_too_large: 'The file is larger than the gate will read at all.',
  magic_mismatch:
    'The bytes are not what the name or type claims (for example an SVG or a web page saved as .png, or an empty or truncated file).',
  base64_too_large: "The file is over the provider's size limit once encoded, and could not be shrunk under it.",
  undecodable: 'The block carries no data that could be decoded.',
  dimensions_too_large: "The picture's width or height is beyond what the provider or the decoder allows.",
  request_limit:
    'The request that carries it is at a limit the provider sets on a whole request (images or bytes per request).',
  no_such_page: 'The PDF has no page with that number.',
  encrypted: 'The PDF needs a password.',
  blank: 'The PDF page rendered to nothing: every pixel is blank.',
};

/** A sentence a person reads for a refusal reason (the gate's own `message` gives the numbers). */
export function describeReason(reason) {
  return PLAIN_WORDS[reason] ?? `Refused (${reason}).`;
}

/**
 * Raised when a call into the component fails instead of answering: a trap (a bug in the gate),
 * the memory limit or the CPU deadline. `kind` says which (one of `CALL_ERROR_KINDS`: `'trap'`,
 * `'out_of_memory'`, `'deadline'`), or is undefined for a gate that could not be loaded. The instance is discarded.
 */
export class GateError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'GateError';
    if (options?.kind !== undefined) this.kind = options.kind;
  }
}

// The CLI's words for a call that did not answer (lib/src/error.rs, `CallError`), so a caller
// reads the same sentence from either host.
const MIB = 1 << 20;
export function outOfMemoryWords(limitBytes = MEMORY_LIMIT_BYTES) {
  return `the guest ran out of memory (limit ${Math.floor(limitBytes / MIB)} MiB) and was stopped`;
}
export function deadlineWords(deadlineMs = CPU_DEADLINE_MS) {
  const seconds = deadlineMs / 1000;
  return `the guest exceeded its CPU deadline of ${Number.isInteger(seconds) ? `${seconds}s` : `${deadlineMs}ms`} and was interrupted`;
}
function trapWords(trap) {
  return `the gate trapped: ${trap} (a fault in the gate, not a verdict on the input)`;
}

/** V8's trap messages in wasmtime's words (the CLI's); others as V8 gives them. */
const TRAP_NAMES = [
  [/^unreachable$/, 'wasm `unreachable` instruction executed'],
  [/^memory access out of bounds$/, 'out of bounds memory access'],
  [/^Maximum call stack size exceeded$/, 'call stack exhausted'],
  [/^divide by zero$/, 'integer divide by zero'],
  [/^(table index is out of bounds|null function or function signature mismatch)$/, 'indirect call type mismatch'],
];
function trapName(error) {
  const message = String(error?.message ?? error);
  for (const [pattern, name] of TRAP_NAMES) if (pattern.test(message)) return name;
  return message;
}

/** What is known of a call that stopped before its words could be made: the stack ran out. */
const STACK_EXHAUSTED = Object.freeze({ kind: CALL_ERROR_KIND.TRAP, words: trapWords('call stack exhausted') });

/** Thrown inside the component's memory.grow hook: the call stops there, as wasmtime's limiter does. */
class MemoryLimitReached extends Error {
  constructor(limitBytes) {
    super(outOfMemoryWords(limitBytes));
    this.name = 'MemoryLimitReached';
    this.limitBytes = limitBytes;
  }
}

/**
 * The imports the build added around every `memory.grow` of the core modules (binaryen's
 * instrument-memory pass): a grow that would take the instance's memory past `limitBytes` stops
 * the call before anything is allocated; one the engine refuses below it (the browser's own
 * limit) stops it too, rather than leaving the guest's allocator to abort.
 */
function memoryGuard(limitBytes) {
  let memory = null;
  const refuse = () => {
    throw new MemoryLimitReached(limitBytes);
  };
  const env = {
    memory_grow_pre(_site, deltaPages) {
      const pages = deltaPages >>> 0;
      if (memory && memory.buffer.byteLength + pages * 65536 > limitBytes) refuse();
      return deltaPages;
    },
    memory_grow_post(_site, result) {
      if (result === -1) refuse();
      return result;
    },
  };
  // binaryen declares the hooks for every kind of access; only the two above are ever called.
  const unused = (name) => () => {
    throw new Error(`the core module called ${name}, a hook this package does not build in: rebuild dist/`);
  };
  return {
    instantiateCore(module, imports) {
      const needed = WebAssembly.Module.imports(module).filter((i) => i.module === 'env');
      const hooks = Object.fromEntries(needed.map((i) => [i.name, env[i.name] ?? unused(i.name)]));
      if (!('memory_grow_pre' in hooks)) {
        throw new GateError('the core module has no memory limit hook (dist/ was not built by scripts/build.mjs): rebuild it');
      }
      // Asynchronous: a browser's main thread refuses to instantiate a module over 8 MB synchronously.
      return WebAssembly.instantiate(module, { ...imports, env: hooks }).then((instance) => {
        memory = instance.exports.memory ?? memory;
        return instance;
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Loading

const compiled = new Map(); // href -> Promise<WebAssembly.Module>

const BUNDLER_HINT =
  'if a bundler moved this module away from dist/generated/, serve the .wasm files ' +
  '(exported as @mediagate/preflight/wasm/*) and pass createGate({ wasmBase }) or createGate({ wasmUrls })';

async function compileCore(url) {
  if (url.protocol === 'file:') {
    // Node (and other runtimes with a filesystem): read the file next to the generated module.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule);
    return WebAssembly.compile(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status} (${BUNDLER_HINT})`);
  const type = response.headers.get('content-type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

function compileCached(url) {
  const key = url.href;
  let module = compiled.get(key);
  if (!module) {
    module = compileCore(url);
    module.catch(() => compiled.delete(key));
    compiled.set(key, module);
  }
  return module;
}

function baseHref() {
  return globalThis.location?.href ?? GENERATED.href;
}

function resolveBase(wasmBase) {
  if (wasmBase === undefined) return undefined;
  const base = new URL(String(wasmBase), baseHref());
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

function describeKeys(keys) {
  return keys.join(', ');
}

/**
 * Checks `createGate`'s options and splits them into what loads the component and the admission
 * defaults every method of the instance applies. An unknown key is refused (a misspelt option
 * would otherwise be silently ignored).
 */
export function checkGateOptions(options) {
  options ??= {};
  if (typeof options !== 'object' || Array.isArray(options)) throw new TypeError('createGate options must be an object');
  for (const key of Object.keys(options)) {
    if (!LOAD_OPTION_KEYS.includes(key) && !ADMIT_OPTION_KEYS.includes(key)) {
      throw new TypeError(
        `createGate: unknown option ${JSON.stringify(key)} (known: ${describeKeys([...LOAD_OPTION_KEYS, ...ADMIT_OPTION_KEYS])})`,
      );
    }
  }
  const { wasmBase, wasmUrls, getCoreModule, cache, memoryLimit } = options;
  if (
    memoryLimit !== undefined &&
    !(Number.isSafeInteger(memoryLimit) && memoryLimit >= 65536 && memoryLimit <= MEMORY_LIMIT_BYTES)
  ) {
    throw new TypeError(`createGate: memoryLimit must be a whole number of bytes from 65536 to ${MEMORY_LIMIT_BYTES} (the CLI's)`);
  }
  const given = [wasmBase, wasmUrls, getCoreModule].filter((o) => o !== undefined).length;
  if (given > 1) throw new TypeError('createGate: give at most one of wasmBase, wasmUrls, getCoreModule');
  if (wasmBase !== undefined && typeof wasmBase !== 'string' && !(wasmBase instanceof URL)) {
    throw new TypeError('createGate: wasmBase must be a string or a URL');
  }
  if (wasmUrls !== undefined) {
    if (wasmUrls === null || typeof wasmUrls !== 'object') throw new TypeError('createGate: wasmUrls must be an object');
    const needed = options.convert === true ? CONVERT_CORE_MODULES : CORE_MODULES;
    const missing = needed.filter((name) => wasmUrls[name] == null);
    if (missing.length) {
      throw new TypeError(
        `createGate: wasmUrls lacks ${describeKeys(missing)} (it must name ${describeKeys(needed)}` +
          `${options.convert === true ? ' for a converting gate' : ''})`,
      );
    }
  }
  if (getCoreModule !== undefined && typeof getCoreModule !== 'function') {
    throw new TypeError('createGate: getCoreModule must be a function');
  }
  if (cache !== undefined && typeof cache !== 'boolean') throw new TypeError('createGate: cache must be a boolean');
  const defaults = {};
  for (const key of ADMIT_OPTION_KEYS) if (options[key] !== undefined) defaults[key] = options[key];
  checkOptions(defaults); // the defaults are checked now, not at the first call
  return { load: { wasmBase, wasmUrls, getCoreModule, cache, memoryLimit }, defaults };
}

function coreUrl(name, load, known_urls = CORE_URLS) {
  if (load.wasmUrls) {
    const url = load.wasmUrls[name];
    if (url == null) throw new Error(`createGate: wasmUrls has no entry for ${name}`);
    return new URL(String(url), baseHref());
  }
  const base = resolveBase(load.wasmBase);
  if (base) return new URL(name, base);
  const known = known_urls[name];
  if (!known) throw new Error(`the generated glue asks for ${name}, which this wrapper does not know: rebuild dist/`);
  return known();
}

/**
 * Compiles (once per location, then cached) and instantiates the gate.
 *
 * @param {object} [options]
 * @param {string|URL} [options.wasmBase] where `mediagate.core.wasm` is served from
 *   (default: `dist/generated/` next to this module)
 * @param {Record<string, string|URL>} [options.wasmUrls] the URL of each core module (`CORE_MODULES`)
 * @param {(name: string) => WebAssembly.Module|Promise<WebAssembly.Module>} [options.getCoreModule]
 * @param {boolean} [options.cache] keep compiled modules for the next instance (default true)
 * @param {boolean} [options.downsample] the instance's default (each call may override it)
 * @param {string} [options.provider] the instance's default
 * @param {string} [options.verify] the instance's default
 */
export async function createGate(options = {}) {
  const { load, defaults } = checkGateOptions(options);
  if (defaults.convert === true) return createConvertingGate(load, defaults);
  const getCoreModule =
    load.getCoreModule ??
    ((name) => {
      const url = coreUrl(name, load);
      return load.cache === false ? compileCore(url) : compileCached(url);
    });
  // The preflight component imports nothing: no import object to give, only the memory limit hooks.
  const memoryLimit = load.memoryLimit ?? MEMORY_LIMIT_BYTES;
  const guard = memoryGuard(memoryLimit);
  const root = await instantiate(getCoreModule, {}, guard.instantiateCore);
  // The contract this package speaks, the one the component exports.
  const api = root[CONTRACT_EXPORT];
  if (api == null) throw new GateError(`the component does not export ${CONTRACT_EXPORT}`);
  return new Gate(api, defaults, false, memoryLimit);
}

const CONVERT_MISSING =
  'the converter component is not in this build of @mediagate/preflight ' +
  '(dist/generated/mediagate-convert.js and mediagate-convert.core.wasm: npm run build writes them from ' +
  'target/guest/mediagate-convert.wasm or MEDIAGATE_CONVERT_WASM)';

/**
 * The converter component (`mediagate-convert.wasm`), which carries the whole gate as well: a
 * converting gate loads it instead of the preflight component. Imported on first use only.
 */
async function createConvertingGate(load, defaults) {
  let convert;
  try {
    convert = await import('./convert.js');
  } catch (error) {
    throw new GateError(`${CONVERT_MISSING}: ${error.message}`, { cause: error });
  }
  const getCoreModule =
    load.getCoreModule ??
    ((name) => {
      const url = coreUrl(name, load, convert.CONVERT_CORE_URLS);
      return load.cache === false ? compileCore(url) : compileCached(url);
    });
  // The convert world imports nothing, like preflight.
  const memoryLimit = load.memoryLimit ?? MEMORY_LIMIT_BYTES;
  const guard = memoryGuard(memoryLimit);
  const root = await convert.instantiate(getCoreModule, {}, guard.instantiateCore);
  const api = root[CONTRACT_EXPORT];
  if (api == null) throw new GateError(`the converter component does not export ${CONTRACT_EXPORT}`);
  return new Gate(api, defaults, true, memoryLimit);
}

// ---------------------------------------------------------------------------------------------
// Arguments in, the component's answers out. The answers are the component's JSON text parsed:
// the keys, casing and values `mediagate admit --json` prints, written once in the guest. What the
// JSON cannot carry (the admitted bytes, the text itself) rides along as properties that are not
// enumerable, so `Object.keys` and `JSON.stringify` see the CLI's object and nothing else.

function toBytes(bytes) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (Array.isArray(bytes)) return Uint8Array.from(bytes);
  throw new TypeError('bytes must be a Uint8Array, an ArrayBuffer, a typed-array view or an array of byte values');
}

/** A misspelt option (`verfy`) is refused, never silently ignored. */
function refuseUnknownKeys(options, known = ADMIT_OPTION_KEYS, what = 'option') {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`unknown ${what} ${JSON.stringify(key)} (known: ${describeKeys(known)})`);
    }
  }
}

/** Checks the options that are given (any subset of the keys). */
function checkOptions(options) {
  refuseUnknownKeys(options);
  options ??= {};
  if (typeof options !== 'object') throw new TypeError('options must be an object');
  const { downsample, provider, verify, convert, keepMetadata } = options;
  if (downsample !== undefined && typeof downsample !== 'boolean') {
    throw new TypeError('options.downsample must be a boolean');
  }
  if (keepMetadata !== undefined && typeof keepMetadata !== 'boolean') {
    throw new TypeError('options.keepMetadata must be a boolean');
  }
  if (convert !== undefined && typeof convert !== 'boolean') throw new TypeError('options.convert must be a boolean');
  if (provider !== undefined && !PROVIDERS.includes(provider)) {
    throw new TypeError(`options.provider must be one of ${PROVIDERS.join(', ')} (got ${JSON.stringify(provider)})`);
  }
  if (verify !== undefined && !VERIFY_MODES.includes(verify)) {
    throw new TypeError(`options.verify must be one of ${VERIFY_MODES.join(', ')} (got ${JSON.stringify(verify)})`);
  }
}

/**
 * The WIT `admit-options` of `options` (checked): each key not given is left out, and the
 * component applies its own default (`default-options`), so no copy of the defaults lives here.
 */
function toWitOptions(options) {
  checkOptions(options);
  const { downsample, provider, verify, keepMetadata } = options ?? {};
  return { downsample, provider, verify, keepMetadata };
}

/** The export of the contract this package speaks (wit/admission.wit). */
const CONTRACT_EXPORT = 'mediagate:gate/admission@0.3.0';

/**
 * What a call without options asks for: the component's `default-options`, read from the
 * component when the package was built (dist/generated/defaults.js, written by scripts/build.mjs),
 * for code that needs them before a gate exists. A gate reads them from its own component
 * (`gate.componentDefaults`).
 */
export { DEFAULT_OPTIONS };

/** `options` over `defaults`; a key given as `undefined` keeps the default. */
function withDefaults(defaults, options) {
  if (options == null) return { ...defaults };
  if (typeof options !== 'object') return options; // checkOptions names the mistake
  const merged = { ...defaults };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) merged[key] = value;
  return merged;
}

/** The keys of `admit`'s `input` (what the input is; the options say how to judge it). */
export const INPUT_KEYS = Object.freeze(['mime', 'name', 'page']);

/** `admit`'s second argument: a claimed type, or `{ mime, name, page }`, or nothing. */
function toInput(input) {
  if (input == null) return {};
  if (typeof input === 'string') return { mime: input };
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new TypeError('input must be a claimed media type (a string) or an object { mime, name, page }');
  }
  refuseUnknownKeys(input, INPUT_KEYS, 'input key');
  const { mime, name, page } = input;
  if (mime != null && typeof mime !== 'string') throw new TypeError('input.mime must be a string');
  if (name != null && typeof name !== 'string') throw new TypeError('input.name must be a string');
  if (page != null && !(Number.isInteger(page) && page >= 1 && page <= 0xffff_ffff)) {
    throw new TypeError(`input.page must be a whole number from 1 (got ${JSON.stringify(page)})`);
  }
  return { mime: mime ?? undefined, name: name ?? undefined, page: page ?? undefined };
}

/** Standard padded base64: Node's Buffer, the platform's `toBase64` where it has one, else btoa in chunks. */
const encodeBase64 =
  typeof globalThis.Buffer === 'function'
    ? (bytes) => globalThis.Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
    : typeof Uint8Array.prototype.toBase64 === 'function'
      ? (bytes) => bytes.toBase64()
      : (bytes) => {
          const CHUNK = 0x8000;
          const parts = [];
          for (let i = 0; i < bytes.length; i += CHUNK) {
            parts.push(String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK)));
          }
          return btoa(parts.join(''));
        };

/** The component's JSON text parsed; text that is not JSON is the gate's fault, named as such. */
function parseAnswer(json, what) {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new GateError(`the gate's ${what} is not JSON (${error.message})`, { cause: error });
  }
}

function hidden(target, values) {
  for (const [key, value] of Object.entries(values)) {
    Object.defineProperty(target, key, { value, enumerable: false, writable: false, configurable: true });
  }
  return target;
}

/**
 * A verdict from what crossed the boundary: `json` (the component's text), `bytes` (the admitted
 * bytes, admitted only), `sniffed` (the type the bytes carry), `convertible` (the type a
 * converting gate would convert, when the input was refused for its type). Exported for the
 * Worker entry point, which sends these parts across and rebuilds the verdict on the page.
 */
export function verdictFromParts({ json, bytes, sniffed, convertible }) {
  const verdict = parseAnswer(json, 'verdict');
  return hidden(verdict, { json, ...(verdict.ok ? { bytes } : {}), sniffed, convertible: convertible ?? null });
}

/** The parts of a verdict (`verdictFromParts` rebuilds it): what a Worker posts back. */
export function verdictParts(verdict) {
  return { json: verdict.json, bytes: verdict.ok ? verdict.bytes : undefined, sniffed: verdict.sniffed, convertible: verdict.convertible };
}

/** A tool result's answer from its JSON text and whether the gate rebuilt the content. */
export function toolResultFromParts({ json, changed }) {
  return hidden(parseAnswer(json, 'tool result'), { json, changed });
}

/** A request's answer from its JSON text and the admitted request's text. */
export function requestFromParts({ json, requestText }) {
  return hidden(parseAnswer(json, 'request report'), { json, requestText });
}

/**
 * A batch request's answer from its report line (`json`) and the request as it goes out (`line`:
 * the input itself when unchanged, null when refused whole).
 */
export function batchLineFromParts({ json, line }) {
  return hidden(parseAnswer(json, 'batch report line'), { json, line });
}

/**
 * The admitted block in the Anthropic content-block shape (what `mediagate admit --block-out`
 * writes): `{ type: kind, source: { type: 'base64', media_type: mime, data } }`.
 */
export function contentBlock(verdict) {
  const bytes = admittedBytes(verdict);
  return { type: verdict.kind, source: { type: 'base64', media_type: verdict.mime, data: encodeBase64(bytes) } };
}

/** The admitted bytes (the caller's own input when the gate admitted it unchanged). */
export function admittedBytes(verdict) {
  if (!verdict?.ok) throw new TypeError('a refused verdict has no admitted bytes');
  if (!(verdict.bytes instanceof Uint8Array)) {
    throw new TypeError('this verdict carries no bytes (a copy made by spreading or JSON keeps only its keys)');
  }
  return verdict.bytes;
}

/** The admitted bytes of an answer: the payload the gate made, or the input itself (`unchanged`). */
function payloadBytes(verdict, input) {
  if (verdict.tag !== 'admitted') return undefined;
  const payload = verdict.val.payload;
  return payload.tag === 'unchanged' ? input : payload.val;
}

/** Whether jco raised a WIT `result`'s error case (a ComponentError carrying it as `payload`). */
function witError(e) {
  return !(e instanceof WebAssembly.RuntimeError) && !(e instanceof MemoryLimitReached) && e != null && typeof e === 'object' && 'payload' in e;
}

// ---------------------------------------------------------------------------------------------
// The gate instance

export class Gate {
  #api;
  #converts;
  #defaults;
  #base;
  #trapped = null;
  #memoryLimit;

  /**
   * `api`: the component's `mediagate:gate/admission@0.3.0` export. `defaults`: the instance's own
   * options; the component's come from `api.defaultOptions()` (`default-options`). `converts`:
   * whether `api` is the converter component's (`createGate({ convert: true })`).
   */
  constructor(api, defaults = {}, converts = false, memoryLimit = MEMORY_LIMIT_BYTES) {
    this.#api = api;
    this.#memoryLimit = memoryLimit;
    this.#converts = converts;
    this.#defaults = Object.freeze({ ...defaults });
    const base = api.defaultOptions();
    this.#base = Object.freeze({
      downsample: base.downsample,
      provider: base.provider,
      verify: base.verify,
      keepMetadata: base.keepMetadata,
    });
  }

  /** Whether this instance carries the converters (`createGate({ convert: true })`). */
  get converts() {
    return this.#converts;
  }

  /** The call's options over the instance's, checked, and whether the call converts. */
  #prepare(options, convertWanted = false) {
    const merged = withDefaults(this.#defaults, options);
    const wit = toWitOptions(merged);
    const convert = convertWanted || merged.convert === true;
    if (convert) this.#needConversion(convertWanted ? 'input.page' : 'options.convert');
    return { wit, convert };
  }

  #needConversion(what) {
    if (!this.#converts) {
      throw new TypeError(
        `${what}: this gate was created without the converter component; create it with ` +
          'createGate({ convert: true }) (the module-level functions load it when a call asks to convert)',
      );
    }
  }

  /** The media types this gate converts from (`convertible-types`; none without the converters). */
  convertibleTypes() {
    return this.#call('convertible-types', () => [...this.#api.convertibleTypes()]);
  }

  /** The admission options a call without options gets (the component's, under the instance's). */
  get defaults() {
    const merged = withDefaults(this.#base, this.#defaults);
    delete merged.convert;
    return merged;
  }

  /** The component's own defaults (`default-options`), before the instance's. */
  get componentDefaults() {
    return { ...this.#base };
  }

  /** True once the component trapped; every later call throws and a new instance is needed. */
  get trapped() {
    return this.#trapped !== null;
  }

  #call(what, fn) {
    if (this.#trapped) {
      throw new GateError(`the gate instance stopped earlier (${this.#trapped.words}); create a new one`, {
        kind: this.#trapped.kind,
      });
    }
    try {
      return fn();
    } catch (e) {
      if (witError(e)) throw e; // an answer, not a fault: the caller reads it
      // Whatever leaves the instance other than an answer leaves it in an unknown state: a trap
      // (RuntimeError), the wasm stack exhausted (V8 throws RangeError), the memory limit hook, or
      // an error lifting the answer. The instance is never used again (marked first: with the
      // stack exhausted, building the words below may itself fail).
      this.#trapped = STACK_EXHAUSTED;
      this.#trapped =
        e instanceof MemoryLimitReached
          ? { kind: CALL_ERROR_KIND.OUT_OF_MEMORY, words: outOfMemoryWords(this.#memoryLimit) }
          : // The component has no output, so a panic's message stays inside it: the trap is what is known.
            { kind: CALL_ERROR_KIND.TRAP, words: trapWords(trapName(e)) };
      throw new GateError(`${what}: ${this.#trapped.words}`, { cause: e, kind: this.#trapped.kind });
    }
  }

  /**
   * Admit one input, as `mediagate admit` does: the gate sniffs the bytes, picks the type (the
   * claimed one when `input.mime` is given; else the one the bytes carry, or the one `input.name`'s
   * extension names) and judges it as an image, a document, a conversion or a PDF page, in one
   * call. `input` is a claimed media type, or `{ mime, name, page }`, or nothing.
   * Answers the verdict: the JSON `mediagate admit --json` prints, parsed, with `bytes`, `json`,
   * `sniffed` and `convertible` beside its keys.
   */
  admit(bytes, input, options) {
    const data = toBytes(bytes);
    const { mime, name, page } = toInput(input);
    const { wit, convert } = this.#prepare(options, page !== undefined);
    const media = { bytes: data, claimedMime: mime, name, convert, page };
    let answer;
    try {
      answer = this.#call('admit', () => this.#api.admit(media, wit));
    } catch (e) {
      if (witError(e) && e.payload?.tag === 'page-of-non-pdf') {
        throw new TypeError(`input.page applies to PDFs; the input is ${e.payload.val}`);
      }
      throw e;
    }
    return verdictFromParts({
      json: answer.json,
      bytes: payloadBytes(answer.verdict, data),
      sniffed: answer.sniffed,
      convertible: answer.convertible,
    });
  }

  /** Render page `page` (1-based) of a PDF and admit it as an image: `admit(bytes, { page })`. */
  admitPdfPage(bytes, page = 1, options) {
    return this.admit(bytes, { page }, options);
  }

  /**
   * Admit every media block of a tool's result before it enters the conversation.
   *
   * `content` is the result's content as a JSON value (a list of blocks, an object with `content`,
   * one block) or as JSON text. Answers what `mediagate admit-tool-result` prints, parsed:
   * `{ content, refused }` (+ `conversions` when converting), with `json` and `changed` (false when
   * no block claims a media type and the content stands as it was) beside them.
   */
  admitToolResult(toolName, content, options) {
    const json = typeof content === 'string' ? content : JSON.stringify(content);
    if (json === undefined) throw new TypeError('content must be JSON text or a JSON-serialisable value');
    const { wit, convert } = this.#prepare(options);
    const answer = this.#call('admit-tool-result', () =>
      this.#api.admitToolResult({ tool: String(toolName), contentJson: json, convert }, wit),
    );
    return toolResultFromParts({ json: answer.json, changed: answer.content != null });
  }

  /**
   * Admit a whole provider request (`api`: `'anthropic'` Messages or `'openai'` Chat Completions):
   * every image and document block in its messages admitted in place or replaced in its slot by
   * a text block, and the API's request-level rules applied (images per request, 2000 px when an
   * Anthropic request carries more than 20 images, 32 MB per Anthropic request).
   *
   * `request` is JSON text or a JSON value. Answers what `mediagate admit-request --json` prints,
   * parsed: `{ api, request, changed, refused, refusal }` (+ `conversions` when converting), with
   * `json` and `requestText` (the admitted request as text: the input byte for byte outside the
   * changed blocks) beside them. The per-image profile is `options.provider`, else the
   * instance's default, else the API's own.
   */
  admitRequest(api, request, options) {
    if (!REQUEST_APIS.includes(api)) {
      throw new TypeError(`api must be one of ${REQUEST_APIS.join(', ')} (got ${JSON.stringify(api)})`);
    }
    const json = typeof request === 'string' ? request : JSON.stringify(request);
    if (json === undefined) throw new TypeError('request must be JSON text or a JSON-serialisable value');
    const { wit, convert } = this.#prepare(options);
    const answer = this.#call('admit-request', () => this.#api.admitRequest({ api, requestJson: json, convert }, wit));
    const admitted = answer.verdict.tag === 'admitted' ? answer.verdict.val : null;
    return requestFromParts({ json: answer.json, requestText: admitted ? (admitted.request ?? json) : null });
  }

  /**
   * Admit one request of a Batch API file, as `mediagate admit-batch` does for each: `line` is the
   * request's text (a JSON line without its line break, or one item of an Anthropic `requests`
   * array); `options.api` is `'openai'` or `'anthropic'`, `options.number` its 1-based line (or
   * item) number, which the report names (default 1); the other keys are the admission options.
   * Answers the report line (`{ number, custom_id, outcome, url?, changed, refused, refusal }`)
   * parsed, with `json` (its text, what the CLI writes to `--report`) and `line` (the request as it
   * goes out: the input itself when unchanged, the spliced text when changed or with refused
   * blocks, null when refused whole) beside it.
   */
  admitBatchLine(line, options) {
    if (typeof line !== 'string') {
      throw new TypeError('line must be a string: one request of the batch file, without its line break');
    }
    const { api, number, rest } = batchLineOptions(options);
    const { wit, convert } = this.#prepare(rest);
    const answer = this.#call('admit-batch-line', () =>
      this.#api.admitBatchLine({ api, line, number: BigInt(number), convert }, wit),
    );
    return batchLineFromParts({ json: answer.json, line: answer.outcome === 'unchanged' ? line : (answer.line ?? null) });
  }

  /**
   * The Batch API's rules on a whole file that a file of `requests` requests and `bytes` bytes
   * breaks (`check-batch-file`): `[{ rule, limit, actual, message }]`, empty when it breaks none.
   */
  checkBatchFile(api, requests, bytes) {
    checkBatchApi(api);
    for (const [name, value] of [['requests', requests], ['bytes', bytes]]) {
      if (!(Number.isSafeInteger(value) && value >= 0)) {
        throw new TypeError(`${name} must be a whole number from 0 (got ${JSON.stringify(value)})`);
      }
    }
    const rules = this.#call('check-batch-file', () => this.#api.checkBatchFile(api, BigInt(requests), BigInt(bytes)));
    // The keys in the order the CLI's summary writes them.
    return rules.map(({ rule, limit, actual, message }) => ({ rule, limit: Number(limit), actual: Number(actual), message }));
  }
}

function checkBatchApi(api) {
  if (!BATCH_APIS.includes(api)) {
    throw new TypeError(`api must be one of ${BATCH_APIS.join(', ')} (got ${JSON.stringify(api)})`);
  }
}

/** `admitBatchLine`'s second argument: `api` and `number` taken out, the admission options left. */
export function batchLineOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError("admitBatchLine needs options with the batch's api: { api: 'openai' | 'anthropic', number }");
  }
  const { api, number = 1, ...rest } = options;
  checkBatchApi(api);
  if (!(Number.isSafeInteger(number) && number >= 1)) {
    throw new TypeError(`options.number must be a whole number from 1 (got ${JSON.stringify(number)})`);
  }
  return { api, number, rest };
}

// ---------------------------------------------------------------------------------------------
// Module-level convenience: one shared instance, created on first use, replaced after a trap.

let sharedOptions = {};
const shared = new SharedInstance(() => createGate(sharedOptions));
const sharedConverting = new SharedInstance(() => createGate({ ...sharedOptions, convert: true }));

/**
 * Sets the `createGate` options (loading and admission defaults) the module-level functions'
 * shared instance is made with. The current instance, if any, is dropped; the next call makes a
 * new one with these options.
 */
export function configure(options = {}) {
  checkGateOptions(options);
  sharedOptions = { ...(options ?? {}) };
  shared.forget();
  sharedConverting.forget();
}

/**
 * The shared gate instance (created on first use). With options, it first `configure`s them.
 */
export function ready(options) {
  if (options !== undefined) configure(options);
  return shared.get();
}

/**
 * The shared converting instance (`createGate({ ...configured, convert: true })`), created the
 * first time a call asks to convert: only then is the converter component fetched.
 */
export function readyConverting() {
  return sharedConverting.get();
}

/** Whether a module-level call with `options` converts (its `convert`, else `configure`'s). */
function wantsConversion(options) {
  const given = options !== null && typeof options === 'object' ? options.convert : undefined;
  return (given ?? sharedOptions.convert) === true;
}

/** The input with a File's name as its name hint, unless it names a type or a name itself. */
export function withFileName(bytes, input) {
  const isFile = typeof Blob !== 'undefined' && bytes instanceof Blob && typeof bytes.name === 'string' && bytes.name !== '';
  if (!isFile || typeof input === 'string') return input;
  if (input == null) return { name: bytes.name };
  if (typeof input === 'object' && input.mime == null && input.name == null) return { ...input, name: bytes.name };
  return input;
}

/** A Blob's bytes, and the input with a File's name as its hint (`withFileName`). */
export async function readInput(bytes, input) {
  const named = withFileName(bytes, input);
  if (typeof Blob === 'undefined' || !(bytes instanceof Blob)) return { bytes, input: named };
  return { bytes: new Uint8Array(await bytes.arrayBuffer()), input: named };
}

async function withShared(fn, converting = false) {
  const gate = await (converting ? readyConverting() : ready());
  try {
    return fn(gate);
  } finally {
    if (gate.trapped) {
      // A trapped instance is dropped; the next call makes a new one.
      await shared.forgetIf(gate);
      await sharedConverting.forgetIf(gate);
    }
  }
}

/** `Gate.admit` on the shared instance; a `Blob`/`File` is read first (a File's name is the hint). */
export async function admit(bytes, input, options) {
  const read = await readInput(bytes, input);
  const page = read.input !== null && typeof read.input === 'object' ? read.input.page : undefined;
  return withShared((gate) => gate.admit(read.bytes, read.input, options), page != null || wantsConversion(options));
}

/** Render page `page` (1-based, default 1) of a PDF and admit it as an image (loads the converter). */
export async function admitPdfPage(bytes, page = 1, options) {
  const read = await readInput(bytes, undefined);
  return withShared((gate) => gate.admitPdfPage(read.bytes, page, options), true);
}

/** The media types the converter converts from (loads the converter). */
export async function convertibleTypes() {
  return withShared((gate) => gate.convertibleTypes(), true);
}

export async function admitToolResult(toolName, content, options) {
  return withShared((gate) => gate.admitToolResult(toolName, content, options), wantsConversion(options));
}

export async function admitRequest(api, request, options) {
  return withShared((gate) => gate.admitRequest(api, request, options), wantsConversion(options));
}

/** `Gate.admitBatchLine` on the shared instance (the converting one when `options.convert`). */
export async function admitBatchLine(line, options) {
  return withShared((gate) => gate.admitBatchLine(line, options), wantsConversion(options));
}

/** `Gate.checkBatchFile` on the shared instance. */
export async function checkBatchFile(api, requests, bytes) {
  return withShared((gate) => gate.checkBatchFile(api, requests, bytes));
}
