// @mediagate/preflight: the mediagate admission gate (the `preflight` component, transpiled by
// jco) with an idiomatic JavaScript API. The same module runs in browsers and in Node >= 20.
//
//   import { admitImage } from '@mediagate/preflight';
//   const verdict = await admitImage(bytes, 'image/png');
//   if (verdict.ok) send(verdict.block); else show(verdict.reason, verdict.message);
//
// The module-level functions are async (the first call compiles and instantiates the component;
// `configure()` sets the options that instance is made with). `createGate()` gives an instance
// whose methods are synchronous. `@mediagate/preflight/worker` (src/worker.js) is the same async
// API run in a dedicated Worker, so a downsample never blocks a page's main thread.

import { instantiate } from '../dist/generated/mediagate.js';
import { CPU_DEADLINE_MS, MEMORY_LIMIT_BYTES } from '../dist/generated/limits.js';

/**
 * The CLI's limits (the Rust host's `Limits::default`, written into the package at build): the most
 * linear memory one instance may grow to, and the CPU deadline of one call (kept by the Worker API).
 */
export { CPU_DEADLINE_MS, MEMORY_LIMIT_BYTES };

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

export const PROVIDERS = Object.freeze(['anthropic', 'openai', 'gemini', 'ollama']);
export const VERIFY_MODES = Object.freeze(['header', 'full']);
export const REFUSAL_REASONS = Object.freeze([
  'mime_unsupported',
  'raw_too_large',
  'magic_mismatch',
  'base64_too_large',
  'undecodable',
  'dimensions_too_large',
  'request_limit',
]);

/** The request dialects `admitRequest` reads (each with its request-level rules). */
export const REQUEST_APIS = Object.freeze(['anthropic', 'openai']);

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
};

/** A sentence a person reads for a refusal reason (the gate's own `message` gives the numbers). */
export function describeReason(reason) {
  return PLAIN_WORDS[reason] ?? `Refused (${reason}).`;
}

/**
 * Raised when a call into the component fails instead of answering: a trap (a bug in the gate),
 * the memory limit or the CPU deadline. `kind` says which (`'trap'`, `'out_of_memory'`,
 * `'deadline'`), or is undefined for a gate that could not be loaded. The instance is discarded.
 */
export class GateError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'GateError';
    if (options?.kind !== undefined) this.kind = options.kind;
  }
}

// The CLI's words for a call that did not answer (host/src/error.rs, `CallError`), so a caller
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
const STACK_EXHAUSTED = Object.freeze({ kind: 'trap', words: trapWords('call stack exhausted') });

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
  // The contract this package speaks; the component also exports 0.1.0 for hosts that pinned it.
  const api = root[CONTRACT_EXPORT];
  if (api == null) throw new GateError(`the component does not export ${CONTRACT_EXPORT}`);
  return new Gate(api, defaults, api.defaultOptions(), null, memoryLimit);
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
  const conversion = root[CONVERSION_EXPORT];
  if (api == null || conversion == null) {
    throw new GateError(`the converter component does not export ${CONTRACT_EXPORT} and ${CONVERSION_EXPORT}`);
  }
  return new Gate(api, defaults, api.defaultOptions(), conversion, memoryLimit);
}

// ---------------------------------------------------------------------------------------------
// Conversions between the WIT shapes (kebab-case enums, u64 as BigInt) and the JS API.

const snake = (kebab) => kebab.replaceAll('-', '_');

function toBytes(bytes) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (Array.isArray(bytes)) return Uint8Array.from(bytes);
  throw new TypeError('bytes must be a Uint8Array, an ArrayBuffer, a typed-array view or an array of byte values');
}

/** A misspelt option (`verfy`) is refused, never silently ignored. */
function refuseUnknownKeys(options) {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (!ADMIT_OPTION_KEYS.includes(key)) {
      throw new TypeError(`unknown option ${JSON.stringify(key)} (known: ${describeKeys(ADMIT_OPTION_KEYS)})`);
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

/** `options` over `base` (the component's own defaults, `default-options`), checked. */
function toOptions(options, base) {
  refuseUnknownKeys(options);
  options ??= {};
  if (typeof options !== 'object') throw new TypeError('options must be an object');
  const {
    downsample = base.downsample,
    provider = base.provider,
    verify = base.verify,
    keepMetadata = base.keepMetadata,
    convert,
  } = options;
  if (typeof downsample !== 'boolean') throw new TypeError('options.downsample must be a boolean');
  if (typeof keepMetadata !== 'boolean') throw new TypeError('options.keepMetadata must be a boolean');
  if (convert !== undefined && typeof convert !== 'boolean') throw new TypeError('options.convert must be a boolean');
  if (!PROVIDERS.includes(provider)) {
    throw new TypeError(`options.provider must be one of ${PROVIDERS.join(', ')} (got ${JSON.stringify(provider)})`);
  }
  if (!VERIFY_MODES.includes(verify)) {
    throw new TypeError(`options.verify must be one of ${VERIFY_MODES.join(', ')} (got ${JSON.stringify(verify)})`);
  }
  return { downsample, provider, verify, keepMetadata };
}

/** The export of the contract this package speaks (frozen in wit/deps/mediagate-gate-0.2.0/). */
const CONTRACT_EXPORT = 'mediagate:gate/admission@0.2.0';
/** The converter component's conversion interface (wit/worlds.wit, world `convert`). */
const CONVERSION_EXPORT = 'mediagate:gate/conversion@0.2.0';

/**
 * What a call without options asks for, as the component of this package version defines it
 * (`default-options`). A gate reads them from its component (`gate.defaults`); this constant is
 * kept for code that needs them before a gate exists, and a test checks it equals the component's.
 */
export const DEFAULT_OPTIONS = Object.freeze({ downsample: true, provider: 'anthropic', verify: 'full', keepMetadata: false });

/** `options` over `defaults`; a key given as `undefined` keeps the default. */
function withDefaults(defaults, options) {
  if (options == null) return { ...defaults };
  if (typeof options !== 'object') return options; // toOptions names the mistake
  const merged = { ...defaults };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) merged[key] = value;
  return merged;
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

/** `input` is what the gate was given: the admitted bytes when the payload is `unchanged`. */
function verdictFrom(verdict, input) {
  if (verdict.tag === 'admitted') {
    const a = verdict.val;
    const bytes = a.payload.tag === 'unchanged' ? input : a.payload.val;
    return {
      ok: true,
      block: { type: a.kind, source: { type: 'base64', media_type: a.mime, data: encodeBase64(bytes) } },
      mime: a.mime,
      originalSize: Number(a.originalSize),
      dimensions: a.dimensions == null ? undefined : { width: a.dimensions.width, height: a.dimensions.height },
      resized: a.resized,
      reencoded: a.reencoded,
      base64Len: Number(a.base64Len),
      dropped: [...a.dropped],
    };
  }
  const r = verdict.val;
  const refused = { ok: false, reason: snake(r.reason), rawBytes: Number(r.rawBytes), message: r.message };
  if (r.limit != null) refused.limit = Number(r.limit);
  return refused;
}

/** A WIT `conversion-made` (`path` only where it names a block: tool results, requests). */
function conversionFrom(c, withPath) {
  const out = withPath ? { path: c.path } : {};
  return Object.assign(out, { from: c.from, to: c.to, note: c.note });
}

/** A verdict with the conversion that made its image, when one did (`converted`). */
function convertedVerdictFrom(answer, input) {
  const verdict = verdictFrom(answer.verdict, input);
  if (answer.conversion != null) verdict.converted = conversionFrom(answer.conversion, false);
  return verdict;
}

/** Why a PDF page did not become an image (WIT `page-error`), in the shape of a refused verdict. */
function pageErrorFrom(error) {
  switch (error.tag) {
    case 'no-such-page': {
      const { requested, count } = error.val;
      return {
        ok: false,
        reason: 'no_such_page',
        page: requested,
        pageCount: count,
        message: `the PDF has ${count} page${count === 1 ? '' : 's'}: there is no page ${requested} (pages are numbered from 1)`,
      };
    }
    case 'encrypted':
      return { ok: false, reason: 'encrypted', message: error.val };
    case 'blank':
      return {
        ok: false,
        reason: 'blank_page',
        page: error.val,
        message: `page ${error.val} of the PDF rendered to nothing (every pixel blank)`,
      };
    case 'refused':
      return verdictFrom({ tag: 'refused', val: error.val });
    default:
      throw new GateError(`the converter answered a page error this package does not know: ${error.tag}`);
  }
}

function refusedBlockFrom(b) {
  const out = {
    index: b.index,
    path: b.path,
    type: b.blockType,
    reason: snake(b.reason),
    bytes: Number(b.rawBytes),
    mime: b.mime ?? null,
  };
  if (b.limit != null) out.limit = Number(b.limit);
  return out;
}

function factsFrom(f) {
  const out = { mime: f.mime ?? null, bytes: Number(f.bytes) };
  if (f.dimensions != null) {
    out.width = f.dimensions.width;
    out.height = f.dimensions.height;
  }
  return out;
}


function changeFrom(c) {
  return {
    path: c.path,
    type: c.blockType,
    what: c.what, // the WIT case name (`re-encoded`), as every host shows it
    from: factsFrom(c.before),
    to: c.after == null ? null : factsFrom(c.after),
    reason: c.reason == null ? null : snake(c.reason),
    limit: c.limit == null ? null : Number(c.limit),
    rule: c.rule ?? null,
    message: c.message,
  };
}

function parseOrText(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether a claimed type names a PDF (then `admit` asks for a document block). */
export function isPdfMime(mime) {
  return String(mime).split(';')[0].trim().toLowerCase() === 'application/pdf';
}

const EXTENSION_MIME = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  jfif: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  avif: 'image/avif',
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
};

/**
 * The media type a file name's extension claims, as `mediagate admit FILE` (and an agent's Read
 * tool) infers it: the claim the gate then checks against the bytes.
 */
export function mimeFromExtension(fileName) {
  const name = String(fileName).split(/[\\/]/).pop();
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  return EXTENSION_MIME[ext] ?? 'application/octet-stream';
}

/**
 * The verdict as the JSON object `mediagate admit FILE --json` prints (snake_case keys, width and
 * height only when measured, limit only when one applies).
 */
export function toCliJson(verdict) {
  if (verdict.ok) {
    const out = {
      ok: true,
      kind: verdict.block.type,
      mime: verdict.mime,
      original_size: verdict.originalSize,
      resized: verdict.resized,
      reencoded: verdict.reencoded,
      base64_len: verdict.base64Len,
    };
    if (verdict.dimensions) {
      out.width = verdict.dimensions.width;
      out.height = verdict.dimensions.height;
    }
    if (verdict.dropped?.length) out.dropped = [...verdict.dropped];
    if (verdict.converted) out.converted = { ...verdict.converted };
    return out;
  }
  const out = { ok: false, reason: verdict.reason, raw_bytes: verdict.rawBytes, message: verdict.message };
  if (verdict.limit !== undefined) out.limit = verdict.limit;
  return out;
}

/** The admitted bytes (decoded from the block's base64). */
export function admittedBytes(verdict) {
  if (!verdict.ok) throw new TypeError('a refused verdict has no admitted bytes');
  const text = atob(verdict.block.source.data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// The gate instance

export class Gate {
  #api;
  #conversion;
  #defaults;
  #base;
  #trapped = null;
  #memoryLimit;

  /**
   * `defaults`: the instance's own; the component's come from `api.defaultOptions()`
   * (`default-options`). `conversion`: the converter component's `conversion` export (a gate made
   * by `createGate({ convert: true })`), else none.
   */
  constructor(api, defaults = {}, base = api.defaultOptions(), conversion = null, memoryLimit = MEMORY_LIMIT_BYTES) {
    this.#api = api;
    this.#memoryLimit = memoryLimit;
    this.#conversion = conversion;
    this.#defaults = Object.freeze({ ...defaults });
    this.#base = Object.freeze({
      downsample: base.downsample,
      provider: base.provider,
      verify: base.verify,
      keepMetadata: base.keepMetadata,
    });
  }

  /** Whether this instance carries the converters (`createGate({ convert: true })`). */
  get converts() {
    return this.#conversion !== null;
  }

  /** Whether a call with `options` converts (its `convert`, else the instance's); checked. */
  #converting(options) {
    const merged = withDefaults(this.#defaults, options);
    const convert = merged && typeof merged === 'object' ? merged.convert === true : false;
    if (convert) this.#needConversion('options.convert');
    return convert;
  }

  #needConversion(what) {
    if (this.#conversion === null) {
      throw new TypeError(
        `${what}: this gate was created without the converter component; create it with ` +
          'createGate({ convert: true }) (the module-level functions load it when a call asks to convert)',
      );
    }
  }

  /** The media types this gate converts from (`convertible-types`); a converting gate only. */
  convertibleTypes() {
    this.#needConversion('convertibleTypes');
    return this.#call('convertible-types', () => [...this.#conversion.convertibleTypes()]);
  }

  /**
   * Render page `page` (1-based) of a PDF and admit it as an image (`admit-pdf-page`). Answers an
   * admitted verdict with `converted`, or `{ok: false, reason, message}`: the gate's refusal, or
   * `no_such_page` (with `page` and `pageCount`), `encrypted`, `blank_page` (with `page`).
   */
  admitPdfPage(bytes, page = 1, options) {
    this.#needConversion('admitPdfPage');
    if (!Number.isInteger(page) || page < 1 || page > 0xffff_ffff) {
      throw new TypeError(`page must be a whole number from 1 (got ${JSON.stringify(page)})`);
    }
    const input = toBytes(bytes);
    const opts = this.#options(options);
    return this.#call('admit-pdf-page', () => {
      let answer;
      try {
        answer = this.#conversion.admitPdfPage(input, page, opts);
      } catch (e) {
        // jco throws a WIT `result`'s error case (a ComponentError carrying it as `payload`).
        if (!(e instanceof WebAssembly.RuntimeError) && !(e instanceof MemoryLimitReached) && e != null && typeof e === 'object' && 'payload' in e) {
          return pageErrorFrom(e.payload);
        }
        throw e;
      }
      return convertedVerdictFrom(answer, input);
    });
  }

  /** The admission options a call without options gets (the component's, under the instance's). */
  get defaults() {
    return toOptions(this.#defaults, this.#base);
  }

  /** The component's own defaults (`default-options`), before the instance's. */
  get componentDefaults() {
    return { ...this.#base };
  }

  #options(options) {
    return toOptions(withDefaults(this.#defaults, options), this.#base);
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
      // Whatever leaves the instance other than an answer leaves it in an unknown state: a trap
      // (RuntimeError), the wasm stack exhausted (V8 throws RangeError), the memory limit hook, or
      // an error lifting the answer. The instance is never used again (marked first: with the
      // stack exhausted, building the words below may itself fail).
      this.#trapped = STACK_EXHAUSTED;
      this.#trapped =
        e instanceof MemoryLimitReached
          ? { kind: 'out_of_memory', words: outOfMemoryWords(this.#memoryLimit) }
          : // The component has no output, so a panic's message stays inside it: the trap is what is known.
            { kind: 'trap', words: trapWords(trapName(e)) };
      throw new GateError(`${what}: ${this.#trapped.words}`, { cause: e, kind: this.#trapped.kind });
    }
  }

  /** Admit an image whose type the caller claims. */
  admitImage(bytes, claimedMime, options) {
    const input = toBytes(bytes);
    const convert = this.#converting(options);
    const opts = this.#options(options);
    if (convert) {
      return this.#call('conversion.admit-image', () =>
        convertedVerdictFrom(this.#conversion.admitImage(input, String(claimedMime), opts), input),
      );
    }
    return this.#call('admit-image', () => verdictFrom(this.#api.admitImage(input, String(claimedMime), opts), input));
  }

  /** Admit a document (`application/pdf`). */
  admitDocument(bytes, claimedMime = 'application/pdf', options) {
    const input = toBytes(bytes);
    const opts = this.#options(options);
    return this.#call('admit-document', () => verdictFrom(this.#api.admitDocument(input, String(claimedMime), opts), input));
  }

  /** `admitDocument` when the claim is `application/pdf`, `admitImage` otherwise (as the CLI does). */
  admit(bytes, claimedMime, options) {
    return isPdfMime(claimedMime)
      ? this.admitDocument(bytes, claimedMime, options)
      : this.admitImage(bytes, claimedMime, options);
  }

  /**
   * Admit every media block of a tool's result before it enters the conversation.
   *
   * `content` is the result's content as a JSON value (a list of blocks, an object with `content`,
   * one block) or as JSON text. The answer's `content` is a JSON value: the rebuilt content, every
   * media block admitted or replaced in its slot by a text block that names the refusal; or, when
   * no block claims a media type, the input unchanged (the same object when a value was given).
   */
  admitToolResult(toolName, content, options) {
    const isText = typeof content === 'string';
    const json = isText ? content : JSON.stringify(content);
    if (json === undefined) throw new TypeError('content must be JSON text or a JSON-serialisable value');
    const convert = this.#converting(options);
    const opts = this.#options(options);
    let answer;
    let conversions;
    if (convert) {
      const converted = this.#call('conversion.admit-tool-result', () =>
        this.#conversion.admitToolResult(String(toolName), json, opts),
      );
      answer = converted.admission;
      conversions = converted.conversions.map((c) => conversionFrom(c, true));
    } else {
      answer = this.#call('admit-tool-result', () => this.#api.admitToolResult(String(toolName), json, opts));
    }
    const changed = answer.content != null;
    const out = {
      content: changed ? parseOrText(answer.content) : isText ? parseOrText(content) : content,
      refused: answer.refused.map(refusedBlockFrom),
      changed,
    };
    if (conversions) out.conversions = conversions;
    return out;
  }

  /**
   * Admit a whole provider request (`api`: `'anthropic'` Messages or `'openai'` Chat Completions):
   * every image and document block in its messages admitted in place or replaced in its slot by
   * a text block, and the API's request-level rules applied (images per request, 2000 px when an
   * Anthropic request carries more than 20 images, 32 MB per Anthropic request).
   *
   * `request` is JSON text (the answer's `request` is then text: the input byte for byte outside
   * the changed blocks) or a JSON value (the answer's `request` is then a value). The per-image
   * profile is `options.provider`, else the instance's default, else the API's own.
   * Answers `{ok: true, request, changed, changes, refused}` (`refused`: the refused blocks'
   * paths) or `{ok: false, unusable, reason, bytes, limit, rule, message}` for a request that is
   * not one of the API (`unusable`) or cannot be made to fit a rule.
   */
  admitRequest(api, request, options) {
    if (!REQUEST_APIS.includes(api)) {
      throw new TypeError(`api must be one of ${REQUEST_APIS.join(', ')} (got ${JSON.stringify(api)})`);
    }
    const isText = typeof request === 'string';
    const json = isText ? request : JSON.stringify(request);
    if (json === undefined) throw new TypeError('request must be JSON text or a JSON-serialisable value');
    const merged = withDefaults(this.#defaults, options);
    if (merged && typeof merged === 'object' && merged.provider === undefined) merged.provider = api;
    const convert = this.#converting(options);
    const opts = toOptions(merged, this.#base);
    let answer;
    let conversions;
    if (convert) {
      const converted = this.#call('conversion.admit-request', () => this.#conversion.admitRequest(api, json, opts));
      answer = converted.verdict;
      conversions = converted.conversions.map((c) => conversionFrom(c, true));
    } else {
      answer = this.#call('admit-request', () => this.#api.admitRequest(api, json, opts));
    }
    if (answer.tag === 'refused') {
      const r = answer.val;
      return {
        ...(conversions ? { conversions } : {}),
        ok: false,
        unusable: r.unusable,
        reason: snake(r.reason),
        bytes: Number(r.bytes),
        limit: r.limit == null ? null : Number(r.limit),
        rule: r.rule ?? null,
        message: r.message,
      };
    }
    const a = answer.val;
    const changes = a.changes.map(changeFrom);
    const changed = a.request != null;
    const text = changed ? a.request : json;
    const out = {
      ok: true,
      request: isText ? text : changed ? JSON.parse(text) : request,
      changed,
      changes,
      refused: changes.filter((c) => c.what === 'refused').map((c) => c.path),
    };
    if (conversions) out.conversions = conversions;
    return out;
  }

  /** The media type the bytes carry, from their signature. */
  sniff(bytes) {
    const input = toBytes(bytes);
    return this.#call('sniff', () => this.#api.sniff(input));
  }
}

// ---------------------------------------------------------------------------------------------
// Module-level convenience: one shared instance, created on first use, replaced after a trap.

let shared;
let sharedConverting;
let sharedOptions = {};

/**
 * Sets the `createGate` options (loading and admission defaults) the module-level functions'
 * shared instance is made with. The current instance, if any, is dropped; the next call makes a
 * new one with these options.
 */
export function configure(options = {}) {
  checkGateOptions(options);
  sharedOptions = { ...(options ?? {}) };
  shared = undefined;
  sharedConverting = undefined;
}

/**
 * The shared gate instance (created on first use). With options, it first `configure`s them.
 */
export function ready(options) {
  if (options !== undefined) configure(options);
  if (!shared) {
    const made = createGate(sharedOptions);
    shared = made;
    made.catch(() => {
      if (shared === made) shared = undefined;
    });
  }
  return shared;
}

/**
 * The shared converting instance (`createGate({ ...configured, convert: true })`), created the
 * first time a call asks to convert: only then is the converter component fetched.
 */
export function readyConverting() {
  if (!sharedConverting) {
    const made = createGate({ ...sharedOptions, convert: true });
    sharedConverting = made;
    made.catch(() => {
      if (sharedConverting === made) sharedConverting = undefined;
    });
  }
  return sharedConverting;
}

/** Whether a module-level call with `options` converts (its `convert`, else `configure`'s). */
function wantsConversion(options) {
  const given = options !== null && typeof options === 'object' ? options.convert : undefined;
  return (given ?? sharedOptions.convert) === true;
}

async function toBytesAsync(bytes) {
  if (typeof Blob !== 'undefined' && bytes instanceof Blob) return new Uint8Array(await bytes.arrayBuffer());
  return bytes;
}

async function withShared(fn, converting = false) {
  const gate = await (converting ? readyConverting() : ready());
  try {
    return fn(gate);
  } finally {
    if (gate.trapped) {
      // A trapped instance is dropped; the next call makes a new one.
      if (shared && (await shared.catch(() => null)) === gate) shared = undefined;
      if (sharedConverting && (await sharedConverting.catch(() => null)) === gate) sharedConverting = undefined;
    }
  }
}

export async function admitImage(bytes, claimedMime, options) {
  const input = await toBytesAsync(bytes);
  return withShared((gate) => gate.admitImage(input, claimedMime, options), wantsConversion(options));
}

export async function admitDocument(bytes, claimedMime = 'application/pdf', options) {
  const input = await toBytesAsync(bytes);
  return withShared((gate) => gate.admitDocument(input, claimedMime, options));
}

export async function admit(bytes, claimedMime, options) {
  const input = await toBytesAsync(bytes);
  return withShared((gate) => gate.admit(input, claimedMime, options), wantsConversion(options));
}

/** Render page `page` (1-based, default 1) of a PDF and admit it as an image (loads the converter). */
export async function admitPdfPage(bytes, page = 1, options) {
  const input = await toBytesAsync(bytes);
  return withShared((gate) => gate.admitPdfPage(input, page, options), true);
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

export async function sniff(bytes) {
  const input = await toBytesAsync(bytes);
  return withShared((gate) => gate.sniff(input));
}
