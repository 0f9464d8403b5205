# Echoes the params it received as its result.
import json


def execute(tool_call_id, params, signal, on_update):
    return {"content": [{"type": "text", "text": json.dumps(params)}], "details": {"report": "ok"}}
