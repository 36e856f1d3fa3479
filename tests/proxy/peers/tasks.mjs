// An MCP server on the official TypeScript SDK whose tool runs as a task (`execution.taskSupport:
// "optional"`; it takes no arguments, so its handlers get only `extra`): a client that calls it
// with `callToolStream` gets the result as the answer to `tasks/result`, not to `tools/call`. The
// result is an SVG that claims to be a PNG.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";

import { SVG_AS_PNG } from "./media-paths.mjs";

const server = new McpServer(
  { name: "tasks", version: "1" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);
const result = { content: [{ type: "text", text: "the picture:" }, SVG_AS_PNG] };
server.experimental.tasks.registerToolTask(
  "picture",
  { description: "returns a picture, as a task", execution: { taskSupport: "optional" } },
  {
    createTask: async (extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60_000 });
      await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
      return { task };
    },
    getTask: async (extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (extra) => await extra.taskStore.getTaskResult(extra.taskId),
  },
);
await server.connect(new StdioServerTransport());
