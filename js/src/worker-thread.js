// The Worker side of @mediagate/preflight/worker: one gate instance inside a dedicated Worker (a
// browser module Worker or a Node worker_threads Worker), answering the page's requests one at a
// time. The page side is src/worker.js; bundlers that do not follow `new URL('./worker-thread.js',
// import.meta.url)` (esbuild) build this file as an entry point of its own
// (`@mediagate/preflight/worker-thread`) and pass its URL as `createWorkerGate({ workerUrl })`.

import { createGate } from './index.js';

const OPS = new Set(['admitImage', 'admitDocument', 'admit', 'admitToolResult', 'sniff', 'admitPdfPage', 'convertibleTypes']);
// Answered by the converting instance (the converter component, loaded on the first such request).
const CONVERTING_OPS = new Set(['admitPdfPage', 'convertibleTypes']);
// Where each op's options are (a call converts when they, or the Worker's options, say `convert`).
const OPTIONS_AT = { admitImage: 2, admitDocument: 2, admit: 2, admitToolResult: 2, admitPdfPage: 2 };

async function connect() {
  if (typeof globalThis.WorkerGlobalScope !== 'undefined' && globalThis instanceof globalThis.WorkerGlobalScope) {
    return {
      post: (message) => globalThis.postMessage(message),
      listen: (fn) => globalThis.addEventListener('message', (event) => fn(event.data)),
    };
  }
  // Node: worker_threads (the name is not a literal so that browser bundlers leave it alone).
  const workerThreads = 'node:worker_threads';
  const { parentPort } = await import(/* @vite-ignore */ /* webpackIgnore: true */ workerThreads).catch(() => ({}));
  if (!parentPort) throw new Error('@mediagate/preflight/worker-thread runs only inside a Worker');
  return { post: (message) => parentPort.postMessage(message), listen: (fn) => parentPort.on('message', fn) };
}

function errorReply(id, error) {
  const name = error?.name === 'TypeError' || error?.name === 'GateError' ? error.name : 'Error';
  const kind = typeof error?.kind === 'string' ? { kind: error.kind } : {};
  return { id, ok: false, error: { name, message: String(error?.message ?? error), ...kind } };
}

const port = await connect();
let options = null;
let gate = null;
let converting = null;

function gateOptions(init) {
  return { ...(init ?? {}) };
}

async function handle(message) {
  const { id, op, args = [] } = message;
  if (op === 'init') {
    options = gateOptions(args[0]);
    gate = await createGate(options);
    return true;
  }
  if (!OPS.has(op)) throw new Error(`unknown request ${JSON.stringify(op)}`);
  if (options === null) throw new Error('the gate Worker was not initialised');
  const callOptions = args[OPTIONS_AT[op]];
  const convert =
    CONVERTING_OPS.has(op) ||
    ((callOptions !== null && typeof callOptions === 'object' ? callOptions.convert : undefined) ?? options.convert) === true;
  // A trap discards the instance (as the module-level functions do); the next call makes a new one.
  // The converter component is loaded only when a request asks to convert.
  let instance;
  if (convert) {
    if (converting === null || converting.trapped) converting = await createGate({ ...options, convert: true });
    instance = converting;
  } else {
    if (gate === null || gate.trapped) gate = await createGate(options);
    instance = gate;
  }
  const [first, ...rest] = args;
  const input =
    args.length > 0 && op !== 'admitToolResult' && typeof Blob !== 'undefined' && first instanceof Blob
      ? new Uint8Array(await first.arrayBuffer())
      : first;
  // The page's side starts the call's CPU deadline here: loading and compiling are not the call.
  port.post({ begin: id });
  return args.length === 0 ? instance[op]() : instance[op](input, ...rest);
}

// One request at a time, in order: each call is synchronous work inside the gate anyway.
let queue = Promise.resolve();
port.listen((message) => {
  if (message === null || typeof message !== 'object' || typeof message.id !== 'number') return;
  queue = queue.then(async () => {
    let reply;
    try {
      reply = { id: message.id, ok: true, value: await handle(message) };
    } catch (error) {
      reply = errorReply(message.id, error);
    }
    try {
      port.post(reply);
    } catch (error) {
      port.post(errorReply(message.id, new Error(`the answer could not be sent back: ${error?.message ?? error}`)));
    }
  });
});
port.post({ started: true });
