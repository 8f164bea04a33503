#!/usr/bin/env python3
"""Write a valid trace journal of about N MiB to stdout, generated as it goes.

journal_flood.py MIB

A session of turns, each assembling a prompt of two frames (one frame set per turn:
the deterministic-composition check keeps one key per set), requesting, running and
resolving one call, and performing one side effect: every check has something to see.
"""

import json
import os
import sys

mib = int(sys.argv[1])
seq = 0


def entry(event, **fields):
    global seq
    seq += 1
    doc = {"seq": seq, "at": "2026-11-01T10:00:01Z", "session": "s", "event": event}
    doc.update(fields)
    return json.dumps(doc, separators=(",", ":")) + "\n"


def frame(turn, n):
    return {
        "frame": {"provider_id": "repo", "frame_id": f"f{turn}-{n}", "content_digest": "d"},
        "token_cost": 10,
        "citation_label": f"src/app.py L{n}",
        "representation": "inline",
    }


out = [
    entry(
        "session_start",
        agent="a",
        harness="h",
        model="m",
        trace_format="contextgraph-trace/0.1-sketch",
    )
]
written, turn = 0, 0
while written < mib * 1024 * 1024:
    for _ in range(200):
        turn += 1
        call = f"c{turn}"
        out += [
            entry("turn_start", turn=turn),
            entry(
                "prompt_assembled",
                turn=turn,
                budget_tokens=100,
                declared_total_tokens=20,
                composition_digest=f"sha256:{turn}",
                frames=[frame(turn, 1), frame(turn, 2)],
            ),
            entry("model_response", turn=turn, tool_calls=[call]),
            entry("tool_call", turn=turn, call_id=call, tool="read_file"),
            entry("side_effect", turn=turn, effect_id=f"e{turn}", kind="file_write", call_id=call),
            entry("tool_result", turn=turn, call_id=call, status="ok"),
            entry("turn_end", turn=turn),
        ]
    data = "".join(out).encode()
    out = []
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]
    written += len(data)
sys.stdout.write(entry("session_end", outcome="completed"))
