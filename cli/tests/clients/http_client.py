"""Drives `toolbind serve --http` with the official MCP Python SDK's Streamable HTTP client.

Run by cli/tests/http.rs (and bench/) with the SDK venv that tests/clients/install.sh makes:

    http_client.py URL TOKEN COMMAND [ARGS...]

TOKEN "-" sends no Authorization header. HTTP_CLIENT_HEADERS (a JSON object) adds
headers to every request (cli/tests/otel.rs: a `traceparent`). The server's tools are cli/tests/fixtures/tools.
Each command prints one JSON line on stdout (the last line) and exits 0 when the
exchange went as the command expects, 1 otherwise (with the reason on stderr).

Commands (and `http_client.py load-stdio TASKS CALLS SERVER-COMMAND...`: the stdio
baseline of bench/http-load.sh, one session with TASKS calls of hello_ts in flight):
  smoke MODE           list + call + bad arguments; MODE is `legacy` (initialize, a
                       session) or `auto` (the SDK's default: discover, then 2026-07-28)
  refused MODE         a list that must fail; prints the error's message
  call MODE TOOL JSON  one call; prints {ok, text, is_error, error, seconds}
  load MODE CLIENTS CALLS [retry]  CLIENTS concurrent clients x CALLS calls of hello_ts
                       each; prints {ok, failed, retries, errors, seconds, calls_per_s,
                       p50_ms, p99_ms}. With `retry`, a client whose connection fails
                       reconnects and makes its call again (as behind a load balancer)
"""

import asyncio
import json
import os
import sys
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def client(url: str, token: str, mode: str, headers: dict | None = None) -> Client:
    h = dict(headers or {})
    h.update(json.loads(os.environ.get("HTTP_CLIENT_HEADERS") or "{}"))
    if token != "-":
        h["Authorization"] = f"Bearer {token}"
    http = create_mcp_http_client(headers=h, timeout=httpx2.Timeout(30.0, read=60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def describe(e: BaseException) -> str:
    """An exception, with those of a group flattened."""
    if isinstance(e, BaseExceptionGroup):
        return " | ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


def fail(why: str) -> None:
    print(why, file=sys.stderr)
    print(json.dumps({"ok": False, "why": why}))
    sys.exit(1)


async def smoke(url: str, token: str, mode: str) -> None:
    async with client(url, token, mode) as c:
        tools = await c.list_tools()
        names = sorted(t.name for t in tools.tools)
        if "hello_ts" not in names or "hello_sh" not in names:
            fail(f"tools/list: {names}")
        r = await c.call_tool("hello_ts", {"name": "http", "steps": 0})
        if r.is_error or text_of(r) != "Hello, http! (typescript)":
            fail(f"hello_ts: {r}")
        seen = []

        async def progress(p, total, message):
            seen.append((p, message))

        r = await c.call_tool("hello_sh", {"name": "bash", "steps": 2}, progress_callback=progress)
        if r.is_error or "Hello, bash!" not in text_of(r):
            fail(f"hello_sh: {r}")
        bad = await c.call_tool("hello_ts", {"name": 5})
        if not bad.is_error or "name" not in text_of(bad):
            fail(f"bad arguments were not an error result: {bad}")
        print(json.dumps({"ok": True, "tools": names, "progress": len(seen)}))


async def refused(url: str, token: str, mode: str, headers: dict) -> None:
    try:
        async with client(url, token, mode, headers) as c:
            await c.list_tools()
    except Exception as e:  # the SDK raises the server's JSON-RPC error (or a group of it)
        print(json.dumps({"ok": True, "error": describe(e)}))
        return
    fail("the request was accepted")


async def call(url: str, token: str, mode: str, tool: str, args: dict) -> None:
    start = time.monotonic()
    out = {"ok": False, "text": None, "is_error": None, "error": None}
    try:
        async with client(url, token, mode) as c:
            # As a host does: list first (the SDK lists after a call to a tool it has not
            # seen, to check its outputSchema; during a drain that would be refused).
            await c.list_tools()
            r = await c.call_tool(tool, args)
            out.update(ok=True, text=text_of(r), is_error=r.is_error)
    except BaseException as e:  # noqa: BLE001 - report whatever ended the call
        out["error"] = describe(e)
    out["seconds"] = round(time.monotonic() - start, 3)
    print(json.dumps(out))


async def load(url: str, token: str, mode: str, clients: int, calls: int, retry: bool) -> None:
    latencies: list[float] = []
    failed = 0
    retries = 0
    errors: list[str] = []

    def note(e: str) -> None:
        if len(errors) < 5:
            errors.append(e)

    async def one(i: int) -> None:
        nonlocal failed, retries
        j = 0
        while j < calls:
            try:
                async with client(url, token, mode) as c:
                    while j < calls:
                        name = f"c{i}-{j}"
                        t = time.perf_counter()
                        try:
                            r = await c.call_tool("hello_ts", {"name": name, "steps": 0})
                            ok = not r.is_error and text_of(r) == f"Hello, {name}! (typescript)"
                            if not ok:
                                note(text_of(r))
                        except Exception as e:  # noqa: BLE001
                            if retry:
                                raise  # the connection failed: retry on a new one
                            ok = False
                            note(describe(e))
                        latencies.append(time.perf_counter() - t)
                        failed += not ok
                        j += 1
            except Exception as e:  # noqa: BLE001 - the connection failed: the SDK's session is gone
                if not retry:
                    note(describe(e))
                    failed += calls - j
                    return
                # The call in flight (idempotent) is made again on a new connection.
                retries += 1
                await asyncio.sleep(0.05)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    report(latencies, clients * calls, failed, time.perf_counter() - start, retries=retries, errors=errors)


def report(latencies: list[float], total: int, failed: int, seconds: float, **extra) -> None:
    """Prints a load run's figures as JSON; exits 1 when calls failed."""
    latencies.sort()
    pct = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 2)  # noqa: E731
    out = {"ok": total - failed, "failed": failed, **extra, "seconds": round(seconds, 2)}
    out.update(calls_per_s=round(total / seconds, 1), p50_ms=pct(0.50), p99_ms=pct(0.99))
    print(json.dumps(out))
    if failed:
        sys.exit(1)


async def load_stdio(command: list[str], tasks: int, calls: int) -> None:
    """The baseline: one stdio session (`command` is the server), `tasks` calls in flight."""
    from mcp import StdioServerParameters

    latencies: list[float] = []
    failed = 0
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as c:
        await c.list_tools()

        async def one(i: int) -> None:
            nonlocal failed
            for j in range(calls):
                name = f"c{i}-{j}"
                t = time.perf_counter()
                r = await c.call_tool("hello_ts", {"name": name, "steps": 0})
                latencies.append(time.perf_counter() - t)
                failed += r.is_error or text_of(r) != f"Hello, {name}! (typescript)"

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(tasks)))
        seconds = time.perf_counter() - start
    report(latencies, tasks * calls, failed, seconds)


def main() -> None:
    if sys.argv[1] == "load-stdio":
        # load-stdio TASKS CALLS SERVER-COMMAND...
        asyncio.run(load_stdio(sys.argv[4:], int(sys.argv[2]), int(sys.argv[3])))
        return
    url, token, command, *rest = sys.argv[1:]
    if command == "smoke":
        asyncio.run(smoke(url, token, rest[0]))
    elif command == "refused":
        headers = dict(h.split(": ", 1) for h in rest[1:])
        asyncio.run(refused(url, token, rest[0], headers))
    elif command == "call":
        asyncio.run(call(url, token, rest[0], rest[1], json.loads(rest[2])))
    elif command == "load":
        asyncio.run(load(url, token, rest[0], int(rest[1]), int(rest[2]), rest[3:] == ["retry"]))
    else:
        fail(f"unknown command {command}")


if __name__ == "__main__":
    main()
