// npm run size: what a browser downloads to run the gate (raw and gzip -9), after npm run build.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const isConvert = (f) => f.startsWith('mediagate-convert.');

/**
 * The files the page loads: the wrapper, jco's module and the core module (no WASI shim: none is
 * imported). With `convert`, what a page loads besides when a call converts: src/convert.js and
 * the converter component's module and core module (never loaded otherwise).
 */
export function bundleFiles({ convert = false } = {}) {
  const generated = join(pkgDir, 'dist', 'generated');
  const files = readdirSync(generated)
    .filter((f) => (f.endsWith('.js') || f.endsWith('.wasm')) && isConvert(f) === convert)
    .sort()
    .map((f) => join(generated, f));
  return [join(pkgDir, 'src', convert ? 'convert.js' : 'index.js'), ...files];
}

export function bundleSize(options) {
  const rows = bundleFiles(options).map((file) => {
    const bytes = readFileSync(file);
    return { file: file.slice(pkgDir.length + 1), raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  const total = rows.reduce((t, r) => ({ raw: t.raw + r.raw, gzip: t.gzip + r.gzip }), { raw: 0, gzip: 0 });
  return { rows, total };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  for (const [title, convert] of [
    ['the gate (every page)', false],
    ['the converter (only when a call converts)', true],
  ]) {
    const { rows, total } = bundleSize({ convert });
    console.log(title);
    if (rows.length === 1) {
      console.log('  (not built: dist/generated/ has no converter component)');
      continue;
    }
    for (const r of rows) console.log(`  ${r.file.padEnd(40)} ${String(r.raw).padStart(9)} B  ${kib(r.raw).padStart(11)}  gzip ${kib(r.gzip).padStart(10)}`);
    console.log(`  ${'total'.padEnd(40)} ${String(total.raw).padStart(9)} B  ${kib(total.raw).padStart(11)}  gzip ${kib(total.gzip).padStart(10)}`);
  }
}
