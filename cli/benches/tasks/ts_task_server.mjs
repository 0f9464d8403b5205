// The tasks benchmark's peer: an MCP server on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32, its experimental tasks: `registerToolTask` with the
// SDK's InMemoryTaskStore) over stdio, running the same JavaScript tool in-process as a
// task. The SDK implements the tasks of MCP 2025-11-25 (SEP-1686: the client asks with a
// `task` param, polls `tasks/get`, fetches `tasks/result`), which SEP-2663 replaced; it is
// what a TypeScript user has for long calls today.
// Usage: node ts_task_server.mjs <clients dir with node/node_modules>
import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { nodeModule, sdk } from "../sdk.mjs";

const { McpServer } = await sdk("server/mcp.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { InMemoryTaskStore } = await sdk("experimental/tasks/stores/in-memory.js");
const { z } = await nodeModule("zod/index.js");
const here = dirname(fileURLToPath(import.meta.url));
const tool = await import(pathToFileURL(join(here, "tools/echo_task/index.mjs")).href);

const server = new McpServer(
  { name: "ts-sdk-task-peer", version: "1.0.0" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
  },
);
server.experimental.tasks.registerToolTask(
  "echo_task",
  {
    description: "Echoes a text back.",
    inputSchema: { text: z.string() },
    execution: { taskSupport: "optional" },
  },
  {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 300000, pollInterval: 500 });
      (async () => {
        let result;
        try {
          result = await tool.execute(task.taskId, args);
        } catch (err) {
          result = { content: [{ type: "text", text: String(err?.message ?? err) }], isError: true };
        }
        await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
      })();
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);
await server.connect(new StdioServerTransport());
