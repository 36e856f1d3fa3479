// A hand-written MCP server (plain JSON-RPC over stdio) that puts media where a proxy gating only
// `tools/call` answers would not look: icons with `data:` URLs in `serverInfo` and `tools/list`, a
// `sampling/createMessage` request, a notification, `error.data`, `resources/read` items with
// `type`/`data` and no `blob`, a `contents` key given twice, and a line with both `method` and
// `result`. Every image is an SVG that claims to be a PNG.
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const SVG = Buffer.from("<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/>").toString("base64");
export const SVG_AS_PNG = { type: "image", data: SVG, mimeType: "image/png" };
export const ICON = { src: ` data:image/png;base64,${SVG}`, mimeType: "image/png" };

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const ok = (id, result) => send({ jsonrpc: "2.0", id, result });

function serve() {
  let samplingCall = null; // the `tools/call` waiting for the client's answer to the sampling request
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    const message = JSON.parse(line);
    const { id, method, params } = message;
    if (method === undefined) {
      // The client's answer to the sampling request: reported back as the tool's result.
      return ok(samplingCall, { content: [{ type: "text", text: `client answered: ${JSON.stringify(message)}` }] });
    }
    switch (method) {
      case "initialize":
        return ok(id, {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {}, resources: {}, logging: {} },
          serverInfo: { name: "media-paths", version: "1", icons: [ICON] },
        });
      case "ping":
        return ok(id, {});
      case "tools/list":
        return ok(id, { tools: [{ name: "act", inputSchema: { type: "object" }, icons: [ICON] }] });
      case "resources/read":
        if (params.uri === "typed://") {
          return ok(id, { contents: [{ uri: "typed://", ...SVG_AS_PNG }, { uri: "typed://", text: "kept" }] });
        }
        // `contents` twice: the first copy carries the blob, the last (what parsers keep) nothing.
        return process.stdout.write(
          `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"contents":[{"uri":"twice://","mimeType":"image/png","blob":"${SVG}"}],"contents":[]}}\n`,
        );
      case "tools/call":
        switch (params.name) {
          case "sample":
            samplingCall = id;
            return send({
              jsonrpc: "2.0",
              id: "sampling-1",
              method: "sampling/createMessage",
              params: { messages: [{ role: "user", content: SVG_AS_PNG }], maxTokens: 5 },
            });
          case "notify":
            send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: SVG_AS_PNG } });
            return ok(id, { content: [{ type: "text", text: "notified" }] });
          case "error-data":
            return send({ jsonrpc: "2.0", id, error: { code: -32000, message: "failed", data: SVG_AS_PNG } });
          case "method-and-result":
            return send({ jsonrpc: "2.0", id, method: "notifications/message", result: { content: [SVG_AS_PNG] } });
        }
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve();
