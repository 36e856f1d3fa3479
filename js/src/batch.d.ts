// Types of @mediagate/preflight/batch (Node only): a whole Batch API file through the gate.
import type { BatchApi, BatchFileRule, CreateGateOptions } from './index.js';

export type { BatchApi, BatchFileRule, BatchLineAdmission, BatchOutcome } from './index.js';

/** The most bytes of one request that are read (64 MiB); a longer one is refused unread. */
export const LINE_LIMIT: number;
export const ON_REFUSAL: readonly OnRefusal[];

/**
 * A request with refused blocks: `'placeholder'` sends it with each refused block replaced by
 * words, `'drop'` leaves it out, `'fail'` stops the run (the output file is removed). A request
 * refused whole is left out by the first two.
 */
export type OnRefusal = 'placeholder' | 'drop' | 'fail';

/** What output and report take besides a path: a Node Writable (written with backpressure, left open). */
export interface BatchWritable {
  write(chunk: Uint8Array): boolean;
  on(event: 'drain' | 'error', listener: (...args: any[]) => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'drain' | 'error', listener: (...args: any[]) => void): unknown;
}

export interface AdmitBatchOptions extends CreateGateOptions {
  api: BatchApi;
  onRefusal?: OnRefusal;
  /** Where the report goes: a path or a Writable (one JSON line per request not unchanged, then the summary). */
  report?: string | URL | BatchWritable;
  /** Requests judged at once: 1 (default) in this thread, more in as many Workers. */
  jobs?: number;
}

/** The report's last line's `summary`, with its text and the CLI's exit code beside it. */
export interface BatchSummary {
  api: BatchApi;
  /** Every request judged (blank lines are not requests). */
  requests: number;
  unchanged: number;
  changed: number;
  refused_blocks: number;
  refused: number;
  /** Requests not written to the output. */
  left_out: number;
  bytes_in: number;
  bytes_out: number;
  /** The Batch API's whole-file rules the output breaks (empty: none). */
  file_rules: BatchFileRule[];
  /** The request that stopped an `onRefusal: 'fail'` run; null otherwise. */
  stopped_at: number | null;
  /** Not enumerable: the summary line as written to the report (`{"summary":{…}}`). */
  readonly json: string;
  /** Not enumerable: 0 when nothing was refused and no file rule is broken, else 1 (the CLI's exit code). */
  readonly exitCode: 0 | 1;
}

/** The input cannot be read as a batch file (I/O, or an Anthropic document that is not well formed): the CLI's exit 2. */
export class BatchInputError extends Error {}

/**
 * A Batch API file through the gate, as `mediagate admit-batch FILE --api API -o OUTPUT --report
 * REPORT` does it, byte for byte; streamed, in input order, at most `jobs` requests held at once.
 */
export function admitBatch(
  input: string | URL | Uint8Array | ArrayBuffer | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  output: string | URL | BatchWritable,
  options: AdmitBatchOptions,
): Promise<BatchSummary>;
