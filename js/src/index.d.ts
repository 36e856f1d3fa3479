// Types of @mediagate/preflight (hand-written; the jco-generated component types are in
// dist/generated/mediagate.d.ts and dist/generated/interfaces/).

export type Provider = 'anthropic' | 'openai' | 'gemini' | 'ollama';
export type VerifyMode = 'header' | 'full';
export type RefusalReason =
  | 'mime_unsupported'
  | 'raw_too_large'
  | 'magic_mismatch'
  | 'base64_too_large'
  | 'undecodable'
  | 'dimensions_too_large'
  | 'request_limit';
export type RequestApi = 'anthropic' | 'openai';

export interface AdmitOptions {
  /** Allow the downsample ladder (fit 2000x2000, re-encode). Raises the read cap to 64 MiB. Default true. */
  downsample?: boolean;
  /** Whose content API the block is for; the provider's limits apply. Default 'anthropic'. */
  provider?: Provider;
  /** 'full': decode every pixel (a cut or corrupt image is refused); 'header': read the header and walk the container only. Default: DEFAULT_OPTIONS.verify ('full'). */
  verify?: VerifyMode;
  /**
   * Convert a type no provider takes (SVG, BMP, TIFF, ICO; an animated GIF's first frame for a
   * profile that refuses animation) into an image it does, in the sandbox, instead of refusing it
   * (`mime_unsupported`). Default false. The converter is a component of its own
   * (`mediagate-convert.core.wasm`), fetched only by a call that converts.
   */
  convert?: boolean;
  /**
   * Admit an image's metadata (EXIF, XMP, IPTC, comments, text chunks, APNG animation) as given
   * instead of the gate's canonical re-mux without it. Default false.
   */
  keepMetadata?: boolean;
}

/** The component's admission options (what `default-options` answers): AdmitOptions without `convert`. */
export type ComponentOptions = Required<Omit<AdmitOptions, 'convert'>>;

/** A conversion the gate made (WIT `conversion-made`). */
export interface Conversion {
  /** The input's media type (`image/svg+xml`, `image/bmp`, `image/tiff`, `image/vnd.microsoft.icon`, `image/gif`, `application/pdf`). */
  from: string;
  /** The admitted block's media type. */
  to: string;
  /** What was done, in words ("rendered at 1024x768", "the first of 12 frames", "page 2 of 5 at 150 dpi"). */
  note: string;
}

/** A conversion of one block of a tool result or request. */
export interface BlockConversion extends Conversion {
  /** JSON Pointer (RFC 6901) of the block. */
  path: string;
}

/** The bytes to judge. The module-level functions also take a Blob (a File from an input or a drop). */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | number[];

export interface ContentBlock {
  type: 'image' | 'document';
  source: { type: 'base64'; media_type: string; data: string };
}

export interface Dimensions {
  width: number;
  height: number;
}

export interface Admitted {
  ok: true;
  /** The content block (Anthropic shape), built from the bytes that were checked. */
  block: ContentBlock;
  mime: string;
  /** Size of the bytes that were given. */
  originalSize: number;
  /** Measured dimensions of the admitted image; undefined when not measured (documents). */
  dimensions: Dimensions | undefined;
  /** The pixel size changed (fitted or scaled down). */
  resized: boolean;
  /** The bytes were re-encoded (resized, upright-rotated, or transcoded to JPEG). */
  reencoded: boolean;
  /** Length of the block's base64 data. */
  base64Len: number;
  /** What the gate's canonical form left out of the input, by kind (`exif`, `xmp`, `comment`, …); empty when nothing was. */
  dropped: string[];
  /** Present when the image was converted (a converting call): from what, to what, how. */
  converted?: Conversion;
}

export interface Refused {
  ok: false;
  reason: RefusalReason;
  /** Size of the raw bytes that were judged. */
  rawBytes: number;
  /** The bound that was exceeded, where one applies (absent otherwise). */
  limit?: number;
  /** The refusal in words a person or a model can act on. */
  message: string;
}

export type Verdict = Admitted | Refused;

/** Why a PDF page did not become an image (`admitPdfPage`), besides the gate's own refusals. */
export type PageRefused =
  | { ok: false; reason: 'no_such_page'; page: number; pageCount: number; message: string }
  | { ok: false; reason: 'encrypted'; message: string }
  | { ok: false; reason: 'blank_page'; page: number; message: string };

export type PageVerdict = Admitted | Refused | PageRefused;

export interface RefusedBlock {
  /** Position of the block in the array that holds it (0 when no array holds it). */
  index: number;
  /** JSON Pointer of the block in the result (`/content/2`); '' when the whole result was refused. */
  path: string;
  /** The block's type as it was given (`image`, `document`, `resource`). */
  type: string;
  reason: RefusalReason;
  /** Raw (decoded) byte count; 0 when nothing could be decoded. */
  bytes: number;
  limit?: number;
  /** The media type the block claimed, or null. */
  mime: string | null;
}

export interface ToolResultAdmission<T = unknown> {
  /**
   * The content as a JSON value: rebuilt with every media block admitted or replaced in its slot by
   * a text block naming the refusal; or, when no block claims a media type, the input unchanged
   * (the very object that was given, or the given JSON text parsed).
   */
  content: T | unknown;
  refused: RefusedBlock[];
  /** False when the gate left the content as it was (no block claims a media type). */
  changed: boolean;
  /** The blocks converted (a converting call only). */
  conversions?: BlockConversion[];
}

/** A block's media as the gate measured it. */
export interface MediaFacts {
  mime: string | null;
  /** Raw (decoded) bytes; 0 when nothing could be decoded. */
  bytes: number;
  width?: number;
  height?: number;
}

/** One block of a request the gate changed (the entries of `mediagate admit-request --json`'s `changed`). */
export interface RequestChange {
  /** JSON Pointer of the block in the request (`/messages/0/content/1`). */
  path: string;
  type: string;
  what: 'downsampled' | 're-encoded' | 'normalized' | 'refused';
  from: MediaFacts;
  /** What was admitted; null when refused. */
  to: MediaFacts | null;
  reason: RefusalReason | null;
  limit: number | null;
  /** The request-level rule that caused it (`anthropic.many_images_max_side`, …); null for the gate's own checks. */
  rule: string | null;
  message: string;
}

export type RequestAdmission<T = unknown> =
  | {
      ok: true;
      /** The admitted request: text when text was given (byte for byte outside the changed blocks), else a value. */
      request: string | T | unknown;
      /** False when the request is exactly as it was given. */
      changed: boolean;
      changes: RequestChange[];
      /** Paths of the refused blocks. */
      refused: string[];
      /** The blocks converted (a converting call only). */
      conversions?: BlockConversion[];
    }
  | {
      ok: false;
      /** Not a request of the API (not JSON, wrong shape, over the read cap); else it cannot be made to fit `rule`. */
      unusable: boolean;
      reason: RefusalReason;
      bytes: number;
      limit: number | null;
      rule: string | null;
      message: string;
      conversions?: BlockConversion[];
    };

/** What `mediagate admit FILE --json` prints. */
export type CliVerdictJson =
  | {
      ok: true;
      kind: 'image' | 'document';
      mime: string;
      original_size: number;
      resized: boolean;
      reencoded: boolean;
      base64_len: number;
      width?: number;
      height?: number;
      converted?: Conversion;
    }
  | { ok: false; reason: RefusalReason; raw_bytes: number; message: string; limit?: number };

/** The core module file the gate loads: the key of `wasmUrls` (one: the component imports nothing). */
export type CoreModuleName = 'mediagate.core.wasm';
/** The converter component's core module (a converting gate loads it instead). */
export type ConvertCoreModuleName = 'mediagate-convert.core.wasm';

/** How the component is loaded (give at most one of wasmBase, wasmUrls, getCoreModule). */
export interface LoadOptions {
  /** Where `mediagate.core.wasm` is served from (default: dist/generated/ beside the module). */
  wasmBase?: string | URL;
  /** The URL of each core module (for bundlers that hand out one URL per asset, e.g. esbuild's `file` loader). */
  wasmUrls?: Partial<Record<CoreModuleName | ConvertCoreModuleName, string | URL>>;
  /** Compile a core module yourself (CSP-restricted pages, your own cache). */
  getCoreModule?: (name: string) => WebAssembly.Module | Promise<WebAssembly.Module>;
  /** Keep compiled core modules for the next instance (default true). */
  cache?: boolean;
  /** Most linear memory the instance may grow to, in bytes: the CLI's (`MEMORY_LIMIT_BYTES`) or less. */
  memoryLimit?: number;
}

/**
 * `createGate`'s options: how to load the component, and the admission options every call of the
 * instance gets unless it gives its own. An unknown key is a TypeError.
 */
export interface CreateGateOptions extends LoadOptions, AdmitOptions {}

/** One instance of the gate; its methods are synchronous. */
export class Gate {
  private constructor();
  /** True once the component trapped; every later call throws GateError. */
  readonly trapped: boolean;
  /** The admission options a call without options gets: DEFAULT_OPTIONS under the instance's own. */
  readonly defaults: ComponentOptions;
  /** The component's own defaults (its `default-options` export), before the instance's. */
  readonly componentDefaults: ComponentOptions;
  /** Whether this instance carries the converters (`createGate({ convert: true })`). */
  readonly converts: boolean;
  /** The media types this gate converts from (a converting gate only: else a TypeError). */
  convertibleTypes(): string[];
  /** Render page `page` (1-based, default 1) of a PDF and admit it as an image (a converting gate only). */
  admitPdfPage(bytes: Bytes, page?: number, options?: AdmitOptions): PageVerdict;
  admitImage(bytes: Bytes, claimedMime: string, options?: AdmitOptions): Verdict;
  admitDocument(bytes: Bytes, claimedMime?: string, options?: AdmitOptions): Verdict;
  /** admitDocument when the claim is application/pdf, admitImage otherwise (as the CLI does). */
  admit(bytes: Bytes, claimedMime: string, options?: AdmitOptions): Verdict;
  admitToolResult<T = unknown>(toolName: string, content: string | T, options?: AdmitOptions): ToolResultAdmission<T>;
  /** A whole provider request through the gate; `options.provider` defaults to the instance's, else the API's own. */
  admitRequest<T = unknown>(api: RequestApi, request: string | T, options?: AdmitOptions): RequestAdmission<T>;
  /** The media type the bytes carry, from their signature. */
  sniff(bytes: Bytes): string;
}

/** Compile (cached per location) and instantiate a new gate. */
export function createGate(options?: CreateGateOptions): Promise<Gate>;
/**
 * Sets the options the module-level functions' shared instance is made with (the current one is
 * dropped; the next call makes a new one).
 */
export function configure(options?: CreateGateOptions): void;
/** The shared instance the module-level functions use (created on first use); with options, configures first. */
export function ready(options?: CreateGateOptions): Promise<Gate>;
/** Checks createGate's options (throws TypeError) and splits them. */
export function checkGateOptions(options?: CreateGateOptions): {
  load: Pick<LoadOptions, 'wasmBase' | 'wasmUrls' | 'getCoreModule' | 'cache'>;
  defaults: AdmitOptions;
};

export function admitImage(bytes: Bytes | Blob, claimedMime: string, options?: AdmitOptions): Promise<Verdict>;
export function admitDocument(bytes: Bytes | Blob, claimedMime?: string, options?: AdmitOptions): Promise<Verdict>;
export function admit(bytes: Bytes | Blob, claimedMime: string, options?: AdmitOptions): Promise<Verdict>;
export function admitToolResult<T = unknown>(
  toolName: string,
  content: string | T,
  options?: AdmitOptions,
): Promise<ToolResultAdmission<T>>;
export function admitRequest<T = unknown>(
  api: RequestApi,
  request: string | T,
  options?: AdmitOptions,
): Promise<RequestAdmission<T>>;
export function sniff(bytes: Bytes | Blob): Promise<string>;
/** Render page `page` (1-based, default 1) of a PDF and admit it as an image (loads the converter). */
export function admitPdfPage(bytes: Bytes | Blob, page?: number, options?: AdmitOptions): Promise<PageVerdict>;
/** The media types the converter converts from (loads the converter). */
export function convertibleTypes(): Promise<string[]>;
/** The shared converting instance (created, and the converter fetched, on first use). */
export function readyConverting(): Promise<Gate>;

/** The verdict as the JSON object `mediagate admit FILE --json` prints. */
export function toCliJson(verdict: Verdict): CliVerdictJson;
/** The media type a file name's extension claims (the CLI's default claim). */
export function mimeFromExtension(fileName: string): string;
export function isPdfMime(mime: string): boolean;
/** A sentence a person reads for a refusal reason. */
export function describeReason(reason: RefusalReason | string): string;
/** The admitted bytes, decoded from the block's base64. */
export function admittedBytes(verdict: Admitted): Uint8Array;

export const PROVIDERS: readonly Provider[];
/** What a call without options asks for. */
export const DEFAULT_OPTIONS: Readonly<ComponentOptions>;
export const ADMIT_OPTION_KEYS: readonly (keyof AdmitOptions)[];
export const LOAD_OPTION_KEYS: readonly (keyof LoadOptions)[];
export const CORE_MODULES: readonly CoreModuleName[];
export const CONVERT_CORE_MODULES: readonly ConvertCoreModuleName[];
export const VERIFY_MODES: readonly VerifyMode[];
export const REFUSAL_REASONS: readonly RefusalReason[];
export const REQUEST_APIS: readonly RequestApi[];

/** The CLI's memory limit per instance, in bytes (the Rust host's, written at build). */
export const MEMORY_LIMIT_BYTES: number;
/** The CLI's CPU deadline per call, in milliseconds (kept by the Worker API). */
export const CPU_DEADLINE_MS: number;
/** The CLI's words for a call stopped at the memory limit. */
export function outOfMemoryWords(limitBytes?: number): string;
/** The CLI's words for a call stopped at the CPU deadline. */
export function deadlineWords(deadlineMs?: number): string;

/**
 * A call that stopped instead of answering (the component trapped, ran out of its memory limit or
 * past its deadline: never a verdict), or a gate that could not be loaded (`kind` undefined).
 */
export class GateError extends Error {
  kind?: 'trap' | 'out_of_memory' | 'deadline';
}
