// @mediagate/preflight/worker: the package's async API, run in a dedicated Worker so that a
// downsample (hundreds of milliseconds of synchronous work for a 12 MP photo) never blocks the
// page's main thread.
//
//   import { admit } from '@mediagate/preflight/worker';
//   const verdict = await admit(file);    // the page keeps painting meanwhile (a File's name is the hint)
//
// The Worker is src/worker-thread.js, started as a module Worker (browsers) or a worker_threads
// Worker (Node). Its URL is `new URL('./worker-thread.js', import.meta.url)`, which webpack 5 and
// Vite follow; with esbuild, build `@mediagate/preflight/worker-thread` as an entry point of its own
// and pass its URL as `workerUrl`.

import {
  CONVERT_CORE_MODULES,
  CORE_MODULES,
  CPU_DEADLINE_MS,
  GateError,
  batchLineFromParts,
  checkGateOptions,
  deadlineWords,
  toolResultFromParts,
  verdictFromParts,
  withFileName,
} from './index.js';
import { CALL_ERROR_KIND } from './facts.js';
import { SharedInstance } from './shared-instance.js';

export {
  ADMIT_OPTION_KEYS,
  BATCH_APIS,
  CONVERT_CORE_MODULES,
  CORE_MODULES,
  CPU_DEADLINE_MS,
  DEFAULT_OPTIONS,
  MEMORY_LIMIT_BYTES,
  GateError,
  PROVIDERS,
  REFUSAL_REASONS,
  VERIFY_MODES,
  INPUT_KEYS,
  admittedBytes,
  contentBlock,
  describeReason,
} from './index.js';

const WORKER_HINT =
  'a bundler that does not follow new URL("./worker-thread.js", import.meta.url) (esbuild) needs ' +
  '@mediagate/preflight/worker-thread built as an entry point and its URL given as createWorkerGate({ workerUrl })';

function here() {
  return globalThis.location?.href;
}

/** The options as they cross to the Worker: URLs made absolute (against the page). */
function crossingOptions(options) {
  if (options?.getCoreModule !== undefined) {
    throw new TypeError('createWorkerGate: getCoreModule cannot cross to a Worker; pass wasmBase or wasmUrls');
  }
  const { load, defaults } = checkGateOptions(options);
  const absolute = (url) => (here() ? new URL(String(url), here()).href : String(url));
  const out = { ...defaults };
  if (load.cache !== undefined) out.cache = load.cache;
  if (load.memoryLimit !== undefined) out.memoryLimit = load.memoryLimit;
  if (load.wasmBase !== undefined) out.wasmBase = absolute(load.wasmBase);
  if (load.wasmUrls !== undefined) {
    out.wasmUrls = Object.fromEntries(
      [...CORE_MODULES, ...CONVERT_CORE_MODULES]
        .filter((name) => load.wasmUrls[name] != null)
        .map((name) => [name, absolute(load.wasmUrls[name])]),
    );
  }
  return out;
}

/** Starts the Worker: a module Worker where `Worker` exists (browsers), worker_threads in Node. */
async function spawn(workerUrl) {
  const url =
    workerUrl === undefined
      ? new URL('./worker-thread.js', import.meta.url)
      : new URL(String(workerUrl), here() ?? import.meta.url);
  const start = (make) => {
    try {
      return make();
    } catch (error) {
      throw new Error(`the gate Worker (${url}) could not be started: ${error.message}; ${WORKER_HINT}`, { cause: error });
    }
  };
  if (typeof globalThis.Worker === 'function') {
    const worker = start(() => new globalThis.Worker(url, { type: 'module', name: 'mediagate-gate' }));
    return {
      url,
      post: (message) => worker.postMessage(message),
      listen(onMessage, onFailure) {
        worker.addEventListener('message', (event) => onMessage(event.data));
        worker.addEventListener('messageerror', () => onFailure(new Error('a message from the gate Worker could not be read')));
        worker.addEventListener('error', (event) => {
          event.preventDefault?.();
          onFailure(new Error(event.message || `the script ${url} could not be loaded or run`));
        });
      },
      terminate: () => worker.terminate(),
      busy() {},
      idle() {},
    };
  }
  const workerThreads = 'node:worker_threads';
  const { Worker } = await import(/* @vite-ignore */ /* webpackIgnore: true */ workerThreads);
  const worker = start(() => new Worker(url));
  worker.unref(); // an idle gate Worker does not keep the process alive; a pending call does
  return {
    url,
    post: (message) => worker.postMessage(message),
    listen(onMessage, onFailure) {
      worker.on('message', onMessage);
      worker.on('messageerror', () => onFailure(new Error('a message from the gate Worker could not be read')));
      worker.on('error', (error) => onFailure(error));
      worker.on('exit', (code) => onFailure(new Error(`the gate Worker exited (code ${code})`)));
    },
    terminate: () => worker.terminate(),
    busy: () => worker.ref(),
    idle: () => worker.unref(),
  };
}

function rebuildError(error) {
  const message = error?.message ?? 'the gate Worker failed';
  if (error?.name === 'TypeError') return new TypeError(message);
  if (error?.name === 'GateError') return new GateError(message, { kind: error.kind });
  return new Error(message);
}

/** The CPU deadline a Worker gate keeps: the CLI's, or a shorter one given as `deadlineMs`. */
function checkDeadline(deadlineMs) {
  if (deadlineMs === undefined) return CPU_DEADLINE_MS;
  if (!(Number.isSafeInteger(deadlineMs) && deadlineMs >= 1 && deadlineMs <= CPU_DEADLINE_MS)) {
    throw new TypeError(`createWorkerGate: deadlineMs must be a whole number of milliseconds from 1 to ${CPU_DEADLINE_MS} (the CLI's)`);
  }
  return deadlineMs;
}

/** A gate running in a dedicated Worker: the module-level API, every method async. */
export class WorkerGate {
  #thread;
  #pending = new Map(); // id -> { resolve, reject }
  #nextId = 1;
  #inflight = 0;
  #failure = null;
  #started;
  #deadlineMs;

  /** Use `createWorkerGate()`. */
  constructor(thread, deadlineMs = CPU_DEADLINE_MS) {
    this.#thread = thread;
    this.#deadlineMs = deadlineMs;
    let started;
    this.#started = new Promise((resolve, reject) => {
      started = { resolve, reject };
    });
    this.#started.catch(() => {});
    thread.listen(
      (message) => {
        if (message?.started) started.resolve();
        else if (message?.begin !== undefined) this.#begin(message.begin);
        else this.#settle(message);
      },
      (error) => {
        const failure = new Error(`the gate Worker (${thread.url}) failed: ${error.message}; ${WORKER_HINT}`, {
          cause: error,
        });
        started.reject(failure);
        this.#fail(failure);
      },
    );
  }

  /**
   * The Worker started running call `id` in the gate: past the deadline the Worker is terminated,
   * the only way to stop a wasm call (it runs synchronously in the Worker), and the call is
   * answered with the CLI's words. A Worker cannot report its CPU time, so the deadline is wall-clock
   * time from the moment the call enters the gate (one call runs at a time in the Worker).
   */
  #begin(id) {
    const waiting = this.#pending.get(id);
    if (!waiting) return;
    waiting.timer = setTimeout(() => {
      const words = `${waiting.op}: ${deadlineWords(this.#deadlineMs)}`;
      this.#pending.delete(id);
      waiting.reject(new GateError(words, { kind: CALL_ERROR_KIND.DEADLINE }));
      this.#fail(new GateError(`the gate Worker was ended when a call ran past its deadline (${words})`, { kind: CALL_ERROR_KIND.DEADLINE }));
    }, this.#deadlineMs);
  }

  #settle({ id, ok, value, error }) {
    const waiting = this.#pending.get(id);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    this.#pending.delete(id);
    if (ok) waiting.resolve(value);
    else waiting.reject(rebuildError(error));
  }

  #fail(error) {
    if (this.#failure) return;
    this.#failure = error;
    this.#thread.terminate();
    for (const waiting of this.#pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.#pending.clear();
  }

  /** True once the Worker failed or was terminated; every later call rejects. */
  get closed() {
    return this.#failure !== null;
  }

  async _request(op, args) {
    // A call in flight keeps a Node process alive (an idle Worker does not).
    if (this.#inflight++ === 0) this.#thread.busy();
    try {
      await this.#started;
      if (this.#failure) throw this.#failure;
      const id = this.#nextId++;
      return await new Promise((resolve, reject) => {
        this.#pending.set(id, { resolve, reject, op, timer: undefined });
        try {
          this.#thread.post({ id, op, args });
        } catch (error) {
          this.#pending.delete(id);
          reject(new TypeError(`the arguments cannot be sent to the gate Worker: ${error.message}`));
        }
      });
    } finally {
      if (--this.#inflight === 0) this.#thread.idle();
    }
  }

  // A verdict crosses back as its parts (the JSON text, the admitted bytes, …): the properties
  // beside the JSON keys are not enumerable, so a structured clone would drop them.

  /** `Gate.admit` in the Worker; a `Blob`/`File` crosses as it is (a File's name is the hint). */
  async admit(bytes, input, options) {
    // The name is taken here: a File may cross to the Worker as a plain Blob (Node's does).
    return verdictFromParts(await this._request('admit', [bytes, withFileName(bytes, input), options]));
  }

  /** Page `page` of a PDF rendered and admitted as an image (the converter, loaded in the Worker). */
  async admitPdfPage(bytes, page = 1, options) {
    return verdictFromParts(await this._request('admitPdfPage', [bytes, page, options]));
  }

  async admitToolResult(toolName, content, options) {
    const isText = typeof content === 'string';
    if (!isText && JSON.stringify(content) === undefined) {
      throw new TypeError('content must be JSON text or a JSON-serialisable value');
    }
    // A value crosses as JSON text (what the gate reads anyway).
    return toolResultFromParts(await this._request('admitToolResult', [toolName, isText ? content : JSON.stringify(content), options]));
  }

  /** The media types the converter converts from. */
  convertibleTypes() {
    return this._request('convertibleTypes', []);
  }

  /** `Gate.admitBatchLine` in the Worker. */
  async admitBatchLine(line, options) {
    return batchLineFromParts(await this._request('admitBatchLine', [line, options]));
  }

  /** `Gate.checkBatchFile` in the Worker. */
  checkBatchFile(api, requests, bytes) {
    return this._request('checkBatchFile', [api, requests, bytes]);
  }

  /** Ends the Worker; pending and later calls reject. */
  terminate() {
    this.#fail(new Error('the gate Worker was terminated'));
  }
}

/**
 * Starts a dedicated Worker and a gate in it. Takes `createGate`'s options (admission defaults,
 * `wasmBase`, `wasmUrls`, `cache`; not `getCoreModule`, a function cannot cross)
 * and `workerUrl`, the URL of `worker-thread.js` when a bundler moved it.
 */
export async function createWorkerGate(options = {}) {
  const { workerUrl, deadlineMs, ...rest } = options ?? {};
  const deadline = checkDeadline(deadlineMs);
  const crossing = crossingOptions(rest);
  const gate = new WorkerGate(await spawn(workerUrl), deadline);
  try {
    await gate._request('init', [crossing]);
  } catch (error) {
    gate.terminate();
    throw error;
  }
  return gate;
}

// ---------------------------------------------------------------------------------------------
// Module-level convenience: one shared Worker, started on first use, replaced when it failed.

let sharedOptions = {};
const shared = new SharedInstance(() => createWorkerGate(sharedOptions));

/** Sets the options the shared Worker gate is made with; the current one, if any, is ended. */
export function configure(options = {}) {
  const { workerUrl, deadlineMs, ...rest } = options ?? {};
  checkDeadline(deadlineMs);
  crossingOptions(rest); // checked now
  sharedOptions = { ...(options ?? {}) };
  terminate();
}

/** The shared Worker gate (started on first use). With options, it first `configure`s them. */
export function ready(options) {
  if (options !== undefined) configure(options);
  return shared.get();
}

/** Ends the shared Worker (the next call starts a new one). */
export function terminate() {
  shared.forget()?.then((gate) => gate.terminate(), () => {});
}

async function withShared(fn) {
  const gate = await ready();
  try {
    return await fn(gate);
  } finally {
    if (gate.closed) await shared.forgetIf(gate);
  }
}

export function admit(bytes, input, options) {
  return withShared((gate) => gate.admit(bytes, input, options));
}

export function admitToolResult(toolName, content, options) {
  return withShared((gate) => gate.admitToolResult(toolName, content, options));
}

export function admitPdfPage(bytes, page = 1, options) {
  return withShared((gate) => gate.admitPdfPage(bytes, page, options));
}

export function convertibleTypes() {
  return withShared((gate) => gate.convertibleTypes());
}

export function admitBatchLine(line, options) {
  return withShared((gate) => gate.admitBatchLine(line, options));
}

export function checkBatchFile(api, requests, bytes) {
  return withShared((gate) => gate.checkBatchFile(api, requests, bytes));
}
