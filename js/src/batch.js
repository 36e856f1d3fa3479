// @mediagate/preflight/batch (Node only): a whole Batch API file through the gate, as
// `mediagate admit-batch` does it, streamed in bounded memory.
//
//   import { admitBatch } from '@mediagate/preflight/batch';
//   const summary = await admitBatch('batch.jsonl', 'admitted.jsonl', { api: 'openai', report: 'report.jsonl' });
//
// The host side of the batch contract: the file is read as bytes and cut into requests here (JSON
// lines split on "\n", or the items of an Anthropic `{"requests": [...]}` document found by a
// small scanner); each request is judged by the component's `admit-batch-line`, which reads it
// and splices the admitted body back as text; the output and the report are written in input order.
// Nothing here parses a request, so every byte the gate did not change goes out as it came in.

import { open, unlink } from 'node:fs/promises';

import { ADMIT_OPTION_KEYS, BATCH_APIS, GateError, LOAD_OPTION_KEYS, createGate } from './index.js';

/** The most bytes of one request that are read (a longer one is refused unread): the CLI's. */
export const LINE_LIMIT = 64 << 20;
/** What becomes of a request with refused blocks, or refused whole. */
export const ON_REFUSAL = Object.freeze(['placeholder', 'drop', 'fail']);

const OWN_KEYS = ['api', 'onRefusal', 'report', 'jobs'];
// Workers beyond this cost memory (a gate instance each) and buy nothing on any machine we know.
const MAX_JOBS = 64;
const READ_CHUNK = 1 << 20;
const FLUSH_AT = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);
const CRLF = Uint8Array.of(CR, LF);
const LF_ONLY = Uint8Array.of(LF);
const COMMA = Uint8Array.of(0x2c);

/** The input cannot be read as a batch file (I/O, or an Anthropic document that is not well formed): the CLI's exit 2. */
export class BatchInputError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'BatchInputError';
  }
}

// Rust's `u8::is_ascii_whitespace`, the CLI's test for a blank line and for the whitespace around a
// document's items, so both hosts cut a file alike.
const isBlankByte = (b) => b === 0x20 || b === 0x09 || b === LF || b === 0x0c || b === CR;
// JSON's own whitespace: what may stand between the tokens of `{"requests": [`.
const isJsonSpace = (b) => b === 0x20 || b === 0x09 || b === LF || b === CR;

// fatal: a line that is not UTF-8 is refused, never repaired; ignoreBOM: a BOM is part of the text.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function concat(parts, length) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * One request as the host hands it on: its text, or why the host refuses it unread (`bad`).
 * `length` is its length without the line break; `raw` its bytes (only when within the limit).
 */
function requestRecord(number, what, parts, held, length, over) {
  if (over || length > LINE_LIMIT) return { kind: 'request', number, what, length, bad: 'long' };
  const raw = concat(parts, held).subarray(0, length);
  let text;
  try {
    text = utf8.decode(raw);
  } catch {
    return { kind: 'request', number, what, length, bad: 'utf8' };
  }
  return { kind: 'request', number, what, length, raw, text };
}

/**
 * Collects one request's bytes, holding at most LINE_LIMIT + 1 of them (the one more is a "\r"
 * that turns out to belong to the line break); past that it only counts. Whitespace around a
 * document's items is collected without a cap: it is written out, so none may be lost.
 */
class Collector {
  parts = [];
  held = 0;
  length = 0;
  over = false;
  last = -1;

  constructor(cap = LINE_LIMIT + 1) {
    this.cap = cap;
  }

  take(piece) {
    if (piece.length === 0) return;
    this.length += piece.length;
    this.last = piece[piece.length - 1];
    if (this.over) return;
    if (this.held + piece.length > this.cap) {
      this.over = true;
      this.parts = [];
      this.held = 0;
      return;
    }
    this.parts.push(piece);
    this.held += piece.length;
  }

  /** Whether every byte held is blank (only meaningful when not over). */
  blank() {
    if (this.over) return false;
    for (const p of this.parts) for (let i = 0; i < p.length; i++) if (!isBlankByte(p[i])) return false;
    return true;
  }
}

/**
 * JSON lines: one request per physical line, split on "\n" (a "\r" before it belongs to the break),
 * so CRLF, a last line without a break and bytes that are not UTF-8 are all seen as they are.
 */
async function* jsonLines(chunks) {
  let line = new Collector();
  let number = 0;
  const finish = (hasBreak) => {
    number++;
    const crlf = hasBreak && line.last === CR;
    const length = line.length - (crlf ? 1 : 0);
    const brk = hasBreak ? (crlf ? CRLF : LF_ONLY) : EMPTY;
    const inBytes = line.length + (hasBreak ? 1 : 0);
    let record;
    if (line.blank()) {
      // Its "\r", if any, is among the bytes held.
      const end = hasBreak ? LF_ONLY : EMPTY;
      record = { kind: 'copy', bytes: concat([...line.parts, end], line.held + end.length), inBytes };
    } else {
      record = { ...requestRecord(number, 'line', line.parts, line.held, length, line.over), brk, inBytes };
    }
    line = new Collector();
    return record;
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl < 0) {
        line.take(chunk.subarray(start));
        break;
      }
      line.take(chunk.subarray(start, nl));
      yield finish(true);
      start = nl + 1;
    }
  }
  if (line.length > 0) yield finish(false);
}

/**
 * The Anthropic JSON form: `{"requests": [ item, ... ]}`. Each item is found by following strings,
 * escapes and nesting (nothing is parsed here) and handed on as its exact text, with the
 * whitespace before and after it; the commas between items are the writer's, so that an item left
 * out takes its comma with it and the output stays JSON. From the array's `]` on, the bytes are
 * copied as they are. The same scan as the CLI's, so both hosts cut a document alike.
 */
async function* anthropicDocument(chunks) {
  // before: after `[` or a comma; inside: an item; after: past an item; rest: past the `]`.
  let at = 'before';
  let number = 0;
  let before = new Collector(Infinity);
  let after = new Collector(Infinity);
  let item = null;
  let depth = 0;
  let inString = false;
  let escape = false;
  let scalar = false;

  const ended = () => {
    at = 'after';
    after = new Collector(Infinity);
  };
  // The item, once its separator (a comma or the `]`) is seen: it goes out with its surroundings.
  const piece = () => ({
    ...requestRecord(number, 'item', item.parts, item.held, item.length, item.over),
    before: concat(before.parts, before.held),
    after: concat(after.parts, after.held),
    brk: EMPTY,
  });

  for await (const chunk of chunks) {
    let i = 0;
    while (i < chunk.length) {
      if (at === 'rest') {
        yield { kind: 'tail', bytes: chunk.subarray(i), inBytes: chunk.length - i };
        break;
      }
      const b = chunk[i];
      if (at === 'before') {
        if (isBlankByte(b)) {
          before.take(chunk.subarray(i, i + 1));
          i++;
          continue;
        }
        if (b === 0x5d && number === 0) {
          // An empty array: its whitespace and `]` are the rest.
          yield { kind: 'tail', bytes: concat([...before.parts, chunk.subarray(i, i + 1)], before.held + 1), inBytes: before.length + 1 };
          at = 'rest';
          i++;
          continue;
        }
        number++;
        item = new Collector();
        depth = 0;
        inString = false;
        escape = false;
        scalar = b !== 0x7b && b !== 0x5b && b !== 0x22;
        at = 'inside';
      }
      if (at === 'inside') {
        // Through the item's bytes in this chunk, in one piece.
        let end = -1; // where the item ends in this chunk (exclusive)
        let j = i;
        for (; j < chunk.length; j++) {
          const c = chunk[j];
          if (scalar) {
            if (c === 0x2c || c === 0x5d || isBlankByte(c)) {
              end = j;
              break;
            }
          } else if (inString) {
            if (escape) escape = false;
            else if (c === 0x5c) escape = true;
            else if (c === 0x22) {
              inString = false;
              if (depth === 0) {
                end = j + 1;
                break;
              }
            }
          } else if (c === 0x22) inString = true;
          else if (c === 0x7b || c === 0x5b) depth++;
          else if (c === 0x7d || c === 0x5d) {
            depth = Math.max(0, depth - 1);
            if (depth === 0) {
              end = j + 1;
              break;
            }
          }
        }
        if (end < 0) {
          item.take(chunk.subarray(i));
          break;
        }
        item.take(chunk.subarray(i, end));
        i = end;
        ended();
        continue;
      }
      // after
      if (isBlankByte(b)) {
        after.take(chunk.subarray(i, i + 1));
        i++;
        continue;
      }
      if (b !== 0x2c && b !== 0x5d) {
        throw new BatchInputError(
          `the batch document's "requests" array has '${String.fromCharCode(b)}' after item ${number} ` +
            'where a comma or ] belongs',
        );
      }
      // The comma counts among the bytes read; the `]` is the rest's.
      yield { ...piece(), inBytes: before.length + item.length + after.length + (b === 0x2c ? 1 : 0) };
      before = new Collector(Infinity);
      item = null;
      i++;
      if (b === 0x5d) {
        yield { kind: 'tail', bytes: chunk.subarray(i - 1, i), inBytes: 1 };
        at = 'rest';
      } else at = 'before';
    }
  }
  if (at !== 'rest') {
    throw new BatchInputError(`the batch document ends inside its "requests" array (after item ${number})`);
  }
}

/**
 * How long the `{"requests": [` that starts an Anthropic document is, when `bytes` starts with one
 * (whitespace around its tokens); 0 when it does not (JSON lines); -1 when more bytes are needed
 * to tell. A JSON-lines file never starts so: a batch line's keys are custom_id, params, method, url.
 */
function documentStart(bytes) {
  let i = 0;
  for (const token of ['{', '"requests"', ':', '[']) {
    while (i < bytes.length && isJsonSpace(bytes[i])) i++;
    for (let k = 0; k < token.length; k++, i++) {
      if (i >= bytes.length) return -1;
      if (bytes[i] !== token.charCodeAt(k)) return 0;
    }
  }
  return i;
}

/**
 * The file's requests and the bytes around them, in order: the Anthropic document when it starts
 * `{"requests": [`, else JSON lines. Reads only as far as telling takes, and hands on every byte.
 */
async function* requestsOf(chunks) {
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    const seen = [];
    let held = 0;
    let start = -1;
    while (start < 0) {
      const { value, done } = await iterator.next();
      if (done) {
        start = 0;
        break;
      }
      const chunk = bytesOf(value);
      seen.push(chunk);
      held += chunk.length;
      start = documentStart(concat(seen, held));
    }
    let first = concat(seen, held);
    const rest = async function* () {
      yield first;
      first = null;
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) return;
        yield bytesOf(value);
      }
    };
    if (start === 0) {
      yield* jsonLines(rest());
    } else {
      yield { kind: 'copy', bytes: first.subarray(0, start), inBytes: start };
      first = first.subarray(start);
      yield* anthropicDocument(rest());
    }
  } finally {
    await iterator.return?.();
  }
}

function bytesOf(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError('admitBatch: the input must yield bytes (Uint8Array chunks), not text');
}

/** A file's bytes, read 1 MiB at a time, a fresh buffer each (the records hold views of them). */
async function* fileChunks(path) {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new BatchInputError(`cannot read ${path}: ${error.message}`, { cause: error });
  }
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafeSlow(READ_CHUNK);
      let bytesRead;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, READ_CHUNK, null));
      } catch (error) {
        throw new BatchInputError(`cannot read ${path}: ${error.message}`, { cause: error });
      }
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** The input as chunks of bytes: a path, bytes, or an (async) iterable of chunks (a Readable). */
function inputChunks(input) {
  if (typeof input === 'string' || input instanceof URL) return fileChunks(input);
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    const bytes = bytesOf(input);
    return (async function* () {
      for (let i = 0; i < bytes.length; i += READ_CHUNK) yield bytes.subarray(i, i + READ_CHUNK);
    })();
  }
  if (input != null && (typeof input[Symbol.asyncIterator] === 'function' || typeof input[Symbol.iterator] === 'function')) {
    return (async function* () {
      for await (const chunk of input) yield chunk;
    })();
  }
  throw new TypeError('admitBatch: input must be a path, bytes, or an (async) iterable of Uint8Array chunks (a Readable)');
}

/**
 * Where output or report lines go: a file (opened here, removable when the run fails) or a
 * Writable; buffered, and waiting for the Writable to drain so memory stays bounded.
 */
class Sink {
  #handle = null;
  #stream = null;
  #parts = [];
  #buffered = 0;
  #error = null;
  path = null;
  written = 0;

  static async open(target, what) {
    const sink = new Sink();
    if (typeof target === 'string' || target instanceof URL) {
      sink.path = target;
      sink.#handle = await open(target, 'w');
    } else if (target != null && typeof target.write === 'function' && typeof target.once === 'function') {
      sink.#stream = target;
      target.once('error', (e) => {
        sink.#error = e;
      });
    } else {
      throw new TypeError(`admitBatch: ${what} must be a path or a Writable`);
    }
    return sink;
  }

  async write(bytes) {
    if (bytes.length === 0) return;
    this.written += bytes.length;
    this.#parts.push(bytes);
    this.#buffered += bytes.length;
    if (this.#buffered >= FLUSH_AT) await this.flush();
  }

  async flush() {
    if (this.#error) throw this.#error;
    if (this.#buffered === 0) return;
    const data = concat(this.#parts, this.#buffered);
    this.#parts = [];
    this.#buffered = 0;
    if (this.#handle) {
      let at = 0;
      while (at < data.length) at += (await this.#handle.write(data, at, data.length - at)).bytesWritten;
    } else if (!this.#stream.write(data)) {
      await new Promise((resolve, reject) => {
        const done = (error) => {
          this.#stream.off('drain', done);
          this.#stream.off('error', done);
          if (error) reject(error);
          else resolve();
        };
        this.#stream.on('drain', done);
        this.#stream.on('error', done);
      });
    }
    if (this.#error) throw this.#error;
  }

  /** Flushes and closes a file (a Writable given by the caller stays open: it is the caller's). */
  async close() {
    try {
      await this.flush();
    } finally {
      await this.#handle?.close();
      this.#handle = null;
    }
  }

  /** Closes a file without flushing and removes it: nothing half-written is left. */
  async discard() {
    this.#parts = [];
    this.#buffered = 0;
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close().catch(() => {});
    if (this.path !== null) await unlink(this.path).catch((e) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
  }
}

/**
 * The report line of a request the host refused itself: unread (not UTF-8, too long), or because
 * the gate stopped instead of answering. The shape of the component's own report lines, in the
 * CLI's words.
 */
function hostRefusal(record) {
  const { number, what, length, bad } = record;
  const [limit, message] =
    bad === 'utf8'
      ? [null, `${what} ${number} is not UTF-8 text`]
      : bad === 'long'
        ? [LINE_LIMIT, `${what} ${number} is longer than the ${LINE_LIMIT} bytes mediagate reads of one request`]
        : [null, `the gate could not judge request ${number}: ${bad.words}; it does not go`];
  return JSON.stringify({
    number,
    custom_id: null,
    outcome: 'refused',
    changed: [],
    refused: [],
    refusal: { unusable: true, reason: 'undecodable', bytes: length, limit, rule: null, message },
  });
}

/** The words of a call that stopped instead of answering, without the name of the call. */
function stoppedWords(error) {
  return String(error.message).replace(/^(admit-batch-line|admitBatchLine): /, '');
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError("admitBatch needs options with the batch's api: { api: 'openai' | 'anthropic' }");
  }
  const known = [...OWN_KEYS, ...ADMIT_OPTION_KEYS, ...LOAD_OPTION_KEYS];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`admitBatch: unknown option ${JSON.stringify(key)} (known: ${known.join(', ')})`);
  }
  const { api, onRefusal = 'placeholder', report, jobs = 1, ...gateOptions } = options;
  if (!BATCH_APIS.includes(api)) {
    throw new TypeError(`admitBatch: api must be one of ${BATCH_APIS.join(', ')} (got ${JSON.stringify(api)})`);
  }
  if (!ON_REFUSAL.includes(onRefusal)) {
    throw new TypeError(`admitBatch: onRefusal must be one of ${ON_REFUSAL.join(', ')} (got ${JSON.stringify(onRefusal)})`);
  }
  if (!(Number.isSafeInteger(jobs) && jobs >= 1 && jobs <= MAX_JOBS)) {
    throw new TypeError(`admitBatch: jobs must be a whole number from 1 to ${MAX_JOBS} (got ${JSON.stringify(jobs)})`);
  }
  if (jobs > 1 && gateOptions.getCoreModule !== undefined) {
    throw new TypeError('admitBatch: getCoreModule cannot cross to the Workers that jobs > 1 uses; pass wasmBase or wasmUrls');
  }
  return { api, onRefusal, report, jobs, gateOptions };
}

/**
 * The gates the requests are judged by: one in this thread (jobs 1), or one Worker per job, each
 * request given to an idle one (at most `jobs` calls are out at once, so one always is). A gate
 * that stopped (a trap, the memory limit, a Worker's deadline) is replaced before its next call:
 * every request gets a working instance, as each gets a fresh one in the CLI.
 */
async function openJudges(jobs, gateOptions) {
  if (jobs === 1) {
    let gate = await createGate(gateOptions);
    const live = async () => {
      if (gate.trapped) gate = await createGate(gateOptions);
      return gate;
    };
    return {
      admit: async (text, options) => (await live()).admitBatchLine(text, options),
      check: async (api, requests, bytes) => (await live()).checkBatchFile(api, requests, bytes),
      close() {},
    };
  }
  const { createWorkerGate } = await import('./worker.js');
  const settled = await Promise.allSettled(Array.from({ length: jobs }, () => createWorkerGate(gateOptions)));
  const gates = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) {
    for (const g of gates) g.terminate();
    throw failed.reason;
  }
  const load = gates.map(() => 0);
  const live = async (k) => {
    if (gates[k].closed) gates[k] = await createWorkerGate(gateOptions);
    return gates[k];
  };
  return {
    async admit(text, options) {
      let k = 0;
      for (let j = 1; j < gates.length; j++) if (load[j] < load[k]) k = j;
      load[k]++;
      try {
        return await (await live(k)).admitBatchLine(text, options);
      } finally {
        load[k]--;
      }
    },
    check: async (api, requests, bytes) => (await live(0)).checkBatchFile(api, requests, bytes),
    close() {
      for (const g of gates) g.terminate();
    },
  };
}

/**
 * Runs a Batch API file through the gate, as `mediagate admit-batch FILE --api API -o OUTPUT
 * --report REPORT` does, byte for byte: every request judged by its endpoint's rules, the output
 * written in input order (the requests the gate left alone as they came, byte for byte), the
 * report (one JSON line per request that is not unchanged, then the summary) to `report` when given.
 *
 * `input`: a path, bytes, or an (async) iterable of Uint8Array chunks (a Readable). `output`: a path
 * or a Writable (a path is removed when the run stops or fails). Options: `api` ('openai' |
 * 'anthropic', required), `onRefusal` ('placeholder' | 'drop' | 'fail'), `report` (a path or a
 * Writable), `jobs` (requests judged at once: 1 in this thread, more in as many Workers), and
 * createGate's options (`provider`, `verify`, `downsample`, `keepMetadata`, `convert`, `wasmBase`, …).
 *
 * Resolves to the summary (the report's last line's `summary` object), with `json` (that line) and
 * `exitCode` (the CLI's: 0 nothing refused and no file rule broken, else 1) beside its keys.
 * Rejects with a `BatchInputError` when the input cannot be read as a batch file (the CLI's exit 2).
 */
export async function admitBatch(input, output, options) {
  const { api, onRefusal, report, jobs, gateOptions } = checkOptions(options);
  const chunks = inputChunks(input);
  const judges = await openJudges(jobs, gateOptions);
  let out = null;
  let rep = null;
  try {
    out = await Sink.open(output, 'output');
    rep = report === undefined ? null : await Sink.open(report, 'report');
    const summary = await run({ chunks, api, onRefusal, jobs, judges, out, rep });
    if (summary.stopped_at !== null) await out.discard();
    else await out.close();
    await rep?.close();
    return summary;
  } catch (error) {
    await out?.discard().catch(() => {});
    await rep?.close().catch(() => {});
    throw error;
  } finally {
    judges.close();
    await chunks.return?.();
  }
}

async function run({ chunks, api, onRefusal, jobs, judges, out, rep }) {
  const counts = { unchanged: 0, changed: 0, refused_blocks: 0, refused: 0 };
  let requests = 0;
  let leftOut = 0;
  let written = 0;
  let bytesIn = 0;
  let stoppedAt = null;

  // In input order; at most `jobs` requests in the gate (their text and answers held) at once.
  const pending = [];
  let inFlight = 0;

  const settle = async (entry) => {
    const { record } = entry;
    bytesIn += record.inBytes;
    if (record.kind !== 'request') {
      await out.write(record.bytes);
      return;
    }
    inFlight--;
    requests++;
    let outcome;
    let json;
    let goes;
    let answer = null;
    if (!record.bad) {
      try {
        answer = await entry.answer;
      } catch (error) {
        // A trap, the memory limit or the deadline: this request does not go, the next ones do
        // (each on a new instance), as in the CLI. Anything else stops the run.
        if (!(error instanceof GateError && error.kind !== undefined)) throw error;
        record.bad = { words: stoppedWords(error) };
        record.length = record.raw.length;
      }
    }
    if (answer === null) {
      outcome = 'refused';
      json = hostRefusal(record);
      goes = null;
    } else {
      outcome = answer.outcome;
      json = answer.json;
      goes =
        outcome === 'unchanged'
          ? record.raw
          : outcome === 'changed' || (outcome === 'refused_blocks' && onRefusal === 'placeholder')
            ? encoder.encode(answer.line)
            : null;
    }
    counts[outcome]++;
    const refused = outcome === 'refused' || outcome === 'refused_blocks';
    const stop = refused && onRefusal === 'fail';
    if (goes !== null && !stop) {
      if (record.before) {
        // An item of the document: the comma between two items written, then it as it stood.
        if (written > 0) await out.write(COMMA);
        await out.write(record.before);
        await out.write(goes);
        await out.write(record.after);
      } else {
        await out.write(goes);
        await out.write(record.brk);
      }
      written++;
    } else leftOut++;
    if (outcome !== 'unchanged') await rep?.write(encoder.encode(`${json}\n`));
    if (stop) stoppedAt = record.number;
  };

  for await (const record of requestsOf(chunks)) {
    if (record.kind === 'tail') {
      // After the last item: every item is written first, whatever the window of calls.
      while (pending.length && stoppedAt === null) await settle(pending.shift());
      if (stoppedAt !== null) break;
      bytesIn += record.inBytes;
      await out.write(record.bytes);
      continue;
    }
    const entry = { record };
    if (record.kind === 'request') {
      inFlight++;
      if (!record.bad) {
        entry.answer = judges.admit(record.text, { api, number: record.number });
        entry.answer.catch(() => {}); // read in order by settle(); not an unhandled rejection meanwhile
      }
    }
    pending.push(entry);
    while (inFlight >= jobs && stoppedAt === null) await settle(pending.shift());
    if (stoppedAt !== null) break;
  }
  while (pending.length && stoppedAt === null) await settle(pending.shift());

  // A stopped run has no output to check.
  const fileRules = stoppedAt === null ? await judges.check(api, written, out.written) : [];
  const summary = {
    api,
    requests,
    unchanged: counts.unchanged,
    changed: counts.changed,
    refused_blocks: counts.refused_blocks,
    refused: counts.refused,
    left_out: leftOut,
    bytes_in: bytesIn,
    bytes_out: out.written,
    file_rules: fileRules,
    stopped_at: stoppedAt,
  };
  const json = JSON.stringify({ summary });
  await rep?.write(encoder.encode(`${json}\n`));
  const failed = counts.refused_blocks + counts.refused > 0 || fileRules.length > 0 || stoppedAt !== null;
  return Object.defineProperties(summary, {
    json: { value: json, enumerable: false },
    exitCode: { value: failed ? 1 : 0, enumerable: false },
  });
}
