// The baseline of bench/http-load.sh: an MCP Streamable HTTP server written on the
// official TypeScript SDK (@modelcontextprotocol/sdk, from tests/clients/install.sh),
// stateless with JSON responses (as the SDK's own stateless example), running the same
// JavaScript as cli/tests/fixtures/tools/hello_ts in-process, behind the same bearer-token
// check. Prints its URL on stderr.
//
//   node bench/ts-http-server.mjs SDK_DIR PORT    (TOOLBIND_TOKEN: the token)
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, port] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "dist/esm", p)).href);
const { McpServer } = await load("server/mcp.js");
const { StreamableHTTPServerTransport } = await load("server/streamableHttp.js");
const { z } = await import(pathToFileURL(join(sdkDir, "../../zod/index.js")).href);
const token = `Bearer ${process.env.TOOLBIND_TOKEN}`;

// cli/tests/fixtures/tools/hello_ts/index.ts, as JavaScript.
async function execute(toolCallId, params, signal, onUpdate) {
  for (let i = 1; i <= params.steps; i++) {
    onUpdate?.({ content: [{ type: "text", text: `step ${i} of ${params.steps}` }] });
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    content: [{ type: "text", text: `Hello, ${params.name}! (typescript)` }],
    details: { steps: params.steps, toolCallId },
  };
}

function mcpServer() {
  const server = new McpServer({ name: "ts-baseline", version: "1.0.0" });
  server.registerTool(
    "hello_ts",
    {
      description: "Greets someone, reporting progress once per step.",
      inputSchema: { name: z.string(), steps: z.number().default(2) },
    },
    async (args, extra) => {
      const r = await execute(String(extra.requestId), args, extra.signal);
      return { content: r.content, _meta: { details: r.details } };
    },
  );
  return server;
}

createServer(async (req, res) => {
  if (req.headers.authorization !== token) {
    res.writeHead(401, { "WWW-Authenticate": "Bearer" }).end();
    return;
  }
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}).listen(Number(port), "127.0.0.1", function () {
  console.error(`ts baseline at http://127.0.0.1:${this.address().port}/mcp`);
});
