"""`toolbind serve` over stdio: nested inputs and every content block type, as the official
MCP Python SDK client sees them.

Usage: python rich_and_nested.py TOOLBIND TOOLS_DIR SPILL_DIR (cli/tests/fixtures/mcp_rich)
Prints `ok: <check>` per check; any failure raises. Driven by cli/tests/mcp_python.rs.
"""

import base64
import json
import sys

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLBIND, TOOLS, SPILL = sys.argv[1], sys.argv[2], sys.argv[3]


def ok(check):
    print("ok:", check, flush=True)


async def main():
    params = StdioServerParameters(command=TOOLBIND, args=["serve", "--dir", TOOLS, "--spill-dir", SPILL])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            (tool,) = [t for t in (await session.list_tools()).tools if t.name == "rich_py"]
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

            # 20 MiB of image: over the 16 MiB bound, saved while it streams, and linked as a
            # resource this server serves (a server-side file:// path is no use to a client).
            n = 20 << 20
            r = await session.call_tool("big_py", {"kind": "image", "bytes": n})
            assert not r.is_error, r
            (link,) = r.content
            assert isinstance(link, types.ResourceLink), link
            assert str(link.uri).startswith("toolbind://spill/big_py-") and str(link.uri).endswith(".png"), link
            assert (link.mime_type, link.size) == ("image/png", n), link
            read = await session.read_resource(link.uri)
            (contents,) = read.contents
            assert isinstance(contents, types.BlobResourceContents) and contents.mime_type == "image/png", contents
            assert base64.b64decode(contents.blob) == (bytes(range(251)) * (n // 251 + 1))[:n]
            ok("tools/call: an image over the bound is a toolbind://spill/ link, and resources/read serves it whole")

            r = await session.call_tool("big_py", {"kind": "text", "bytes": 20000})
            note = r.content[0].text
            at = note.index("Full output saved to: toolbind://spill/") + len("Full output saved to: ")
            uri = note[at:note.index("]", at)]
            read = await session.read_resource(uri)
            (contents,) = read.contents
            assert isinstance(contents, types.TextResourceContents), contents
            assert contents.text.startswith("line 0\n") and contents.text.endswith("line 19999"), contents.text[-40:]
            ok("tools/call: a truncated text's note names a toolbind://spill/ resource holding it whole")

            name = str(link.uri)[len("toolbind://spill/"):]
            for bad in ["../" + name, "%2e%2e/" + name, name[:-4] + ".part", "..", "", "x/../" + name]:
                try:
                    await session.read_resource("toolbind://spill/" + bad)
                except Exception as e:  # noqa: BLE001
                    assert "no resource" in str(e), (bad, e)
                else:
                    raise AssertionError("read toolbind://spill/%s" % bad)
            ok("resources/read: a spill name that is a path, hidden, partial or unknown is not found")


anyio.run(main)
