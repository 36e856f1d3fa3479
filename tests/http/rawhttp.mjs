// HTTP/1.1 over a plain socket, for what fetch cannot send: a Content-Length the body never
// reaches, a chunked body that never ends, a body past the cap that keeps coming.

import { connect } from 'node:net';

/**
 * Sends `head` (the request line and headers, without the blank line) and the `body` pieces, and
 * resolves with the first complete response { status, headers, text, json } — without waiting for
 * the request to be finished (`end: false` leaves the body open). Rejects after `timeoutMs`.
 */
export function rawRequest(url, head, { body = [], end = true, timeoutMs = 30_000 } = {}) {
  const { hostname, port } = new URL(url);
  return new Promise((resolveResponse, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolveResponse(value);
    };
    const timer = setTimeout(() => finish(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (e) => {
      // The server may answer and close while the body is still being written (413): keep what
      // arrived and parse it; fail only if no response came.
      const r = parse(buf);
      if (r) finish(null, r);
      else if (!['EPIPE', 'ECONNRESET'].includes(e.code)) finish(e);
    });
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const r = parse(buf);
      if (r) finish(null, r);
    });
    socket.on('end', () => {
      const r = parse(buf);
      finish(r ? null : new Error(`the connection closed without a whole response: ${buf.toString().slice(0, 200)}`), r);
    });
    socket.on('connect', () => {
      socket.write(`${head}\r\nHost: ${hostname}:${port}\r\n\r\n`);
      for (const piece of body) {
        if (socket.destroyed) break;
        socket.write(piece);
      }
      if (end) socket.end();
    });
  });
}

/** One response from `buf` when it is complete (Content-Length or chunked), else null. */
function parse(buf) {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let rest = buf.subarray(headEnd + 4);
  let body;
  if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length < n) return null;
    body = rest.subarray(0, n);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const pieces = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      if (eol < 0) return null;
      const size = parseInt(rest.subarray(0, eol).toString(), 16);
      if (size === 0) break;
      if (rest.length < eol + 2 + size + 2) return null;
      pieces.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 2 + size + 2);
    }
    body = Buffer.concat(pieces);
  } else {
    return null;
  }
  const text = body.toString('utf8');
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status, headers, text, json };
}

/** `n` bytes as HTTP/1.1 chunks of `size` (no final chunk: the body stays open). */
export function chunks(n, size = 64 * 1024) {
  const out = [];
  const piece = Buffer.alloc(size, 0x41);
  for (let sent = 0; sent < n; sent += size) {
    const len = Math.min(size, n - sent);
    out.push(Buffer.concat([Buffer.from(`${len.toString(16)}\r\n`), piece.subarray(0, len), Buffer.from('\r\n')]));
  }
  return out;
}

/**
 * A slow client: sends `head` (whose Content-Length the body never reaches) and one byte of body
 * every `everyMs`, until `stallAfterMs`, then nothing more. Returns { answer, stop }: `answer`
 * resolves with the response (as rawRequest's, plus `atMs` since the start) or, when the
 * connection ends without one, { status: null, atMs, error }; `stop()` drops the connection.
 */
export function trickle(url, head, { everyMs = 4000, stallAfterMs = Infinity, timeoutMs = 120_000 } = {}) {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  const socket = connect({ host: hostname, port: Number(port) });
  let buf = Buffer.alloc(0);
  let ticker = null;
  let settle;
  const answer = new Promise((resolveAnswer) => {
    settle = resolveAnswer;
  });
  let done = false;
  const finish = (value) => {
    if (done) return;
    done = true;
    clearInterval(ticker);
    clearTimeout(timer);
    socket.destroy();
    settle({ ...value, atMs: Date.now() - started });
  };
  const timer = setTimeout(() => finish({ status: null, error: `no response within ${timeoutMs} ms` }), timeoutMs);
  const send = () => {
    if (Date.now() - started >= stallAfterMs) return clearInterval(ticker);
    if (!socket.destroyed) socket.write('A');
  };
  socket.on('connect', () => {
    socket.write(`${head}\r\nHost: ${hostname}:${port}\r\n\r\n`);
    send();
    ticker = setInterval(send, everyMs);
  });
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const r = parse(buf);
    if (r) finish(r);
  });
  socket.on('error', (e) => finish(parse(buf) ?? { status: null, error: e.code ?? String(e) }));
  socket.on('end', () => finish(parse(buf) ?? { status: null, error: 'closed without a response' }));
  return { answer, stop: () => finish({ status: null, error: 'stopped' }) };
}
