// Guest peak linear memory of one admitImage call through jco in Node: a fresh instance, whose
// linear memory never shrinks, so its size after the call is the most it grew to. Load-independent,
// and needs no host build: any component file will do (BENCHMARKS.md, "Levers tried").
//   npx jco transpile COMPONENT.wasm --instantiation async --no-typescript --name NAME -o DIR
//   echo NAME > DIR/name; echo '{"type":"module"}' > DIR/package.json
//   node bench/jco/peak.mjs DIR FILE MIME        (CONVERT=1: the convert world's `conversion`)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [dir, file, mime] = process.argv.slice(2);
const name = readFileSync(join(dir, 'name'), 'utf8').trim();
const mod = await import(join(dir, `${name}.js`));
let memory;
const root = await mod.instantiate(
  (p) => WebAssembly.compile(readFileSync(join(dir, p))),
  {},
  async (m, imports) => {
    const inst = await WebAssembly.instantiate(m, imports);
    if (inst.exports.memory) memory = inst.exports.memory;
    return inst;
  },
);
const bytes = readFileSync(file);
const t = performance.now();
let out;
try {
  const opts = { downsample: true, provider: 'anthropic', verify: 'full' };
  // CONVERT=1: through the `conversion` interface (TIFF, BMP, ...), as `mediagate admit --convert`.
  const c = process.env.CONVERT ? root.conversion.admitImage(bytes, mime, opts) : null;
  if (c && c.verdict.tag === 'refused') throw { payload: c.verdict.val };
  const a = c ? c.verdict.val : root.admission.admitImage(bytes, mime, opts);
  const b = a.val ?? a;
  out = `${b.mime} ${b.dimensions?.width}x${b.dimensions?.height}, ${b.base64Len} base64 bytes`;
  // OUT=FILE writes the admitted bytes' base64, to compare two components' outputs.
  if (process.env.OUT) writeFileSync(process.env.OUT, typeof b.data === 'string' ? b.data : 'unchanged');
} catch (e) {
  out = `refused: ${e.payload?.message ?? e}`;
}
const ms = performance.now() - t;
console.log(`${file.split('/').pop()}: peak ${(memory.buffer.byteLength / 2 ** 20).toFixed(1)} MiB; ${out}; ${ms.toFixed(0)} ms (V8)`);
