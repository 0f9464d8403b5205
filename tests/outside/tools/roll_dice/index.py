import os
import random


def execute(tool_call_id, params, signal, on_update):
    sides = int(params["sides"])
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "faces.txt")) as f:
        label = f.read().strip()
    n = random.randint(1, sides)
    return {"content": [{"type": "text", "text": f"rolled {n} of {sides} {label} (python)"}]}
