// The baseline of bench/mcp-snapshot.sh: what a TypeScript user writes to list an MCP
// server's tools, on the official SDK's client (@modelcontextprotocol/sdk, from
// tests/clients/install.sh): connect over stdio (or Streamable HTTP, given a URL),
// initialize, page through tools/list, write the tools as JSON (sorted by name,
// pretty-printed) to OUT, close.
//
//   node bench/ts-list-tools.mjs SDK_DIR OUT COMMAND [ARG...]
//   node bench/ts-list-tools.mjs SDK_DIR OUT http://HOST:PORT/mcp
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, out, command, ...args] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const client = new Client({ name: "ts-list-tools", version: "1.0.0" });
await client.connect(
  /^https?:/.test(command)
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, env: process.env }),
);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const v = client.getServerVersion();
writeFileSync(out, JSON.stringify({ server: v, tools }, null, 2) + "\n");
await client.close();
