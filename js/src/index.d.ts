// Types of @mediagate/preflight (hand-written; the jco-generated component types are in
// dist/generated/mediagate.d.ts and dist/generated/interfaces/).

// The profiles, refusal reasons and call-error kinds are generated from the Rust sources.
import type { CallErrorKind, Provider, RefusalReason, RequestApi } from './facts.js';
export type { CallErrorKind, Provider, RefusalReason, RequestApi } from './facts.js';
export { CALL_ERROR_KINDS, REFUSAL_REASONS } from './facts.js';
export type VerifyMode = 'header' | 'full';

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

/** The Anthropic content block of an admitted verdict (`contentBlock`; `mediagate admit --block-out`). */
export interface ContentBlock {
  type: 'image' | 'document';
  source: { type: 'base64'; media_type: string; data: string };
}

/** What one input is: a claimed type, or `{ mime, name, page }` (nothing: the gate picks the type). */
export type Input =
  | string
  | {
      /** The type the caller claims (checked against the bytes). */
      mime?: string;
      /** The file's name: its extension is the hint when the bytes carry no type the gate admits. */
      name?: string;
      /** Render this page (1-based) of a PDF and admit it as an image (loads the converter). */
      page?: number;
    };

/**
 * Beside a verdict's keys, not enumerable (`Object.keys` and `JSON.stringify` see only the CLI's
 * keys; a copy by spreading or JSON drops these).
 */
export interface VerdictExtras {
  /** The component's JSON text, exactly what `mediagate admit --json` prints. */
  readonly json: string;
  /** The type the bytes carry (their signature). */
  readonly sniffed: string;
  /** Set when the input was refused for its type and the converting gate converts the type its bytes carry (that type). */
  readonly convertible: string | null;
}

/** An admitted verdict: the keys of `mediagate admit --json`. */
export interface Admitted extends VerdictExtras {
  ok: true;
  kind: 'image' | 'document';
  mime: string;
  /** Size of the bytes that were given. */
  original_size: number;
  /** The pixel size changed (fitted or scaled down). */
  resized: boolean;
  /** The bytes were re-encoded (resized, upright-rotated, converted, or transcoded to JPEG). */
  reencoded: boolean;
  /** Length of the admitted bytes' base64 form (what the provider's limit counts). */
  base64_len: number;
  /** What the gate's canonical form left out of the input, by kind (`exif`, `text`, …); absent when nothing was. */
  dropped?: string[];
  /** What the gate repaired (a cut file's missing part shown empty, frames clipped, an animation shown as its still image), in the words the model is told beside the image; absent when nothing was. */
  repaired?: string;
  /** Measured dimensions of the admitted image; absent when not measured (documents). */
  width?: number;
  height?: number;
  /** Present when the image was converted: from what, to what, how. */
  converted?: Conversion;
  /** The admitted bytes (not enumerable): the caller's own input when the gate admitted it unchanged. */
  readonly bytes: Uint8Array;
}

/** A refused verdict: the keys of `mediagate admit --json`. */
export interface Refused extends VerdictExtras {
  ok: false;
  reason: RefusalReason;
  /** Size of the raw bytes that were judged. */
  raw_bytes: number;
  /** The refusal in words a person or a model can act on. */
  message: string;
  /** The bound that was exceeded, where one applies (absent otherwise). */
  limit?: number;
  /** `no_such_page` only: the page asked for and the pages the PDF has. */
  requested?: number;
  count?: number;
}

export type Verdict = Admitted | Refused;

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

/** What `mediagate admit-tool-result` prints, parsed. */
export interface ToolResultAdmission {
  /**
   * The content: rebuilt with every media block admitted or replaced in its slot by a text block
   * naming the refusal; or, when no block claims a media type, the input as it was.
   */
  content: unknown;
  refused: RefusedBlock[];
  /** The blocks converted (a converting call only). */
  conversions?: BlockConversion[];
  /** Not enumerable: the component's JSON text, exactly what the CLI prints. */
  readonly json: string;
  /** Not enumerable: false when the gate left the content as it was (no block claims a media type). */
  readonly changed: boolean;
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

/** Why a whole request was refused (`refusal` of `mediagate admit-request --json`). */
export interface RequestRefusal {
  /** Not a request of the API (not JSON, wrong shape, over the read cap); else it cannot be made to fit `rule`. */
  unusable: boolean;
  reason: RefusalReason;
  bytes: number;
  limit: number | null;
  rule: string | null;
  message: string;
}

/** What `mediagate admit-request --json` prints, parsed. */
export interface RequestAdmission {
  api: RequestApi;
  /** The admitted request (null when refused whole). */
  request: unknown;
  /** The blocks the gate changed (empty: the request is as it was given). */
  changed: RequestChange[];
  /** Paths of the refused blocks. */
  refused: string[];
  /** Null unless the whole request was refused. */
  refusal: RequestRefusal | null;
  /** The blocks converted (a converting call only). */
  conversions?: BlockConversion[];
  /** Not enumerable: the component's JSON text, exactly what the CLI prints. */
  readonly json: string;
  /** Not enumerable: the admitted request as text (the input byte for byte outside the changed blocks); null when refused whole. */
  readonly requestText: string | null;
}

/** The Batch API a batch file is written for: OpenAI Batch or Anthropic Message Batches. */
export type BatchApi = 'openai' | 'anthropic';
/** What became of one batch request (the report line's `outcome`). */
export type BatchOutcome = 'unchanged' | 'changed' | 'refused_blocks' | 'refused';

/** `admitBatchLine`'s options: the batch's API, the request's number, and the admission options. */
export interface BatchLineOptions extends AdmitOptions {
  api: BatchApi;
  /** The request's 1-based line (or `requests` item) number, which the report names (default 1). */
  number?: number;
}

/** One batch request's report line (what `mediagate admit-batch --report` writes for it), parsed. */
export interface BatchLineAdmission {
  number: number;
  custom_id: string | null;
  outcome: BatchOutcome;
  /** The OpenAI request's endpoint (absent for Anthropic and for lines that are not requests). */
  url?: string;
  changed: RequestChange[];
  refused: string[];
  /** Null unless the whole request was refused (`outcome: 'refused'`). */
  refusal: RequestRefusal | null;
  /** The blocks converted (a converting call only). */
  conversions?: BlockConversion[];
  /** Not enumerable: the report line's text, exactly what the CLI writes. */
  readonly json: string;
  /** Not enumerable: the request as it goes out (the input itself when unchanged); null when refused whole. */
  readonly line: string | null;
}

/** A rule of the Batch API on a whole file that the file breaks (the summary's `file_rules`). */
export interface BatchFileRule {
  /** `openai.batch_requests`, `openai.batch_file_bytes`, `anthropic.batch_requests`, `anthropic.batch_bytes`. */
  rule: string;
  limit: number;
  actual: number;
  message: string;
}

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
  /** The media types this gate converts from (`convertible-types`; empty without the converters). */
  convertibleTypes(): string[];
  /** Render page `page` (1-based, default 1) of a PDF and admit it as an image (a converting gate only). */
  admitPdfPage(bytes: Bytes, page?: number, options?: AdmitOptions): Verdict;
  /**
   * Admit one input as `mediagate admit` does: the gate sniffs, picks the type (the claimed one; else
   * the one the bytes carry, or the one the name's extension names) and judges it, in one call.
   */
  admit(bytes: Bytes, input?: Input, options?: AdmitOptions): Verdict;
  admitToolResult(toolName: string, content: unknown, options?: AdmitOptions): ToolResultAdmission;
  /** A whole provider request through the gate; `options.provider` defaults to the instance's, else the API's own. */
  admitRequest(api: RequestApi, request: unknown, options?: AdmitOptions): RequestAdmission;
  /** One request of a Batch API file (a JSON line without its break, or one `requests` item) through the gate. */
  admitBatchLine(line: string, options: BatchLineOptions): BatchLineAdmission;
  /** The Batch API's whole-file rules a file of `requests` requests and `bytes` bytes breaks (empty: none). */
  checkBatchFile(api: BatchApi, requests: number, bytes: number): BatchFileRule[];
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

/** `Gate.admit` on the shared instance; a File's name is the input's name hint unless the input names a type or a name. */
export function admit(bytes: Bytes | Blob, input?: Input, options?: AdmitOptions): Promise<Verdict>;
export function admitToolResult(toolName: string, content: unknown, options?: AdmitOptions): Promise<ToolResultAdmission>;
export function admitRequest(api: RequestApi, request: unknown, options?: AdmitOptions): Promise<RequestAdmission>;
/** `Gate.admitBatchLine` on the shared instance (the converting one when `options.convert`). */
export function admitBatchLine(line: string, options: BatchLineOptions): Promise<BatchLineAdmission>;
export function checkBatchFile(api: BatchApi, requests: number, bytes: number): Promise<BatchFileRule[]>;
/** Render page `page` (1-based, default 1) of a PDF and admit it as an image (loads the converter). */
export function admitPdfPage(bytes: Bytes | Blob, page?: number, options?: AdmitOptions): Promise<Verdict>;
/** The media types the converter converts from (loads the converter). */
export function convertibleTypes(): Promise<string[]>;
/** The shared converting instance (created, and the converter fetched, on first use). */
export function readyConverting(): Promise<Gate>;

/** A sentence a person reads for a refusal reason. */
export function describeReason(reason: RefusalReason | string): string;
/** The admitted bytes (`verdict.bytes`; a TypeError for a refused verdict or a copy without them). */
export function admittedBytes(verdict: Verdict): Uint8Array;
/** The admitted block in the Anthropic content-block shape (base64 of the admitted bytes). */
export function contentBlock(verdict: Verdict): ContentBlock;
/** A verdict rebuilt from the parts a Worker sends back. */
export function verdictFromParts(parts: { json: string; bytes?: Uint8Array; sniffed: string; convertible?: string | null }): Verdict;
/** The parts of a verdict, as a Worker sends them back. */
export function verdictParts(verdict: Verdict): { json: string; bytes?: Uint8Array; sniffed: string; convertible: string | null };
export function toolResultFromParts(parts: { json: string; changed: boolean }): ToolResultAdmission;
export function requestFromParts(parts: { json: string; requestText: string | null }): RequestAdmission;
export function batchLineFromParts(parts: { json: string; line: string | null }): BatchLineAdmission;
/** Checks `admitBatchLine`'s options (TypeError) and splits off `api` and `number`. */
export function batchLineOptions(options: BatchLineOptions): { api: BatchApi; number: number; rest: AdmitOptions };
/** The input with a File's name as its name hint, unless it names a type or a name itself. */
export function withFileName(bytes: Bytes | Blob, input?: Input): Input | undefined;
/** A Blob's bytes, its name (a File's) as the input's name hint. */
export function readInput(bytes: Bytes | Blob, input?: Input): Promise<{ bytes: Bytes; input?: Input }>;

export const PROVIDERS: readonly Provider[];
/** What a call without options asks for: the component's `default-options`, read at build. */
export const DEFAULT_OPTIONS: Readonly<ComponentOptions>;
export const ADMIT_OPTION_KEYS: readonly (keyof AdmitOptions)[];
export const LOAD_OPTION_KEYS: readonly (keyof LoadOptions)[];
export const CORE_MODULES: readonly CoreModuleName[];
export const CONVERT_CORE_MODULES: readonly ConvertCoreModuleName[];
export const VERIFY_MODES: readonly VerifyMode[];
export const REQUEST_APIS: readonly RequestApi[];
export const BATCH_APIS: readonly BatchApi[];
/** The keys of `admit`'s input object. */
export const INPUT_KEYS: readonly ('mime' | 'name' | 'page')[];

/** The CLI's memory limit per instance, in bytes, and its CPU deadline per call, in milliseconds (kept by the Worker API): the Rust host's. */
export { CPU_DEADLINE_MS, MEMORY_LIMIT_BYTES } from './facts.js';
/** The CLI's words for a call stopped at the memory limit. */
export function outOfMemoryWords(limitBytes?: number): string;
/** The CLI's words for a call stopped at the CPU deadline. */
export function deadlineWords(deadlineMs?: number): string;

/**
 * A call that stopped instead of answering (the component trapped, ran out of its memory limit or
 * past its deadline: never a verdict), or a gate that could not be loaded (`kind` undefined).
 */
export class GateError extends Error {
  kind?: CallErrorKind;
}
