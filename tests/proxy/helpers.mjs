// Shared by the proxy tests and bench/proxy: the mediagate binary, the official servers from
// node_modules, PNG files made here (zlib, no image library), and a raw line client for the
// fault cases the SDK client would not send.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const require = createRequire(import.meta.url);

export const MEDIAGATE =
  process.env.MEDIAGATE_BIN ?? join(root, "target/release/mediagate");
const serverMain = (pkg) => {
  const dir = dirname(require.resolve(`${pkg}/package.json`));
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return join(dir, Object.values(manifest.bin)[0]);
};
export const EVERYTHING = [process.execPath, serverMain("@modelcontextprotocol/server-everything"), "stdio"];
export const filesystem = (dir) => [process.execPath, serverMain("@modelcontextprotocol/server-filesystem"), dir];
export const peer = (name, ...args) => [process.execPath, join(here, "peers", name), ...args];

/** An SDK client connected to `server` (argv), through `mediagate proxy` unless `direct`. */
export async function connect(server, { direct = false, proxyArgs = [], capabilities = {} } = {}) {
  const [command, ...args] = direct ? server : [MEDIAGATE, "proxy", ...proxyArgs, "--", ...server];
  const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "proxy-tests", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  client.stderrText = () => stderr;
  return client;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), 8 + data.length);
  return out;
};

/** An RGB PNG: a gradient, or seeded noise (incompressible: about 3 bytes a pixel). */
export function png(width, height, { noise = false } = {}) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width * 3; x++) {
      if (noise) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        raw[row + 1 + x] = seed >>> 24;
      } else {
        raw[row + 1 + x] = (x + y) & 0xff;
      }
    }
  }
  const idat = zlib.deflateSync(raw, { level: noise ? 0 : 6 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", idat),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The width and height a PNG's header gives. */
export const pngSize = (bytes) => [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];

/**
 * The proxy driven line by line: `send` writes raw text, `next` waits for the next message
 * (parsed). `done` resolves with the exit code. VmHWM is read from /proc before the process ends.
 */
export function rawProxy(server, proxyArgs = []) {
  const child = spawn(MEDIAGATE, ["proxy", ...proxyArgs, "--", ...server], { stdio: ["pipe", "pipe", "pipe"] });
  let buffered = "";
  let stderr = "";
  const queue = [];
  const waiters = [];
  const rawOf = new WeakMap(); // message → the line it came as
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buffered += d;
    let at;
    while ((at = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const message = JSON.parse(line);
      if (message !== null && typeof message === "object") rawOf.set(message, line);
      const waiter = waiters.shift();
      if (waiter) waiter(message);
      else queue.push(message);
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const done = new Promise((res) => child.on("exit", (code) => res(code)));
  const next = () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((res) => waiters.push(res)));
  return {
    child,
    send: (text) => new Promise((res, rej) => child.stdin.write(text, (e) => (e ? rej(e) : res()))),
    request: (id, method, params = {}) =>
      new Promise((res, rej) =>
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n", (e) => (e ? rej(e) : res())),
      ),
    next,
    /** The next message that is not a notification or request from the server. */
    async response() {
      for (;;) {
        const m = await next();
        if (m.method === undefined) return m;
      }
    },
    /** The line `message` came as, byte for byte. */
    raw: (message) => rawOf.get(message),
    vmHwmKiB: () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]),
    stderr: () => stderr,
    done,
  };
}

export const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
};
