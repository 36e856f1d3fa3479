// `mediagate proxy` in front of the official MCP servers (server-everything, server-filesystem),
// driven by the official TypeScript SDK client; faulty peers driven line by line.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { CreateMessageRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { exactAnswer } from "./peers/exact-answer.mjs";
import { EVERYTHING, INIT, MEDIAGATE, connect, filesystem, peer, png, pngSize, rawProxy } from "./helpers.mjs";

const T = { timeout: 120_000 };

describe("in front of server-everything", () => {
  let proxied;
  let direct;
  before(async () => {
    const capabilities = { sampling: {}, roots: { listChanged: true } };
    proxied = await connect(EVERYTHING, { capabilities });
    direct = await connect(EVERYTHING, { direct: true, capabilities });
    for (const client of [proxied, direct]) {
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
        model: "test-model",
        role: "assistant",
        content: { type: "text", text: `sampled: ${request.params.messages[0].content.text}` },
      }));
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///tmp/root-a", name: "a" }] }));
    }
  });
  after(async () => {
    await proxied?.close();
    await direct?.close();
  });

  test("the tools and their schemas pass unchanged", T, async () => {
    const [a, b] = await Promise.all([proxied.listTools(), direct.listTools()]);
    assert.deepEqual(a, b);
  });

  test("an image result is checked in its slot, the text around it unchanged", T, async () => {
    // server-everything's MCP logo carries an iCCP chunk whose zlib checksum is wrong (verified
    // with Python's zlib too): no bomb, and its pixels decode, so it is admitted — as its
    // canonical form, the bytes `mediagate admit` writes (the broken profile, eXIf, pHYs and XMP
    // left out).
    const result = await proxied.callTool({ name: "get-tiny-image", arguments: {} });
    const plain = await direct.callTool({ name: "get-tiny-image", arguments: {} });
    assert.equal(plain.content[1].type, "image");
    const dir = mkdtempSync(join(tmpdir(), "mediagate-proxy-"));
    try {
      writeFileSync(join(dir, "logo.png"), Buffer.from(plain.content[1].data, "base64"));
      execFileSync(MEDIAGATE, ["admit", join(dir, "logo.png"), "--out", join(dir, "out.png")]);
      const canonical = readFileSync(join(dir, "out.png")).toString("base64");
      assert.notEqual(canonical, plain.content[1].data, "the logo's metadata is left out");
      const expected = structuredClone(plain);
      expected.content[1].data = canonical;
      assert.deepEqual(result, expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("text and structured results pass byte for byte and still match their output schema", T, async () => {
    const echo = await proxied.callTool({ name: "echo", arguments: { message: "héllo ☃" } });
    assert.deepEqual(echo, await direct.callTool({ name: "echo", arguments: { message: "héllo ☃" } }));
    const args = { name: "get-structured-content", arguments: { location: "Chicago" } };
    const structured = await proxied.callTool(args);
    assert.deepEqual(structured, await direct.callTool(args));
    assert.equal(structured.structuredContent.conditions, "Light rain / drizzle");
  });

  test("progress notifications and server-initiated requests (sampling, roots) pass through", T, async () => {
    const progress = [];
    const result = await proxied.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    assert.deepEqual(progress, [1, 2, 3]);
    assert.match(result.content[0].text, /completed/i);
    const sampled = await proxied.callTool({ name: "trigger-sampling-request", arguments: { prompt: "a haiku", maxTokens: 20 } });
    assert.match(JSON.stringify(sampled.content), /sampled: .*a haiku/);
    const roots = await proxied.callTool({ name: "get-roots-list", arguments: {} });
    assert.match(JSON.stringify(roots.content), /root-a/);
    assert.deepEqual(await proxied.ping(), {});
  });

  test("resources: text contents pass; a blob the gate cannot admit becomes text in its slot", T, async () => {
    const text = await proxied.readResource({ uri: "demo://resource/dynamic/text/1" });
    assert.equal(text.contents[0].mimeType, "text/plain");
    assert.match(text.contents[0].text, /Resource 1/);
    const blob = await proxied.readResource({ uri: "demo://resource/dynamic/blob/1" });
    assert.equal(blob.contents.length, 1);
    assert.equal(blob.contents[0].uri, "demo://resource/dynamic/blob/1");
    assert.equal(blob.contents[0].blob, undefined);
    assert.match(blob.contents[0].text, /^\[mediagate\]/);
  });

  test("prompts: an embedded blob resource in a message is replaced by text", T, async () => {
    const prompt = await proxied.getPrompt({ name: "resource-prompt", arguments: { resourceType: "Blob", resourceId: "2" } });
    const blocks = prompt.messages.map((m) => m.content);
    assert.ok(blocks.every((b) => b.type === "text"), JSON.stringify(blocks));
    assert.ok(blocks.some((b) => b.text.startsWith("[mediagate]")));
    const plain = await proxied.getPrompt({ name: "simple-prompt", arguments: {} });
    assert.deepEqual(plain, await direct.getPrompt({ name: "simple-prompt", arguments: {} }));
  });
});

describe("in front of server-filesystem", () => {
  let dir;
  let client;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "mediagate-proxy-"));
    writeFileSync(join(dir, "big.png"), png(3000, 1500));
    writeFileSync(join(dir, "small.png"), png(64, 48));
    writeFileSync(join(dir, "fake.png"), "<html>this is not a PNG</html>");
    writeFileSync(join(dir, "note.txt"), "plain text");
    client = await connect(filesystem(dir));
    await client.listTools(); // the client now validates results against the output schemas
  });
  after(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an oversized image is downsampled in content and structuredContent; the schema still holds", T, async () => {
    const result = await client.callTool({ name: "read_media_file", arguments: { path: join(dir, "big.png") } });
    assert.notEqual(result.isError, true);
    for (const block of [result.content[0], result.structuredContent.content[0]]) {
      assert.equal(block.type, "image");
      const [w, h] = pngSize(Buffer.from(block.data, "base64"));
      assert.ok(w <= 2000 && h <= 2000, `${w}x${h}`);
    }
    const small = await client.callTool({ name: "read_media_file", arguments: { path: join(dir, "small.png") } });
    assert.deepEqual(pngSize(Buffer.from(small.content[0].data, "base64")), [64, 48]);
  });

  test("a file that is not what it claims: refused in its slot, structuredContent withheld, isError", T, async () => {
    // Without withholding structuredContent the SDK client would throw: a text block does not
    // match read_media_file's output schema.
    const result = await client.callTool({ name: "read_media_file", arguments: { path: join(dir, "fake.png") } });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent, undefined);
    assert.equal(result.content[0].type, "text");
    assert.match(result.content[0].text, /magic_mismatch/);
    assert.match(result.content.at(-1).text, /structured result .* withheld/);
    assert.ok(!JSON.stringify(result).includes(Buffer.from("<html>").toString("base64").slice(0, 8)));
  });

  test("a PDF the server labels as it can: it arrives as the PDF it is", T, async () => {
    const pdf = readFileSync(new URL("../fixtures/hello.pdf", import.meta.url));
    writeFileSync(join(dir, "report.pdf"), pdf);
    const result = await client.callTool({ name: "read_media_file", arguments: { path: join(dir, "report.pdf") } });
    assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 400));
    const { resource } = result.content[0];
    assert.equal(resource.mimeType, "application/pdf", "labelled with the type its bytes are");
    assert.equal(Buffer.from(resource.blob, "base64").compare(pdf), 0);
  });

  test("text tools pass untouched", T, async () => {
    const result = await client.callTool({ name: "read_text_file", arguments: { path: join(dir, "note.txt") } });
    assert.equal(result.structuredContent.content, "plain text");
  });
});

describe("bad input and faulty servers", () => {
  const started = async (server, proxyArgs) => {
    const p = rawProxy(server, proxyArgs);
    await p.request(0, "initialize", INIT);
    assert.equal((await p.response()).id, 0);
    await p.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    return p;
  };

  test("malformed JSON, a batch, repeated ids and keys: each answered, none forwarded", T, async () => {
    const p = await started(EVERYTHING);
    await p.send("{not json\n");
    let m = await p.response();
    assert.equal(m.error.code, -32700);
    assert.equal(m.id, null);
    await p.send('[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n');
    assert.equal((await p.response()).error.code, -32600);
    await p.send('{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}\n');
    assert.equal((await p.response()).error.code, -32600);
    await p.request(8, "ping");
    assert.deepEqual(await p.response(), { jsonrpc: "2.0", id: 8, result: {} });
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("answers pass byte for byte (1e400, lone surrogates, key order), a changed block spliced in", T, async () => {
    const p = await started(peer("faulty.mjs", "exact"));
    await p.request(1, "tools/call", { name: "text", arguments: {} });
    const text = await p.response();
    assert.equal(p.raw(text), exactAnswer(1, false));
    await p.request(2, "tools/call", { name: "image", arguments: {} });
    const image = await p.response();
    // Everything but the refused block is the server's own text; the block is the placeholder.
    const sent = exactAnswer(2, true);
    const block = sent.slice(sent.indexOf(', {"type":"image"') + 2, sent.indexOf("} ],") + 1);
    const [before, after] = sent.split(block);
    const got = p.raw(image);
    assert.ok(got.startsWith(before) && got.endsWith(after), got.slice(0, 400));
    const placeholder = JSON.parse(got.slice(before.length, got.length - after.length));
    assert.equal(placeholder.type, "text");
    assert.match(placeholder.text, /magic_mismatch|mime_unsupported/);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a 100 MB message from the client: refused without being held, the session goes on", T, async () => {
    const p = await started(EVERYTHING);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "echo", arguments: { message: "z".repeat(100 * 1024 * 1024) } } });
    await p.send(big + "\n");
    const m = await p.response();
    assert.equal(m.error.code, -32600);
    assert.match(m.error.message, /exceeds the 67108864 bytes/);
    await p.request(10, "tools/call", { name: "echo", arguments: { message: "still here" } });
    assert.match(JSON.stringify(await p.response()), /still here/);
    const hwm = p.vmHwmKiB();
    console.log(`# VmHWM after a 100 MB client message: ${(hwm / 1024).toFixed(0)} MiB`);
    assert.ok(hwm < 200 * 1024, `VmHWM ${hwm} KiB`);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a 100 MB answer from the server: discarded, the open request answered with an error", T, async () => {
    const p = await started(peer("faulty.mjs", "huge"));
    await p.request(1, "tools/call", { name: "act", arguments: {} });
    const m = await p.response();
    assert.equal(m.id, 1);
    assert.equal(m.error.code, -32603);
    assert.match(m.error.message, /sent a message of \d+ bytes/);
    await p.request(2, "tools/call", { name: "small", arguments: {} });
    assert.match(JSON.stringify(await p.response()), /small/);
    const hwm = p.vmHwmKiB();
    console.log(`# VmHWM after a 100 MB server message: ${(hwm / 1024).toFixed(0)} MiB`);
    assert.ok(hwm < 200 * 1024, `VmHWM ${hwm} KiB`);
    p.child.stdin.end();
    await p.done;
  });

  test("a server that dies mid-call: the call gets -32603 naming the exit, the proxy exits 1", T, async () => {
    const p = await started(peer("faulty.mjs", "die"));
    await p.request(1, "tools/call", { name: "act", arguments: {} });
    const m = await p.response();
    assert.equal(m.error.code, -32603);
    assert.match(m.error.message, /closed its output \(exit status: 3\)/);
    assert.equal(await p.done, 1);
  });

  test("a server that hangs: the call times out with -32001 and is cancelled downstream", T, async () => {
    const p = await started(peer("faulty.mjs", "hang"), ["--timeout", "1"]);
    await p.request(1, "tools/call", { name: "act", arguments: {} });
    const m = await p.response();
    assert.equal(m.error.code, -32001);
    assert.match(m.error.message, /did not answer `tools\/call` within 1 s/);
    await p.request(2, "ping");
    assert.deepEqual(await p.response(), { jsonrpc: "2.0", id: 2, result: {} });
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a server that writes garbage: the open call gets -32603 quoting it, the proxy stops", T, async () => {
    const p = await started(peer("faulty.mjs", "garbage"));
    await p.request(1, "tools/call", { name: "act", arguments: {} });
    const m = await p.response();
    assert.equal(m.error.code, -32603);
    assert.match(m.error.message, /not JSON .*Traceback/);
    assert.equal(await p.done, 1);
  });

  test("a flood of notifications passes in order with memory bounded; the answer follows", T, async () => {
    const p = await started(peer("faulty.mjs", "flood"));
    await p.request(1, "tools/call", { name: "act", arguments: {} });
    let notes = 0;
    let m;
    while ((m = await p.next()).method === "notifications/message") {
      assert.equal(m.params.data.split(" ")[1], String(notes));
      notes++;
    }
    assert.equal(notes, 200_000);
    assert.match(JSON.stringify(m), /after the flood/);
    const hwm = p.vmHwmKiB();
    console.log(`# VmHWM after 200,000 notifications: ${(hwm / 1024).toFixed(0)} MiB`);
    assert.ok(hwm < 200 * 1024, `VmHWM ${hwm} KiB`);
    p.child.stdin.end();
    await p.done;
  });
});

describe("media on every path of every message", () => {
  const started = async (server, proxyArgs) => {
    const p = rawProxy(server, proxyArgs);
    await p.request(0, "initialize", INIT);
    const init = await p.response();
    await p.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    return { p, init };
  };
  const refusedWords = /\[mediagate\].*(magic_mismatch|mime_unsupported)/;

  test("a task's result (callToolStream, taskSupport optional) is gated like a tools/call result", T, async () => {
    const client = await connect(peer("tasks.mjs"));
    try {
      const { tools } = await client.listTools();
      assert.equal(tools[0].execution.taskSupport, "optional");
      const kinds = [];
      let result;
      for await (const message of client.experimental.tasks.callToolStream({ name: "picture", arguments: {} })) {
        kinds.push(message.type);
        if (message.type === "result") result = message.result;
        if (message.type === "error") throw message.error;
      }
      assert.ok(kinds.includes("taskCreated"), `took the task path: ${kinds}`);
      assert.equal(result.content[0].text, "the picture:");
      assert.equal(result.content[1].type, "text", JSON.stringify(result));
      assert.match(result.content[1].text, refusedWords);
      assert.match(result.content[1].text, /task /);
    } finally {
      await client.close();
    }
  });

  test("icons: a data: URL in serverInfo and tools/list is checked, a refused one replaced by words", T, async () => {
    const { p, init } = await started(peer("media-paths.mjs"));
    assert.match(init.result.serverInfo.icons[0].src, refusedWords);
    await p.request(1, "tools/list");
    const { result } = await p.response();
    assert.equal(result.tools[0].name, "act");
    assert.match(result.tools[0].icons[0].src, refusedWords);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a sampling/createMessage request from the server: its image is gated before the client's model", T, async () => {
    const { p } = await started(peer("media-paths.mjs"));
    await p.request(1, "tools/call", { name: "sample", arguments: {} });
    const asked = await p.next();
    assert.equal(asked.method, "sampling/createMessage");
    assert.equal(asked.params.messages[0].content.type, "text");
    assert.match(asked.params.messages[0].content.text, refusedWords);
    await p.send(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { role: "assistant", model: "m", content: { type: "text", text: "seen" } } }) + "\n");
    assert.match((await p.response()).result.content[0].text, /client answered:.*seen/);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a notification and an error's data: their images are gated", T, async () => {
    const { p } = await started(peer("media-paths.mjs"));
    await p.request(1, "tools/call", { name: "notify", arguments: {} });
    const note = await p.next();
    assert.equal(note.method, "notifications/message");
    assert.equal(note.params.data.type, "text");
    assert.match(note.params.data.text, refusedWords);
    assert.equal((await p.response()).result.content[0].text, "notified");
    await p.request(2, "tools/call", { name: "error-data", arguments: {} });
    const failed = await p.response();
    assert.equal(failed.error.message, "failed");
    assert.equal(failed.error.data.type, "text");
    assert.match(failed.error.data.text, refusedWords);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("resources/read: an item with type/data and no blob is gated; `contents` twice is refused", T, async () => {
    const { p } = await started(peer("media-paths.mjs"));
    await p.request(1, "resources/read", { uri: "typed://" });
    const typed = (await p.response()).result;
    assert.deepEqual(Object.keys(typed.contents[0]).sort(), ["mimeType", "text", "uri"]);
    assert.equal(typed.contents[0].uri, "typed://");
    assert.match(typed.contents[0].text, refusedWords);
    assert.deepEqual(typed.contents[1], { uri: "typed://", text: "kept" });
    await p.request(2, "resources/read", { uri: "twice://" });
    const twice = await p.response();
    assert.equal(twice.error.code, -32603);
    assert.match(twice.error.message, /repeats the key `contents`/);
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a server line with both method and result is not passed: the server is stopped", T, async () => {
    const { p } = await started(peer("media-paths.mjs"));
    await p.request(1, "tools/call", { name: "method-and-result", arguments: {} });
    const m = await p.next();
    assert.equal(m.id, 1);
    assert.equal(m.error.code, -32603);
    assert.match(m.error.message, /both `method` and `result`/);
    assert.equal(await p.done, 1);
  });
});

describe("ids and a server that stops reading", () => {
  test("an answer the server writes under 1 for the client's \"1\" reaches the client as \"1\"", T, async () => {
    const p = rawProxy(peer("faulty.mjs", "number-ids"));
    await p.request("1", "initialize", INIT);
    const m = await p.response();
    assert.equal(p.raw(m).includes('"id":"1"'), true, p.raw(m));
    assert.equal(m.result.serverInfo.name, "faulty-number-ids");
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });

  test("a server that stops reading its input: timeouts still come, later requests are refused at once", T, async () => {
    const p = rawProxy(peer("faulty.mjs", "deaf"), ["--timeout", "2", "--max-message", "1000000"]);
    await p.request(0, "initialize", INIT);
    assert.equal((await p.response()).id, 0);
    // The server reads nothing more: about 3 MB of requests fill the pipe and the proxy's queue.
    const filler = "f".repeat(100_000);
    for (let id = 1; id <= 30; id++) await p.request(id, "tools/call", { name: "act", arguments: { filler } });
    const answers = new Map();
    const started = Date.now();
    while (answers.size < 30) {
      const m = await p.response();
      answers.set(m.id, m.error);
    }
    const codes = new Set([...answers.values()].map((e) => e.code));
    assert.ok(codes.has(-32001), "the forwarded requests time out");
    assert.ok(codes.has(-32603), "the ones that did not fit are refused");
    const refused = [...answers.values()].find((e) => e.code === -32603);
    assert.match(refused.message, /is not reading its input/);
    assert.ok(Date.now() - started < 20_000);
    // The client gone, the server (still not reading) is given its grace period, then stopped.
    p.child.stdin.end();
    assert.equal(await p.done, 0);
  });
});
