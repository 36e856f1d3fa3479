// An MCP server over stdio (plain JSON-RPC lines) whose tools answer results written beforehand,
// byte for byte: `node mcp-peer.mjs RESULTS.json`, where RESULTS.json maps a tool's name to the
// text of its `result`. What the proxy passes on is then compared with admit-tool-result's output.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const results = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const send = (line) => process.stdout.write(`${line}\n`);
const ok = (id, result) => send(JSON.stringify({ jsonrpc: '2.0', id, result }));

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return; // notifications
  if (method === 'initialize') {
    return ok(id, { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'wire-peer', version: '1' } });
  }
  if (method === 'tools/list') return ok(id, { tools: Object.keys(results).map((name) => ({ name, inputSchema: { type: 'object' } })) });
  if (method === 'tools/call' && params.name in results) {
    return send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${results[params.name]}}`);
  }
  send(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `no ${method} ${params?.name ?? ''}` } }));
});
