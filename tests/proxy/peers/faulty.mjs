// A deliberately faulty MCP server for the proxy's fault tests (plain JSON-RPC over stdio):
// it answers `initialize`, `ping` and `tools/list` properly and misbehaves on `tools/call`
// according to its mode: die | hang | garbage | flood | huge | exact; `number-ids` answers every
// request under its id as a number (`"1"` as `1`); `deaf` stops reading its input after `initialize`.
import { createInterface } from "node:readline";

import { exactAnswer } from "./exact-answer.mjs";

const mode = process.argv[2];
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const ok = (id, result) => send({ jsonrpc: "2.0", id: mode === "number-ids" ? Number(id) : id, result });

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", async (line) => {
  const message = JSON.parse(line);
  const { id, method } = message;
  if (method === "initialize") {
    if (mode === "deaf") {
      lines.pause();
      setInterval(() => {}, 1000); // alive, reading nothing
    }
    return ok(id, {
      protocolVersion: message.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: `faulty-${mode}`, version: "1" },
    });
  }
  if (method === "ping") return ok(id, {});
  if (method === "tools/list") {
    return ok(id, { tools: [{ name: "act", inputSchema: { type: "object" } }] });
  }
  if (method !== "tools/call") return;
  switch (mode) {
    case "die":
      process.exit(3);
    case "hang":
      return; // never answers
    case "garbage":
      return process.stdout.write("Traceback (most recent call last): this is not JSON\n");
    case "flood": {
      // 200,000 notifications (about 30 MB), written as fast as the pipe takes them, then the answer.
      const note = (n) =>
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `flood ${n} ${"x".repeat(80)}` } }) + "\n";
      for (let n = 0; n < 200_000; n++) {
        if (!process.stdout.write(note(n))) await new Promise((r) => process.stdout.once("drain", r));
      }
      return ok(id, { content: [{ type: "text", text: "after the flood" }] });
    }
    case "exact": {
      // Lines written by hand: numbers and strings JSON.parse/serde_json cannot keep (1e400, a lone
      // surrogate, a 30-digit integer), odd spacing and key order; `image` adds an SVG claiming PNG.
      process.stdout.write(exactAnswer(id, message.params?.name === "image") + "\n");
      return;
    }
    case "huge": {
      // A 100 MB answer, then (to the next call) a small one.
      if (message.params?.name === "small") return ok(id, { content: [{ type: "text", text: "small" }] });
      const text = "y".repeat(100 * 1024 * 1024);
      return ok(id, { content: [{ type: "text", text }] });
    }
  }
});

