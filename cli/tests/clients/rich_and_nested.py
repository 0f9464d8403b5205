"""`toolbind serve` over stdio: nested inputs and every content block type, as the official
MCP Python SDK client sees them.

Usage: python rich_and_nested.py TOOLBIND TOOLS_DIR (cli/tests/fixtures/mcp_rich)
Prints `ok: <check>` per check; any failure raises. Driven by cli/tests/mcp_python.rs.
"""

import json
import sys

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLBIND, TOOLS = sys.argv[1], sys.argv[2]


def ok(check):
    print("ok:", check, flush=True)


async def main():
    params = StdioServerParameters(command=TOOLBIND, args=["serve", "--dir", TOOLS])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            (tool,) = (await session.list_tools()).tools
            edits = tool.input_schema["properties"]["edits"]
            assert edits["type"] == "array" and edits["minItems"] == 1, edits
            item = edits["items"]
            assert item["type"] == "object" and item["required"] == ["old_text"], item
            assert item["additionalProperties"] is False, item
            assert item["properties"]["count"] == {
                "type": "integer", "description": "How many times.", "minimum": 1, "default": 1,
            }, item
            ok("tools/list: a nested input's schema (array of objects, integer, constraints)")

            r = await session.call_tool("rich_py", {"edits": [{"old_text": "a"}, {"old_text": "b", "count": 2}]})
            assert not r.is_error, r
            kinds = [type(c) for c in r.content]
            assert kinds == [
                types.TextContent, types.ImageContent, types.AudioContent,
                types.EmbeddedResource, types.EmbeddedResource, types.ResourceLink,
            ], kinds
            assert json.loads(r.content[0].text) == [{"count": 1, "old_text": "a"}, {"count": 2, "old_text": "b"}], r
            assert (r.content[1].data, r.content[1].mime_type) == ("iVBORw0KGgo=", "image/png"), r
            assert (r.content[2].data, r.content[2].mime_type) == ("UklGRg==", "audio/wav"), r
            text = r.content[3].resource
            assert isinstance(text, types.TextResourceContents) and text.text == "notes", text
            blob = r.content[4].resource
            assert isinstance(blob, types.BlobResourceContents) and blob.blob == "AAEC", blob
            link = r.content[5]
            assert (str(link.uri), link.name, link.mime_type, link.size) == ("file:///out.mp3", "out.mp3", "audio/mpeg", 1234), link
            ok("tools/call: text, image, audio, embedded text and blob resources, a resource link, as SDK types")

            r = await session.call_tool("rich_py", {"edits": [{"old_txt": "a"}]})
            assert r.is_error and "edits[0].old_txt" in r.content[0].text and "did you mean `old_text`" in r.content[0].text, r
            r = await session.call_tool("rich_py", {"edits": []})
            assert r.is_error and "1" in r.content[0].text, r
            ok("tools/call: a nested mistake is an isError result naming its path")


anyio.run(main)
