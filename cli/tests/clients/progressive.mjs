// `toolbind serve --progressive` over stdio, driven by the official MCP TypeScript SDK
// client. Usage: node progressive.mjs TOOLBIND TOOLS_DIR (with the SDK's node_modules
// beside this file). Prints `ok: <check>`; any failure throws. Driven by
// cli/tests/progressive.rs.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [toolbind, tools] = process.argv.slice(2);
const client = new Client({ name: "progressive-check", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({ command: toolbind, args: ["serve", "--progressive", "--dir", tools] }),
);
const listed = await client.listTools();
const names = listed.tools.map((t) => t.name);
// `todo` is not core here: no --core, and the shipped TOOL.md says nothing of discovery.
assert.deepEqual(names, ["search_tools", "call_tool"]);
console.log("ok: tools/list holds search_tools and call_tool only");

const found = await client.callTool({ name: "search_tools", arguments: { query: "plan my work with a todo list" } });
assert.equal(found.isError, false);
assert.equal(found.structuredContent.tools[0].name, "todo");
console.log("ok: search_tools finds the todo tool");

const added = await client.callTool({
  name: "call_tool",
  arguments: { name: "todo", arguments: { action: "add", text: "from typescript" } },
});
assert.equal(added.isError, false, JSON.stringify(added));
const todos = await client.callTool({ name: "call_tool", arguments: { name: "todo", arguments: { action: "list" } } });
assert.match(todos.content[0].text, /from typescript/);
console.log("ok: call_tool runs the tool found");

const bad = await client.callTool({ name: "search_tools", arguments: { query: "   " } });
assert.equal(bad.isError, true);
assert.match(bad.content[0].text, /no words to search for/);
console.log("ok: a blank query is an error result");
await client.close();
