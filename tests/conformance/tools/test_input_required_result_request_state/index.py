def execute(tool_call_id, params, signal, on_update, ctx):
    r = ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    ).result()
    ok = r.get("action") == "accept" and (r.get("content") or {}).get("ok") is True
    return "state-ok: confirmed" if ok else f"state-ok: not confirmed ({r.get('action')})"
