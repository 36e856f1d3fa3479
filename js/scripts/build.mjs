// npm run build: transpile the preflight component (and the convert component) with jco into
// dist/generated/.
//
// The preflight component is ../target/guest/mediagate-preflight.wasm (built by the host crate's
// build.rs), or the file named by MEDIAGATE_PREFLIGHT_WASM. The convert component (the gate with
// the converters, loaded only when a caller asks to convert) is ../target/guest/mediagate-convert.wasm
// or MEDIAGATE_CONVERT_WASM; it becomes mediagate-convert.js + mediagate-convert.core.wasm beside
// the preflight files. When it does not exist the package is built without it (a warning; the
// converting calls then refuse with words saying so), unless `--require-convert` is given (npm
// pack's prepack and the root scripts/package.sh give it: a published package always carries it).
// Works offline once `npm ci` has run. Does nothing when dist/generated/ was already built from the
// same components with the same jco (`--force` rebuilds anyway).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

const convertWasm = process.env.MEDIAGATE_CONVERT_WASM
  ? resolve(process.cwd(), process.env.MEDIAGATE_CONVERT_WASM)
  : join(repoRoot, 'target', 'guest', 'mediagate-convert.wasm');
const hasConvert = existsSync(convertWasm);
if (!hasConvert) {
  const words =
    `${convertWasm} does not exist: the package is built without the converter component ` +
    `(cargo build builds it; \`mediagate component --world convert --out FILE\` writes the CLI's; ` +
    `or set MEDIAGATE_CONVERT_WASM)`;
  if (process.argv.includes('--require-convert')) fail(words);
  console.warn(`build: warning: ${words}`);
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
// jco names the export both by its versioned key and by its short one (`admission`). The package
// uses the versioned key only (src/index.js, CONTRACT_EXPORT), which names the contract it speaks:
// the short ones are dropped from the declarations.
// Each core module's `memory.grow` is wrapped in calls to two imports, `memory_grow_pre` and
// `memory_grow_post` (binaryen's instrument-memory pass, limited to the `memory.grow` instruction), through which src/index.js refuses a grow
// past the CLI's memory limit and stops the call, as the Rust host's store limiter does. The limits
// themselves are the Rust host's, generated into src/facts.js (facts/, scripts/check-facts.sh).
// The component's `default-options` are read from the transpiled component itself and written to
// defaults.js (src/index.js exports them as DEFAULT_OPTIONS): the defaults live in the guest only.
const POSTPROCESS = 'drop-unversioned-admission-dts,instrument-memory@memory.grow,defaults-js';
const GROW_HOOKS = ['memory_grow_pre', 'memory_grow_post'];


/**
 * Whether the instrumented module's memory.grow goes through the hooks, and nothing else does:
 * grows the memory through the allocator (`cabi_realloc` of 1 MiB) and counts the hooks' calls.
 */
function growIsHooked(bytes) {
  const module = new WebAssembly.Module(bytes);
  const calls = {};
  const env = {};
  for (const i of WebAssembly.Module.imports(module)) {
    env[i.name] = (...args) => {
      calls[i.name] = (calls[i.name] ?? 0) + 1;
      return args[args.length - 1];
    };
  }
  const instance = new WebAssembly.Instance(module, { env });
  const before = instance.exports.memory.buffer.byteLength;
  instance.exports.cabi_realloc(0, 0, 8, before + (1 << 20));
  const names = Object.keys(calls).sort();
  return instance.exports.memory.buffer.byteLength > before && names.join() === [...GROW_HOOKS].sort().join();
}

/** `bytes` (a core module) with every memory.grow passing through the GROW_HOOKS imports. */
async function instrumentGrow(bytes) {
  const { default: binaryen } = await import('binaryen');
  const module = binaryen.readBinary(bytes);
  try {
    module.setFeatures(binaryen.Features.All);
    binaryen.setPassArgument('instrument-memory', 'memory.grow');
    module.runPasses(['instrument-memory']);
    if (!module.validate()) fail('the core module does not validate after instrumenting memory.grow');
    return module.emitBinary();
  } finally {
    module.dispose();
  }
}

/** What the transpiled preflight component in `dir` answers to `default-options`. */
async function componentDefaults(dir) {
  const { instantiate } = await import(pathToFileURL(join(dir, 'mediagate.js')).href);
  const passThrough = (...args) => args[args.length - 1];
  const root = await instantiate(
    (name) => WebAssembly.compile(readFileSync(join(dir, name))),
    {},
    (module, imports) => {
      const env = Object.fromEntries(WebAssembly.Module.imports(module).filter((i) => i.module === 'env').map((i) => [i.name, passThrough]));
      return WebAssembly.instantiate(module, { ...imports, env });
    },
  );
  const api = root['mediagate:gate/admission@0.3.0'];
  if (api == null) fail('the preflight component does not export mediagate:gate/admission@0.3.0');
  const { downsample, provider, verify, keepMetadata } = api.defaultOptions();
  return { downsample, provider, verify, keepMetadata };
}

// The core module each wrapper names for bundlers (src/index.js CORE_URLS, src/convert.js
// CONVERT_CORE_URLS): one per component, since neither imports anything (jco adds shim modules
// only to wire imports).
const COMPONENTS = [
  { name: 'mediagate', wasm, cores: ['mediagate.core.wasm'] },
  ...(hasConvert ? [{ name: 'mediagate-convert', wasm: convertWasm, cores: ['mediagate-convert.core.wasm'] }] : []),
];
const expectedFiles = (c) => [`${c.name}.js`, `${c.name}.d.ts`, ...c.cores];
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
for (const c of COMPONENTS) {
  c.bytes = readFileSync(c.wasm);
  c.sha256 = sha256(c.bytes);
}
const componentSha256 = COMPONENTS[0].sha256;
const convertSha256 = hasConvert ? COMPONENTS[1].sha256 : null;

if (!process.argv.includes('--force')) {
  try {
    const built = JSON.parse(readFileSync(join(outDir, 'BUILD.json'), 'utf8'));
    if (
      built.componentSha256 === componentSha256 &&
      (built.convert?.componentSha256 ?? null) === convertSha256 &&
      built.jco === jcoPkg.version &&
      built.flags === FLAGS &&
      built.postprocess === POSTPROCESS &&
      existsSync(join(outDir, 'defaults.js')) &&
      COMPONENTS.every((c) => expectedFiles(c).every((f) => existsSync(join(outDir, f))))
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

for (const c of COMPONENTS) {
  // Each component into a directory of its own, then merged: jco writes the interface declarations
  // both share (`interfaces/mediagate-gate-admission.d.ts`) for each.
  const own = join(tmpDir, `.${c.name}`);
  const args = [jcoBin, 'transpile', c.wasm, '--out-dir', own, '--name', c.name, ...TRANSPILE_FLAGS, '--quiet'];
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (run.status !== 0) {
    rmSync(tmpDir, { recursive: true, force: true });
    fail(`jco transpile of ${c.wasm} failed (exit ${run.status ?? run.signal})`);
  }
  for (const expected of expectedFiles(c)) {
    if (!existsSync(join(own, expected))) fail(`jco did not write ${expected}`);
  }
  const cores = readdirSync(own).filter((f) => f.endsWith('.wasm')).sort();
  if (cores.join() !== [...c.cores].sort().join()) {
    fail(`jco wrote the core modules ${cores.join(', ')} for ${c.name}; the wrapper and this script name ${c.cores.join(', ')}`);
  }
  {
    const dts = join(own, `${c.name}.d.ts`);
    const text = readFileSync(dts, 'utf8');
    const kept = text.replace(/^\s*admission: typeof [A-Za-z]+,\n/gm, '');
    if (kept === text) fail('jco no longer writes the unversioned `admission` keys; revisit POSTPROCESS');
    writeFileSync(dts, kept);
  }
  for (const core of c.cores) {
    const file = join(own, core);
    const instrumented = await instrumentGrow(readFileSync(file));
    if (!growIsHooked(instrumented)) fail(`${core}: memory.grow does not call ${GROW_HOOKS.join(', ')} after binaryen's pass`);
    writeFileSync(file, instrumented);
  }
  cpSync(own, tmpDir, { recursive: true });
  rmSync(own, { recursive: true, force: true });
}
writeFileSync(join(tmpDir, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
writeFileSync(
  join(tmpDir, 'defaults.js'),
  `// Written by scripts/build.mjs: the component's \`default-options\` (mediagate:gate/admission@0.3.0).\n` +
    `export const DEFAULT_OPTIONS = Object.freeze(${JSON.stringify(await componentDefaults(tmpDir))});\n`,
);
// Relative to the repository (an absolute path of the build machine has no place in a tarball).
const shown = (file) => (relative(repoRoot, file).startsWith('..') ? basename(file) : relative(repoRoot, file));
writeFileSync(
  join(tmpDir, 'BUILD.json'),
  `${JSON.stringify(
    {
      component: shown(wasm),
      componentBytes: COMPONENTS[0].bytes.length,
      componentSha256,
      // The converter component, when the package was built with it (absent: converting calls refuse).
      ...(hasConvert
        ? { convert: { component: shown(convertWasm), componentBytes: COMPONENTS[1].bytes.length, componentSha256: convertSha256 } }
        : {}),
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
for (const c of COMPONENTS) console.log(`build: ${c.wasm} (${c.bytes.length} bytes) -> ${outDir} (jco ${jcoPkg.version})`);
