// The asking benchmark's peer: an MCP server on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32, low-level `Server` over stdio) with the same plain
// tool, and one that asks the client to confirm through `server.elicitInput` (a form with
// one boolean) before it answers, as echo_confirm does through ctx.confirm.
// Usage: node ts_asking_server.mjs <clients dir with node/node_modules>
import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { sdk } from "../sdk.mjs";

const { Server } = await sdk("server/index.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = await sdk("types.js");
const here = dirname(fileURLToPath(import.meta.url));
const tool = await import(pathToFileURL(join(here, "tools/echo_plain/index.mjs")).href);

const schema = {
  type: "object",
  properties: { text: { type: "string", description: "The text to echo." } },
  required: ["text"],
};
const server = new Server({ name: "ts-sdk-asking-peer", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "echo_plain", description: "Echoes a text back.", inputSchema: schema },
    { name: "echo_confirm", description: "Confirms, then echoes a text back.", inputSchema: schema },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments ?? {};
  if (typeof args.text !== "string") {
    return { content: [{ type: "text", text: "invalid arguments: `text` must be a string" }], isError: true };
  }
  if (request.params.name === "echo_confirm") {
    const answer = await server.elicitInput(
      {
        mode: "form",
        message: `echo ${args.text}?`,
        requestedSchema: { type: "object", required: ["confirm"], properties: { confirm: { type: "boolean" } } },
      },
      { relatedRequestId: extra.requestId },
    );
    if (answer.action !== "accept" || answer.content?.confirm !== true) {
      return { content: [{ type: "text", text: "not confirmed" }] };
    }
  }
  return await tool.execute(String(extra.requestId), args);
});
await server.connect(new StdioServerTransport());
