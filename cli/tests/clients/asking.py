"""`toolbind serve` over stdio asking the official MCP Python SDK client (2025-11-25):
a tool's approval and its `ctx` questions as elicitation, sampling and roots requests,
its `ctx.notify` as a log message; a client without those capabilities, whose tools are
told it cannot be asked (and refused, for a tool that `asks:` what the client lacks); and
the SDK's `Client` on MCP 2026-07-28, whose driver answers the same questions as
`InputRequiredResult`s while the tool waits.

Usage: python asking.py TOOLBIND TOOLS_DIR
Prints `ok: <check>` per check; any failure raises. Driven by cli/tests/mcp_python.rs.
"""

import sys

import anyio
from mcp import types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLBIND, TOOLS = sys.argv[1], sys.argv[2]


def ok(check):
    print("ok:", check, flush=True)


async def main():
    params = StdioServerParameters(command=TOOLBIND, args=["serve", TOOLS, "--sandbox", "off"])
    asked = []
    logged = []
    approve = {"answer": True}

    async def elicit(context, p: types.ElicitRequestParams):
        asked.append(p)
        props = p.requested_schema["properties"]
        if "approve" in props:
            return types.ElicitResult(action="accept", content={"approve": approve["answer"]})
        if "confirm" in props:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="accept", content={"name": "Ada", "copies": 2})

    async def sample(context, p: types.CreateMessageRequestParams):
        said = p.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant", model="scripted",
            content=types.TextContent(type="text", text="short (%d chars asked)" % len(said)))

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/project", name="project")])

    async def log(p: types.LoggingMessageNotificationParams):
        logged.append((p.level, p.logger, p.data))

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit, sampling_callback=sample,
                                 list_roots_callback=roots, logging_callback=log) as session:
            await session.initialize()
            r = await session.call_tool("make_copies", {})
            assert not r.is_error, r
            assert r.content[0].text == "made 2 copies for Ada in file:///tmp/project", r
            assert [a.message for a in asked] == ["Who are the copies for?", "Make 2 copies for Ada?"], asked
            with anyio.fail_after(5):
                while not any(d == "making 2 copies" for _, _, d in logged):
                    await anyio.sleep(0.05)
            level, logger, _ = next(x for x in logged if x[2] == "making 2 copies")
            assert (level, logger) == ("notice", "make_copies"), logged
            ok("ctx: elicit, confirm, roots and notify reach the client")

            r = await session.call_tool("summarize", {"text": "a long story"})
            assert r.content[0].text == "summary: short (23 chars asked)", r
            ok("ctx: sample reaches the client's model")

            r = await session.call_tool("remove_note", {"path": "a.txt", "token": "s3cret-value"})
            assert not r.is_error and r.content[0].text.strip() == "removed a.txt", r
            question = asked[-1].message
            assert "remove_note" in question and "[sensitive]" in question and "s3cret" not in question, question
            approve["answer"] = False
            r = await session.call_tool("remove_note", {"path": "b.txt"})
            assert r.is_error and "did not approve" in r.content[0].text, r
            ok("approval: asked as an elicitation, sensitive inputs hidden; yes runs, no denies")

    # A client that can be asked nothing.
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("make_copies", {})
            assert r.is_error and "did not declare the `elicitation` capability" in r.content[0].text, r
            r = await session.call_tool("remove_note", {"path": "a.txt"})
            assert r.is_error and "cannot be asked" in r.content[0].text, r
            ok("a client without the capabilities: the tool is told it cannot be asked")
            # A tool that cannot do without sampling (TOOL.md `asks: [sampling]`) is
            # refused before it runs.
            try:
                await session.call_tool("summarize", {"text": "a long story"})
                raise AssertionError("summarize ran for a client that cannot sample")
            except MCPError as e:
                assert e.error.code == -32021, e.error
                assert e.error.data["requiredCapabilities"] == {"sampling": {}}, e.error
            ok("asks: [sampling]: a client without sampling is refused with -32021")

    # MCP 2026-07-28 (the SDK's Client discovers it): the same questions travel as
    # InputRequiredResults, answered by the same callbacks, round after round.
    asked.clear()
    approve["answer"] = True
    async with Client(params, elicitation_callback=elicit, sampling_callback=sample,
                      list_roots_callback=roots) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        r = await client.call_tool("make_copies", {})
        assert not r.is_error, r
        assert r.content[0].text == "made 2 copies for Ada in file:///tmp/project", r
        assert [a.message for a in asked] == ["Who are the copies for?", "Make 2 copies for Ada?"], asked
        r = await client.call_tool("summarize", {"text": "a long story"})
        assert r.content[0].text == "summary: short (23 chars asked)", r
        r = await client.call_tool("remove_note", {"path": "c.txt", "token": "s3cret-value"})
        assert not r.is_error and r.content[0].text.strip() == "removed c.txt", r
        assert "s3cret" not in asked[-1].message, asked[-1].message
        ok("2026-07-28: the SDK's driver answers a tool's questions and approval round by round")


anyio.run(main)
