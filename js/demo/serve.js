#!/usr/bin/env node
// A tiny static server for the demo page, on 127.0.0.1 only.
//
//   node demo/serve.js [PORT]        (or PORT=8317 npm run demo)
//
// It serves the package directory's demo/, src/ and dist/ folders, nothing else: the page imports
// ../src/index.js, which imports ../dist/generated/mediagate.js and fetches the core .wasm files.

import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVED = ['demo', 'src', 'dist'];
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

function resolvePath(urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded).replace(/^[/\\]+/, '');
  const top = relative.split(/[/\\]/)[0];
  if (!SERVED.includes(top)) return null;
  const full = resolve(PACKAGE_DIR, relative);
  if (!full.startsWith(join(PACKAGE_DIR, top) + sep) && full !== join(PACKAGE_DIR, top)) return null;
  return full;
}

function handle(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const { pathname } = new URL(req.url, 'http://127.0.0.1');
  if (pathname === '/' || pathname === '/demo') {
    res.writeHead(302, { location: '/demo/' }).end();
    return;
  }
  let file = resolvePath(pathname);
  let stat;
  try {
    if (file) stat = statSync(file);
    if (stat?.isDirectory()) {
      file = join(file, 'index.html');
      stat = statSync(file);
    }
  } catch {
    stat = undefined;
  }
  if (!file || !stat?.isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`not found: ${pathname}\n`);
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': stat.size,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).pipe(res);
}

/** Starts the server; port 0 picks a free one. Resolves to { url, port, close }. */
export function startServer({ port = 0, host = '127.0.0.1' } = {}) {
  return new Promise((resolvePromise, reject) => {
    const server = http.createServer(handle);
    server.on('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolvePromise({
        url: `http://${host}:${actual}/demo/`,
        port: actual,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 8317);
  const { url } = await startServer({ port });
  console.log(`mediagate demo: ${url}  (Ctrl-C to stop)`);
}
