// The serve benchmark's peer: an MCP server on the official TypeScript SDK
// (@modelcontextprotocol/sdk, low-level `Server` over stdio) that imports the same
// JavaScript tool toolbind serves (tools/echo_js/index.mjs) and calls it in-process.
// Usage: node ts_server.mjs <clients dir with node/node_modules>
import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { sdk } from "../sdk.mjs";

const { Server } = await sdk("server/index.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = await sdk("types.js");
const here = dirname(fileURLToPath(import.meta.url));
const tool = await import(pathToFileURL(join(here, "tools/echo_js/index.mjs")).href);

const definition = {
  name: "echo_js",
  title: "Echo (JavaScript)",
  description: "Echoes a text back. The tool both servers run in the serve benchmark.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "The text to echo." } },
    required: ["text"],
    additionalProperties: false,
  },
};

const server = new Server({ name: "ts-sdk-peer", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [definition] }));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments ?? {};
  // The check a hand-written server makes: the one required string argument.
  if (request.params.name !== "echo_js") throw new Error(`unknown tool ${request.params.name}`);
  if (typeof args.text !== "string") {
    return { content: [{ type: "text", text: "invalid arguments: `text` must be a string" }], isError: true };
  }
  try {
    return await tool.execute(String(extra.requestId), args, extra.signal, undefined);
  } catch (err) {
    return { content: [{ type: "text", text: String(err?.message ?? err) }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
