// Small fixtures made on the spot (no corpus needed), and a static server for bundled pages.

import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import { extname, normalize, resolve, sep } from 'node:path';

import { crc32, noisePng } from './helpers.js';

/** A valid 1 x 1 still GIF: admitted for Anthropic, a type Gemini does not take. */
export const GIF_1X1 = Uint8Array.from(
  atob('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=='),
  (c) => c.charCodeAt(0),
);

/** A PNG wider than the 2000 px the downsampler fits to, small in bytes (2400 x 10 noise). */
export function widePng() {
  return noisePng(2400, 10, 7);
}

/**
 * A PNG whose chunks are all there, under right CRCs, but whose image data is corrupt: the header
 * check (which walks the container, so a cut file or a failing CRC fails it too) admits it, a full
 * decode refuses it.
 */
export async function corruptPng() {
  const png = Buffer.from(await noisePng(64, 64, 11));
  const idat = png.indexOf('IDAT');
  // From the zlib header on, so that every decoder fails (the noise is stored, not compressed:
  // flipped bytes past the block headers would only break the Adler-32, which some skip).
  for (let i = idat + 4; i < idat + 200; i++) png[i] ^= 0x5a;
  const length = png.readUInt32BE(idat - 4);
  png.writeUInt32BE(crc32(png.subarray(idat, idat + 4 + length)), idat + 4 + length);
  return png;
}

export const b64 = (bytes) => Buffer.from(bytes).toString('base64');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Serves the files under `root` on 127.0.0.1 (a free port); resolves to { url, close }. */
export function serveDir(root) {
  const top = resolve(root);
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url, 'http://127.0.0.1');
    const file = resolve(top, normalize(decodeURIComponent(pathname)).replace(/^[/\\]+/, ''));
    let stat;
    try {
      stat = file.startsWith(top + sep) ? statSync(file) : undefined;
    } catch {
      stat = undefined;
    }
    if (!stat?.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${pathname}\n`);
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolvePromise({
        url: `http://127.0.0.1:${server.address().port}/`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}
