// The Worker side of @mediagate/preflight/worker: one gate instance inside a dedicated Worker (a
// browser module Worker or a Node worker_threads Worker), answering the page's requests one at a
// time. The page side is src/worker.js; bundlers that do not follow `new URL('./worker-thread.js',
// import.meta.url)` (esbuild) build this file as an entry point of its own
// (`@mediagate/preflight/worker-thread`) and pass its URL as `createWorkerGate({ workerUrl })`.

import { batchLineOptions, createGate, readInput, verdictParts } from './index.js';

const OPS = new Set(['admit', 'admitToolResult', 'admitPdfPage', 'convertibleTypes', 'admitBatchLine', 'checkBatchFile']);
// Answered by the converting instance (the converter component, loaded on the first such request).
const CONVERTING_OPS = new Set(['admitPdfPage', 'convertibleTypes']);
// Where each op's options are (a call converts when they, or the Worker's options, say `convert`).
const OPTIONS_AT = { admit: 2, admitToolResult: 2, admitPdfPage: 2, admitBatchLine: 1 };

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
  // admitBatchLine's options carry its api and number beside the admission options.
  const callOptions = op === 'admitBatchLine' ? batchLineOptions(args[1]).rest : args[OPTIONS_AT[op]];
  // A Blob or File is read here (a File's name becomes the input's name hint).
  if (op === 'admit' || op === 'admitPdfPage') {
    const read = await readInput(args[0], op === 'admit' ? args[1] : undefined);
    args[0] = read.bytes;
    if (op === 'admit') args[1] = read.input;
  }
  const page = op === 'admit' && args[1] !== null && typeof args[1] === 'object' ? args[1].page : undefined;
  const convert =
    CONVERTING_OPS.has(op) ||
    page != null ||
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
  // The page's side starts the call's CPU deadline here: loading and compiling are not the call.
  port.post({ begin: id });
  const answer = instance[op](...args);
  // What the page rebuilds the answer from (src/worker.js): properties beside the JSON keys are
  // not enumerable, and a structured clone would drop them.
  if (op === 'admit' || op === 'admitPdfPage') return verdictParts(answer);
  if (op === 'admitToolResult') return { json: answer.json, changed: answer.changed };
  if (op === 'admitBatchLine') return { json: answer.json, line: answer.line };
  return answer;
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
