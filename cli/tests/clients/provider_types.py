"""Checks toolbind's provider messages against the providers' official Python SDK types.

Usage: python provider_types.py MESSAGES_JSON (written by cli/tests/provider_sdks.rs):
{provider: {"definitions": {"false": ..., "true": ...}, "results": [...]}}.

OpenAI's and Anthropic's request types are TypedDicts: each value is validated with
pydantic and must come back unchanged (a key the type does not have, or a value it had
to coerce, is a failure; `Iterable` fields are drained so their items are checked too).
Google's are pydantic models that forbid unknown fields. Prints `ok: <check>`; any
failure raises with the path pydantic names.
"""

import json
import sys
from importlib.metadata import version

import pydantic
from anthropic.types import MessageParam, ToolParam
from google.genai import types as genai
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionToolMessageParam
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_input_item_param import FunctionCallOutput

print("sdks: openai %s, anthropic %s, google-genai %s, pydantic %s" % (
    version("openai"), version("anthropic"), version("google-genai"), pydantic.VERSION), flush=True)


def drained(v):
    """The validated value with lazily validated iterables drained (validating them)."""
    if isinstance(v, dict):
        return {k: drained(x) for k, x in v.items()}
    if isinstance(v, (str, bytes, int, float, bool)) or v is None:
        return v
    return [drained(x) for x in v]


def exact(typ, value, what):
    # The adapter must outlive the lazy iterators it returns (they use its definitions).
    adapter = pydantic.TypeAdapter(typ)
    got = drained(adapter.validate_python(value))
    if got != value:
        raise AssertionError("%s: the SDK type %s dropped or changed something:\n sent %s\n read %s"
                             % (what, typ.__name__, json.dumps(value)[:2000], json.dumps(got)[:2000]))


def ok(check):
    print("ok:", check, flush=True)


data = json.load(open(sys.argv[1]))

chat = data["openai_chat"]
for strict in ("false", "true"):
    defs = chat["definitions"][strict]
    assert defs, "no definitions"
    for d in defs:
        exact(ChatCompletionFunctionToolParam, d, "chat definition %s" % d["function"]["name"])
    ok("openai_chat definitions (strict %s)" % strict)
assert len(chat["results"]) == 4
for m in chat["results"]:
    exact(ChatCompletionToolMessageParam, m, "chat result %s" % m["tool_call_id"])
ok("openai_chat results")

resp = data["openai_responses"]
for strict in ("false", "true"):
    for d in resp["definitions"][strict]:
        exact(FunctionToolParam, d, "responses definition %s" % d["name"])
    ok("openai_responses definitions (strict %s)" % strict)
kinds = set()
for item in resp["results"]:
    exact(FunctionCallOutput, item, "responses result %s" % item["call_id"])
    if isinstance(item["output"], list):
        kinds |= {p["type"] for p in item["output"]}
assert kinds == {"input_text", "input_image", "input_file"}, kinds
ok("openai_responses results")

anth = data["anthropic"]
for d in anth["definitions"]["false"]:
    exact(ToolParam, d, "anthropic definition %s" % d["name"])
ok("anthropic definitions")
(turn,) = anth["results"]
exact(MessageParam, turn, "anthropic results")
blocks = {b["type"] for r in turn["content"] for b in (r["content"] if isinstance(r["content"], list) else [])}
assert "image" in blocks, blocks
ok("anthropic results")

gem = data["gemini"]
for strict in ("false", "true"):
    (tool,) = gem["definitions"][strict]
    genai.Tool.model_validate(tool)
ok("gemini definitions")
(content,) = gem["results"]
c = genai.Content.model_validate(content)
assert [p.function_response.name for p in c.parts] == ["todo", "rich_py", "rich_py", "rich_py"], c
inline = [fp for p in c.parts for fp in (p.function_response.parts or [])]
assert inline and inline[0].inline_data.mime_type == "image/png", inline
ok("gemini results")

# Progressive discovery: `search_tools` beside the core tool; Anthropic lists the others with
# `defer_loading` and answers a search with `tool_reference` blocks.
for name, typ in (("openai_chat", ChatCompletionFunctionToolParam), ("openai_responses", FunctionToolParam)):
    disc = data[name]["discovery"]
    for strict in ("false", "true"):
        defs = disc["definitions"][strict]
        names = [d["function"]["name"] if "function" in d else d["name"] for d in defs]
        assert names == ["todo", "search_tools"], names
        for d in defs:
            exact(typ, d, "%s discovery definition" % name)
    for m in disc["results"]:
        exact(ChatCompletionToolMessageParam if name == "openai_chat" else FunctionCallOutput, m,
              "%s discovery result" % name)
    ok("discovery %s" % name)

disc = data["anthropic"]["discovery"]
defs = disc["definitions"]["false"]
deferred = [d["name"] for d in defs if d.get("defer_loading")]
shown = [d["name"] for d in defs if not d.get("defer_loading")]
assert shown == ["todo", "search_tools"], shown
assert "rich_py" in deferred and "web_fetch" in deferred, deferred
for d in defs:
    exact(ToolParam, d, "anthropic discovery definition %s" % d["name"])
(turn,) = disc["results"]
exact(MessageParam, turn, "anthropic discovery results")
refs = [b for r in turn["content"] for b in r["content"]]
assert refs == [{"type": "tool_reference", "tool_name": "rich_py"},
                {"type": "tool_reference", "tool_name": "web_fetch"}], refs
ok("discovery anthropic deferred definitions and tool_reference results")

disc = data["gemini"]["discovery"]
for strict in ("false", "true"):
    (tool,) = disc["definitions"][strict]
    t = genai.Tool.model_validate(tool)
    assert [f.name for f in t.function_declarations] == ["todo", "search_tools"], t
genai.Content.model_validate(disc["results"][0])
ok("discovery gemini")
