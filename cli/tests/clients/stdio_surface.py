"""`toolbind serve` over stdio, driven by the official MCP Python SDK client.

Usage: python stdio_surface.py TOOLBIND TOOLS_DIR

Checks the whole surface a host sees: tools (list, call, bad arguments), the tools'
documentation as resources (list, template, read, unknown URI), the system prompt as a
prompt (list, get), logging (setLevel; a tool's stderr lines as notifications/message,
redacted, filtered by level, rate-limited with a dropped count), progress with totals, and
notifications/resources/list_changed when a TOOL.md body changes (TOOLS_DIR must be a
copy the test may edit).
Prints `ok: <check>` per check; any failure raises (non-zero exit). Driven by
cli/tests/mcp_python.rs.
"""

import pathlib
import subprocess
import sys

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

TOOLBIND, TOOLS = sys.argv[1], sys.argv[2]
SECRET = "sk-live-5f2a8c1e-distinctive"


def ok(check):
    print("ok:", check, flush=True)


def toolbind(*args):
    return subprocess.run([TOOLBIND, *args], check=True, capture_output=True, text=True).stdout


class Log:
    def __init__(self):
        self.messages = []

    async def __call__(self, params: types.LoggingMessageNotificationParams):
        self.messages.append(params)

    def lines(self, logger):
        return [m.data for m in self.messages if m.logger == logger]


async def call_with_progress(session, name, args):
    seen = []

    async def progress(value, total, message):
        seen.append((value, total, message))

    result = await session.call_tool(name, args, progress_callback=progress)
    return result, seen


def check_progress(seen, steps, what):
    values = [v for v, _, _ in seen]
    assert values, f"{what}: no progress notifications"
    assert all(b > a for a, b in zip(values, values[1:])), f"{what}: values must increase: {seen}"
    assert all(t == steps for _, t, _ in seen), f"{what}: every notification carries total {steps}: {seen}"
    assert values[-1] == steps, f"{what}: the last update reaches the total: {seen}"
    assert all(m.startswith("step ") for _, _, m in seen), f"{what}: the text is the message: {seen}"
    ok(f"progress totals: {what} {seen}")


async def eventually(cond, what, seconds=10):
    with anyio.fail_after(seconds):
        while not cond():
            await anyio.sleep(0.05)
    return what


async def main():
    log = Log()
    params = StdioServerParameters(command=TOOLBIND, args=["serve", "--dir", TOOLS])
    notes = []

    async def on_message(message):
        notes.append(type(message).__name__)

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=log, message_handler=on_message) as session:
            init = await session.initialize()
            caps = init.capabilities
            assert caps.resources is not None and caps.prompts is not None and caps.logging is not None, caps
            assert caps.resources.list_changed, caps
            text = session.instructions or ""
            assert "## Available tools" in text and "- report_ts:" in text, text
            assert "## Guidelines" in text and "Call report_ts with small step counts only." in text, text
            assert "toolbind://tools/{name}" in text and "system_prompt" in text, text
            ok("initialize: resources, prompts and logging capabilities; instructions summarise tools and guidelines")

            # --- tools: list, call, bad arguments
            tools = await session.list_tools()
            assert sorted(t.name for t in tools.tools) == ["report_py", "report_sh", "report_ts"], tools
            r = await session.call_tool("report_py", {"steps": 1})
            assert not r.is_error and r.content[0].text == "reported 1", r
            r = await session.call_tool("report_ts", {"steps": "many"})
            assert r.is_error and "steps" in r.content[0].text, r
            try:
                await session.call_tool("no_such_tool", {})
                raise AssertionError("an unknown tool must be a protocol error")
            except MCPError as e:
                assert "unknown tool" in str(e), e
            ok("tools: list, call, bad arguments as isError, unknown tool as an error")

            # --- resources: list, template, read, unknown
            resources = (await session.list_resources()).resources
            uris = sorted(str(r.uri) for r in resources)
            assert uris == [f"toolbind://tools/{n}" for n in ("report_py", "report_sh", "report_ts")], uris
            assert all(r.mime_type == "text/markdown" for r in resources), resources
            ts = next(r for r in resources if r.name == "report_ts")
            assert ts.title == "Report (typescript): documentation" and ts.description.startswith("Reports progress"), ts
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["toolbind://tools/{name}"], templates
            assert templates[0].mime_type == "text/markdown", templates
            read = await session.read_resource("toolbind://tools/report_ts")
            page = read.contents[0]
            assert page.mime_type == "text/markdown" and str(page.uri) == "toolbind://tools/report_ts", page
            assert ts.size == len(page.text.encode()), (ts.size, len(page.text))
            assert page.text.startswith("# Report (typescript) (`report_ts`)\n"), page.text
            assert "| `steps` | number | no | `3` |" in page.text, page.text
            assert "### Usage\n\nPass `flood` to write" in page.text, page.text
            # The same renderer as `toolbind docs`: its section is this page one level down.
            docs = toolbind("docs", "--dir", TOOLS)
            body = page.text.split("\n", 1)[1].replace("\n### Usage", "\n#### Usage")
            assert "## Report (typescript) (`report_ts`)\n" + body in docs, (body, docs)
            try:
                await session.read_resource("toolbind://tools/nope")
                raise AssertionError("an unknown resource must be an error")
            except MCPError as e:
                assert "no resource `toolbind://tools/nope`" in str(e), e
            ok("resources: one text/markdown page per tool, the template, read, unknown URI")

            # --- prompts
            prompts = (await session.list_prompts()).prompts
            assert [p.name for p in prompts] == ["system_prompt"], prompts
            got = await session.get_prompt("system_prompt")
            assert got.messages[0].role == "user", got
            assert got.messages[0].content.text == toolbind("prompt", "--dir", TOOLS), got
            try:
                await session.get_prompt("nope")
                raise AssertionError("an unknown prompt must be an error")
            except MCPError as e:
                assert "no prompt `nope`" in str(e), e
            ok("prompts: system_prompt is exactly `toolbind prompt`")

            # --- logging and progress totals, each language
            await session.set_logging_level("info")
            for name in ("report_ts", "report_py", "report_sh"):
                r, seen = await call_with_progress(session, name, {"steps": 3})
                assert not r.is_error and r.content[0].text == "reported 3", r
                check_progress(seen, 3, name)
                want = [f"stderr line {i} of 3" for i in (1, 2, 3)]
                await eventually(lambda: all(w in log.lines(name) for w in want), name)
                assert all(m.level == "info" for m in log.messages if m.logger == name), log.messages
                ok(f"logging: {name}'s stderr lines arrive as notifications/message at info")
            events = log.lines("toolbind")
            assert not [e for e in events if ": ok in" in e], f"successful calls are debug events, below info: {events}"
            assert any("of `report_ts`: error in" in e for e in events), f"the bad-arguments call is a warning event: {events}"

            # A secret the tool writes to stderr is redacted.
            r = await session.call_tool("report_sh", {"steps": 1, "token": SECRET})
            assert not r.is_error, r
            await eventually(lambda: "using token [REDACTED]" in log.lines("report_sh"), "redacted")
            assert not any(SECRET in str(m.data) for m in log.messages), log.messages
            ok("logging: secrets in stderr lines are redacted")

            # Below the level: nothing.
            await session.set_logging_level("warning")
            before = len(log.messages)
            r = await session.call_tool("report_py", {"steps": 2})
            assert not r.is_error, r
            r = await session.call_tool("report_ts", {"steps": "x"})
            assert r.is_error, r
            await eventually(lambda: len(log.messages) > before, "the error event")
            await anyio.sleep(0.3)
            new = log.messages[before:]
            assert [m.logger for m in new] == ["toolbind"] and new[0].level == "warning", new
            assert "of `report_ts`: error" in new[0].data, new
            ok("logging: setLevel warning filters stderr lines; a failed call is a warning event")

            # A flood is bounded and counted.
            await session.set_logging_level("debug")
            before = len(log.messages)
            r = await session.call_tool("report_ts", {"steps": 1, "flood": 5000})
            assert not r.is_error, r
            dropped = lambda: [m for m in log.messages[before:] if "log messages dropped" in str(m.data)]
            await eventually(lambda: dropped(), "the dropped count", seconds=20)
            # The queue drains at the rate limit: wait until nothing more arrives.
            with anyio.fail_after(20):
                while True:
                    count = len(log.messages)
                    await anyio.sleep(1.0)
                    if len(log.messages) == count:
                        break
            flood = [m for m in log.messages[before:] if m.logger == "report_ts"]
            n = sum(int(str(m.data).split()[0]) for m in dropped())
            print("flood:", len(flood), "messages,", n, "dropped", flush=True)
            assert len(flood) < 1000, f"{len(flood)} messages: the flood was not bounded"
            assert len(flood) + n >= 5000, (len(flood), n)
            assert dropped()[0].level == "warning", dropped()
            ok(f"logging: a flood of 5000 stderr lines -> {len(flood)} messages and '{dropped()[0].data}'")

            # --- the docs change: resources/list_changed, and the new text is served
            tool_md = pathlib.Path(TOOLS) / "report_py" / "TOOL.md"
            tool_md.write_text(tool_md.read_text() + "\nA line added while serving.\n")
            await eventually(lambda: "ResourceListChangedNotification" in notes, "resources/list_changed", seconds=15)
            read = await session.read_resource("toolbind://tools/report_py")
            assert "A line added while serving." in read.contents[0].text, read
            assert "ToolListChangedNotification" not in notes, f"the tool definition did not change: {notes}"
            ok("resources: a changed TOOL.md body sends resources/list_changed (not tools/list_changed)")


anyio.run(main)
