// A/B wall clock of two components (transpiled as peak.mjs says) in one Node process, calls
// interleaved so that the machine's load falls on both alike; medians after two warm-up rounds.
//   node bench/jco/ab.mjs DIR_A DIR_B FILE MIME [ROUNDS]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const [a, b, file, mime, rounds = '7'] = process.argv.slice(2);
async function load(dir) {
  const name = readFileSync(join(dir, 'name'), 'utf8').trim();
  const mod = await import(join(dir, `${name}.js`));
  const root = await mod.instantiate((p) => WebAssembly.compile(readFileSync(join(dir, p))), {});
  return root;
}
const bytes = readFileSync(file);
const opts = { downsample: true, provider: 'anthropic', verify: 'full' };
const roots = [await load(a), await load(b)];
const times = [[], []];
for (let r = 0; r < Number(rounds) + 2; r++) {
  for (let i = 0; i < 2; i++) {
    const t = performance.now();
    roots[i].admission.admitImage(bytes, mime, opts);
    if (r >= 2) times[i].push(performance.now() - t); // two warm-up rounds (V8 tiers up)
  }
}
const med = (v) => v.sort((x, y) => x - y)[v.length >> 1];
console.log(`${file.split('/').pop()}: A ${med(times[0]).toFixed(1)} ms, B ${med(times[1]).toFixed(1)} ms (medians of ${rounds}, interleaved)`);
