// The reference front end: the `mediagate` binary (MEDIAGATE_BIN, else target/release/mediagate).

import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = process.env.MEDIAGATE_BIN ?? join(REPO_ROOT, 'target', 'release', 'mediagate');

/** `mediagate ARGS` → { code, stdout (a Buffer), stderr }. */
export function runCli(args) {
  return new Promise((resolveRun, reject) => {
    const once = (attempt) =>
      execFile(BIN, args, { maxBuffer: 256 << 20, encoding: 'buffer' }, (error, stdout, stderr) => {
        // A build may be relinking the binary meanwhile: it is there again within seconds.
        if (error && ['ENOENT', 'ETXTBSY'].includes(error.code) && attempt < 30) return setTimeout(() => once(attempt + 1), 1000);
        if (error && typeof error.code !== 'number') return reject(error);
        resolveRun({ code: error ? error.code : 0, stdout, stderr: stderr.toString() });
      });
    once(0);
  });
}
