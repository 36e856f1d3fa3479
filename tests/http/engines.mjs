// The engines that serve the http-gate component, each started on a free 127.0.0.1 port and
// stopped (its whole process group) when the test process exits. Nothing here is home-made
// serving: `wasmtime serve` (the wasmtime CLI) and `jco serve` (Node) run the component as it is.

import { spawn, execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(HERE, '..', '..');
export const CORPUS = join(REPO_ROOT, 'tests', 'corpus');
export const JCO = join(REPO_ROOT, 'js', 'node_modules', '@bytecodealliance', 'jco', 'dist', 'jco.js');

/** The component (tests/http/test.sh writes it with `mediagate component --world http-gate`). */
export function componentPath() {
  const p = process.env.MEDIAGATE_HTTP_GATE ?? join(REPO_ROOT, 'target', 'guest', 'mediagate-http-gate.wasm');
  if (!existsSync(p)) throw new Error(`no http-gate component at ${p}; set MEDIAGATE_HTTP_GATE`);
  return p;
}

/** The engines to run, by name; `MEDIAGATE_HTTP_ENGINES=wasmtime,jco` by default. */
export function engineNames() {
  return (process.env.MEDIAGATE_HTTP_ENGINES ?? 'wasmtime,jco').split(',').filter(Boolean);
}

async function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

/** The CLI host's memory limit per instance (docs/serving.md gives both engines this cap). */
export const MEMORY_BYTES = 536870912;
/** jco serve's one-shot request Workers kept ready (docs/serving.md's line). */
export const JCO_WORKER_POOL = 8;
/** wasmtime serve's bound on requests in flight (docs/serving.md's line, with its memory arithmetic). */
export const WASMTIME_MAX_REQUESTS = 16;
/** The requests an engine's documented line serves at once; past it, requests wait. */
export const IN_FLIGHT_BOUND = { wasmtime: WASMTIME_MAX_REQUESTS, jco: JCO_WORKER_POOL };

/**
 * The command line that serves `component` on `port` under `engine`, as [command, args, env]: the
 * lines docs/serving.md documents (the per-instance memory cap, request timeout and bound on
 * requests in flight for wasmtime; the same memory cap for jco, whose Node takes it as a V8 flag through JCO_RUN_ARGS, and each
 * request in a one-shot Worker, so that a trap ends that request only), so what is tested and
 * measured is what a user runs. `memoryBytes` lowers the cap (a test that makes an instance run
 * out of memory on an ordinary image); it is the documented number otherwise.
 */
export function commandLine(engine, component, port, { memoryBytes = MEMORY_BYTES } = {}) {
  if (engine === 'wasmtime') {
    const bin = process.env.MEDIAGATE_WASMTIME;
    if (!bin) throw new Error('MEDIAGATE_WASMTIME is not set (tests/http/test.sh sets it from scripts/wasmtime-cli.sh)');
    return [
      bin,
      [
        'serve',
        '--addr',
        `127.0.0.1:${port}`,
        '-W',
        `max-memory-size=${memoryBytes}`,
        '-W',
        'timeout=180s',
        '--max-concurrent-requests',
        String(WASMTIME_MAX_REQUESTS),
        component,
      ],
      {},
    ];
  }
  // `jco` is docs/serving.md's line; the variants are measured beside it (BENCHMARKS.md):
  // `jco-instance` (a fresh instance per request on the server's thread; a trap ends the server)
  // and `jco-shared` (no isolation: one instance serves every request).
  if (engine === 'jco' || engine === 'jco-instance' || engine === 'jco-shared') {
    const isolation = {
      jco: ['--isolate-requests', 'worker', '--isolate-worker-pool-size', String(JCO_WORKER_POOL)],
      'jco-instance': ['--isolate-requests', 'instance'],
      'jco-shared': [],
    }[engine];
    const jco = existsSync(JCO) ? JCO : join(REPO_ROOT, 'js', 'node_modules', '.bin', 'jco');
    return [
      process.execPath,
      [
        jco,
        'serve',
        component,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        ...isolation,
      ],
      { JCO_RUN_ARGS: `--wasm-max-mem-pages=${memoryBytes / 65536}` },
    ];
  }
  throw new Error(`unknown engine ${engine}`);
}

const started = new Set();
function stopAll() {
  for (const child of started) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  started.clear();
}
process.once('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    stopAll();
    process.exit(130);
  });
}

/**
 * Starts `engine` serving the component; resolves once `GET /healthz` answers 200 (at most
 * `readyMs`). Returns { engine, url, pid, command, stop() }.
 */
export async function startEngine(engine, { readyMs = 120_000, memoryBytes } = {}) {
  const component = componentPath();
  const port = await freePort();
  const [cmd, args, env] = commandLine(engine, component, port, { memoryBytes });
  const spawned = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const { child, url, output } = await serving(engine, spawned, `http://127.0.0.1:${port}`, readyMs, 200);
  return {
    engine,
    url,
    pid: child.pid,
    command: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), cmd, ...args].join(' '),
    output,
    stop: () => stopEngine(child),
  };
}

/** deploy/nginx.conf, the buffering proxy docs/serving.md puts in front of an engine. */
export const NGINX_CONF = join(REPO_ROOT, 'deploy', 'nginx.conf');

/**
 * Starts nginx (MEDIAGATE_NGINX, else `nginx` on PATH) with deploy/nginx.conf as written but for
 * its two addresses: it listens on a free 127.0.0.1 port and proxies to `upstreamUrl`. Its prefix
 * (temp files, pid, log) is a fresh directory. Resolves once `/healthz` answers through it.
 */
export async function startProxy(upstreamUrl, { readyMs = 30_000 } = {}) {
  const conf = readFileSync(NGINX_CONF, 'utf8');
  const port = await freePort();
  const swap = (text, old, replacement) => {
    if (text.split(old).length !== 2) throw new Error(`${NGINX_CONF} does not have ${JSON.stringify(old)} exactly once`);
    return text.replace(old, replacement);
  };
  const upstream = new URL(upstreamUrl).host;
  const written = swap(swap(conf, 'server 127.0.0.1:8080;', `server ${upstream};`), 'listen 127.0.0.1:8000;', `listen 127.0.0.1:${port};`);
  const prefix = mkdtempSync(join(tmpdir(), 'mediagate-nginx-'));
  // Run as root, nginx's workers are `nobody`, and they open the temp directories under the prefix.
  chmodSync(prefix, 0o755);
  writeFileSync(join(prefix, 'nginx.conf'), written);
  const bin = process.env.MEDIAGATE_NGINX ?? 'nginx';
  const spawned = spawn(bin, ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-e', 'stderr'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { child, url, output } = await serving('nginx', spawned, `http://127.0.0.1:${port}`, readyMs, 100);
  return {
    url,
    conf: written,
    accessLog: () => readFileSync(join(prefix, 'access.log'), 'utf8'),
    output,
    stop: () => {
      stopEngine(child);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the server `child` (spawned detached, its output piped) answers `/healthz` at
 * `url` with 200, polling every `pollMs`; throws with its last output when it exits first or
 * `readyMs` pass. Returns { child, url, output() }.
 */
async function serving(name, child, url, readyMs, pollMs) {
  started.add(child);
  let output = '';
  const keep = (d) => {
    output = (output + d.toString()).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  child.once('error', (e) => {
    exited = { error: e.message };
  });
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (exited) throw new Error(`${name} exited before it served (${JSON.stringify(exited)}): ${output}`);
    try {
      const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === 200) break;
    } catch {}
    if (Date.now() > deadline) {
      stopEngine(child);
      throw new Error(`${name} did not answer /healthz within ${readyMs} ms: ${output}`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return { child, url, output: () => output };
}

function stopEngine(child) {
  if (!started.has(child)) return;
  started.delete(child);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

/** The process and its descendants (jco serve's Node may start workers or children). */
function descendants(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {}
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  return all;
}

/** Peak resident memory (VmHWM, KiB) of the process tree rooted at `pid`, summed. */
export function peakRssKiB(pid) {
  let total = 0;
  for (const p of descendants(pid)) {
    try {
      const m = readFileSync(`/proc/${p}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
      if (m) total += Number(m[1]);
    } catch {}
  }
  return total;
}

/**
 * CPU seconds (user + system, with reaped children) the process tree rooted at `pid` has used:
 * the difference over a run is the engine's CPU cost, which the machine's load moves far less than
 * its requests per second. Linux's clock tick is 100 Hz.
 */
export function cpuSeconds(pid) {
  let ticks = 0;
  for (const p of descendants(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {}
  }
  return ticks / 100;
}

/** `mediagate ARGS` → { code, stdout, stderr } (stdout as a Buffer when `raw`). */
export function runCli(args, { raw = false } = {}) {
  const bin = process.env.MEDIAGATE_BIN ?? join(REPO_ROOT, 'target', 'release', 'mediagate');
  return new Promise((resolveRun) => {
    execFile(bin, args, { maxBuffer: 256 << 20, encoding: raw ? 'buffer' : 'utf8' }, (error, stdout, stderr) => {
      resolveRun({ code: error ? error.code : 0, stdout, stderr: stderr.toString() });
    });
  });
}
