// Types of @mediagate/preflight/worker: the package's async API, run in a dedicated Worker.
import type {
  AdmitOptions,
  BatchApi,
  BatchFileRule,
  BatchLineAdmission,
  BatchLineOptions,
  Bytes,
  CreateGateOptions,
  Input,
  ToolResultAdmission,
  Verdict,
} from './index.js';

export type {
  AdmitOptions,
  Admitted,
  BatchApi,
  BatchFileRule,
  BatchLineAdmission,
  BatchLineOptions,
  BatchOutcome,
  BlockConversion,
  Bytes,
  Conversion,
  ContentBlock,
  Input,
  CreateGateOptions,
  Refused,
  RefusedBlock,
  RefusalReason,
  ToolResultAdmission,
  Verdict,
} from './index.js';
export {
  ADMIT_OPTION_KEYS,
  BATCH_APIS,
  CONVERT_CORE_MODULES,
  CORE_MODULES,
  CPU_DEADLINE_MS,
  DEFAULT_OPTIONS,
  GateError,
  MEMORY_LIMIT_BYTES,
  PROVIDERS,
  REFUSAL_REASONS,
  VERIFY_MODES,
  INPUT_KEYS,
  admittedBytes,
  contentBlock,
  describeReason,
} from './index.js';

/** createGate's options that can cross to a Worker, and where the Worker script is. */
export interface WorkerGateOptions extends Omit<CreateGateOptions, 'getCoreModule'> {
  /** The URL of worker-thread.js when a bundler moved it (esbuild: build it as an entry point). */
  workerUrl?: string | URL;
  /** The CPU deadline of one call, in milliseconds: the CLI's (`CPU_DEADLINE_MS`) or less. */
  deadlineMs?: number;
}

/** A gate in a dedicated Worker; every method is async. */
export class WorkerGate {
  private constructor();
  /** True once the Worker failed or was terminated; every later call rejects. */
  readonly closed: boolean;
  admit(bytes: Bytes | Blob, input?: Input, options?: AdmitOptions): Promise<Verdict>;
  admitToolResult(toolName: string, content: unknown, options?: AdmitOptions): Promise<ToolResultAdmission>;
  /** Page `page` (1-based, default 1) of a PDF rendered and admitted as an image (the converter, in the Worker). */
  admitPdfPage(bytes: Bytes | Blob, page?: number, options?: AdmitOptions): Promise<Verdict>;
  /** The media types the converter converts from. */
  convertibleTypes(): Promise<string[]>;
  admitBatchLine(line: string, options: BatchLineOptions): Promise<BatchLineAdmission>;
  checkBatchFile(api: BatchApi, requests: number, bytes: number): Promise<BatchFileRule[]>;
  /** Ends the Worker; pending and later calls reject. */
  terminate(): void;
}

export function createWorkerGate(options?: WorkerGateOptions): Promise<WorkerGate>;
/** Sets the options the shared Worker gate is made with (the current one is ended). */
export function configure(options?: WorkerGateOptions): void;
/** The shared Worker gate (started on first use); with options, configures first. */
export function ready(options?: WorkerGateOptions): Promise<WorkerGate>;
/** Ends the shared Worker (the next call starts a new one). */
export function terminate(): void;

export function admit(bytes: Bytes | Blob, input?: Input, options?: AdmitOptions): Promise<Verdict>;
export function admitToolResult(toolName: string, content: unknown, options?: AdmitOptions): Promise<ToolResultAdmission>;
export function admitPdfPage(bytes: Bytes | Blob, page?: number, options?: AdmitOptions): Promise<Verdict>;
export function convertibleTypes(): Promise<string[]>;
export function admitBatchLine(line: string, options: BatchLineOptions): Promise<BatchLineAdmission>;
export function checkBatchFile(api: BatchApi, requests: number, bytes: number): Promise<BatchFileRule[]>;
