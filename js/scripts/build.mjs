// npm run build: transpile the preflight component with jco into dist/generated/.
//
// The component is ../target/guest/mediagate-preflight.wasm (built by the host crate's build.rs),
// or the file named by MEDIAGATE_PREFLIGHT_WASM. Works offline once `npm ci` has run. Does nothing
// when dist/generated/ was already built from the same component with the same jco (`--force`
// rebuilds anyway); `npm pack` runs it first (prepack), so a packed tarball is never stale.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = resolve(here, '..');
const repoRoot = resolve(pkgDir, '..');
const outDir = join(pkgDir, 'dist', 'generated');

function fail(message) {
  console.error(`build: error: ${message}`);
  process.exit(1);
}

const wasm = process.env.MEDIAGATE_PREFLIGHT_WASM
  ? resolve(process.cwd(), process.env.MEDIAGATE_PREFLIGHT_WASM)
  : join(repoRoot, 'target', 'guest', 'mediagate-preflight.wasm');
if (!existsSync(wasm)) {
  fail(
    `${wasm} does not exist. Build the workspace first (cargo build: the host's build.rs builds the ` +
      `guest components), or set MEDIAGATE_PREFLIGHT_WASM to a preflight component ` +
      `(\`mediagate component --world preflight --out FILE\` writes the one embedded in the CLI).`,
  );
}

const require = createRequire(import.meta.url);
// The package's exports hide package.json; its main entry lives in dist/.
const jcoDir = resolve(dirname(require.resolve('@bytecodealliance/jco')), '..');
const jcoPkgPath = join(jcoDir, 'package.json');
const jcoPkg = JSON.parse(readFileSync(jcoPkgPath, 'utf8'));
const jcoBin = join(dirname(jcoPkgPath), jcoPkg.bin.jco);

const TRANSPILE_FLAGS = [
  // The wrapper compiles the core module itself (the component imports nothing: no imports to pass).
  '--instantiation',
  'async',
  // The wrapper reads the core modules itself in Node; without this the glue carries a literal
  // import('node:fs/promises') that browser bundlers (esbuild) refuse to resolve.
  '--no-nodejs-compat',
  '--minify',
];
const FLAGS = TRANSPILE_FLAGS.join(' ');
// The component exports `mediagate:gate/admission` twice (0.2.0, and the frozen 0.1.0 for hosts
// that pinned it); jco names both `admission` too, a duplicate key TypeScript refuses. The package
// uses the versioned key only (src/index.js, CONTRACT_EXPORT): the short ones are dropped from the
// declarations.
const POSTPROCESS = 'drop-unversioned-admission-dts';

// The core module the wrapper (src/index.js, CORE_URLS) names for bundlers: one, since the component
// imports nothing (jco adds shim modules only to wire imports).
const CORE_MODULES = ['mediagate.core.wasm'];
const EXPECTED = ['mediagate.js', 'mediagate.d.ts', ...CORE_MODULES];

const bytes = readFileSync(wasm);
const componentSha256 = createHash('sha256').update(bytes).digest('hex');

if (!process.argv.includes('--force')) {
  try {
    const built = JSON.parse(readFileSync(join(outDir, 'BUILD.json'), 'utf8'));
    if (
      built.componentSha256 === componentSha256 &&
      built.jco === jcoPkg.version &&
      built.flags === FLAGS &&
      built.postprocess === POSTPROCESS &&
      EXPECTED.every((f) => existsSync(join(outDir, f)))
    ) {
      console.log(`build: ${outDir} is up to date (component sha256 ${componentSha256.slice(0, 12)}…, jco ${jcoPkg.version})`);
      process.exit(0);
    }
  } catch {
    // not built yet, or unreadable: build
  }
}

const tmpDir = `${outDir}.tmp-${process.pid}`;
rmSync(tmpDir, { recursive: true, force: true });
mkdirSync(dirname(outDir), { recursive: true });

const args = [jcoBin, 'transpile', wasm, '--out-dir', tmpDir, '--name', 'mediagate', ...TRANSPILE_FLAGS, '--quiet'];
const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
if (run.status !== 0) {
  rmSync(tmpDir, { recursive: true, force: true });
  fail(`jco transpile failed (exit ${run.status ?? run.signal})`);
}
for (const expected of EXPECTED) {
  if (!existsSync(join(tmpDir, expected))) fail(`jco did not write ${expected}`);
}
const cores = readdirSync(tmpDir).filter((f) => f.endsWith('.wasm')).sort();
if (cores.join() !== [...CORE_MODULES].sort().join()) {
  fail(`jco wrote the core modules ${cores.join(', ')}; src/index.js (CORE_URLS) and this script name ${CORE_MODULES.join(', ')}`);
}
{
  const dts = join(tmpDir, 'mediagate.d.ts');
  const text = readFileSync(dts, 'utf8');
  const kept = text.replace(/^\s*admission: typeof [A-Za-z]+,\n/gm, '');
  if (kept === text) fail('jco no longer writes the unversioned `admission` keys; revisit POSTPROCESS');
  writeFileSync(dts, kept);
}
writeFileSync(join(tmpDir, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
writeFileSync(
  join(tmpDir, 'BUILD.json'),
  `${JSON.stringify(
    {
      // Relative to the repository (an absolute path of the build machine has no place in a tarball).
      component: relative(repoRoot, wasm).startsWith('..') ? basename(wasm) : relative(repoRoot, wasm),
      componentBytes: bytes.length,
      componentSha256,
      jco: jcoPkg.version,
      flags: FLAGS,
      postprocess: POSTPROCESS,
    },
    null,
    2,
  )}\n`,
);

rmSync(outDir, { recursive: true, force: true });
renameSync(tmpDir, outDir);
console.log(`build: ${wasm} (${bytes.length} bytes) -> ${outDir} (jco ${jcoPkg.version})`);
