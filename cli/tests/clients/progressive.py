"""`toolbind serve --progressive` over stdio, driven by the official MCP Python SDK client.

Usage: python progressive.py TOOLBIND TOOLS_DIR

The client sees the core tool (`--core todo`), `search_tools` and `call_tool`; finds a tool
it was not shown by searching, calls tools through the proxy and by their own names, and
gets a clear error result for each bad search or proxy call. Prints `ok: <check>`; any
failure raises. Driven by cli/tests/progressive.rs.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLBIND, TOOLS = sys.argv[1], sys.argv[2]


def ok(check):
    print("ok:", check, flush=True)


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def main():
    params = StdioServerParameters(
        command=TOOLBIND, args=["serve", "--progressive", "--core", "todo", "--dir", TOOLS])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert "search_tools" in init.instructions, init.instructions
            assert "web_fetch" not in init.instructions, "a hidden tool is in the instructions"
            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            assert names == ["todo", "search_tools", "call_tool"], names
            ok("tools/list: the core tool, search_tools and call_tool")

            found = await session.call_tool("search_tools", {"query": "download a web page", "limit": 2})
            assert not found.is_error, text(found)
            tools = found.structured_content["tools"]
            assert tools[0]["name"] == "web_fetch", tools
            assert "url" in tools[0]["inputSchema"]["properties"], tools[0]
            assert json.loads(text(found)) == found.structured_content
            ok("search_tools finds a tool not listed, with its input schema")

            added = await session.call_tool(
                "call_tool", {"name": "todo", "arguments": {"action": "add", "text": "ship progressive"}})
            assert not added.is_error, text(added)
            listed_todos = await session.call_tool("todo", {"action": "list"})
            assert "ship progressive" in text(listed_todos), text(listed_todos)
            ok("call_tool runs a tool; the tool answers by its own name too")

            hidden = await session.call_tool("call_tool", {"name": "web_fetch", "arguments": {"url": "ftp://x"}})
            assert hidden.is_error and "http" in text(hidden), text(hidden)
            ok("call_tool validates the inner tool's arguments")

            for args, words in [
                ({"name": "tod"}, "did you mean `todo`"),
                ({}, "needs `name`"),
                ({"name": "call_tool"}, "does not call itself"),
                ({"name": "todo", "arguments": [1]}, "must be an object"),
            ]:
                r = await session.call_tool("call_tool", args)
                assert r.is_error and words in text(r), (args, text(r))
            ok("bad proxy calls are error results")

            for args, words in [
                ({"query": ""}, "no words to search for"),
                ({"query": "x" * (1 << 20)}, "the most taken is 4096"),
                ({"query": "web", "limit": 0}, "`limit` must be"),
                ({}, "needs `query`"),
            ]:
                r = await session.call_tool("search_tools", args)
                assert r.is_error and words in text(r), (args, text(r)[:200])
            none = await session.call_tool("search_tools", {"query": "quokka zebra"})
            assert not none.is_error and none.structured_content == {"tools": []}, none
            assert "No tool matches" in text(none), text(none)
            ok("bad searches are error results; no match is an empty list")


anyio.run(main)
