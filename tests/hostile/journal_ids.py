"""A journal of many call ids in few lines, for tests of what ``trace check`` keeps on disk.

Each id is new, so the turn-loop check remembers every one: 25,000 outgrow the checks'
memory budget (their tables move to a file in a temporary folder), 300,000 the on-disk
table's page cache (the file is written).
"""

from __future__ import annotations

import json

AT = {"at": "2026-11-01T10:00:01Z", "session": "s"}


def many_ids_lines(lines: int, per_line: int = 1000) -> list[bytes]:
    """``session_start``, then ``lines`` model responses of ``per_line`` new call ids each."""
    out = [{"seq": 1, **AT, "event": "session_start", "agent": "a", "harness": "h"}]
    for n in range(lines):
        calls = [f"call-{n}-{i}" for i in range(per_line)]
        out.append({"seq": n + 2, **AT, "event": "model_response", "tool_calls": calls})
    return [(json.dumps(line) + "\n").encode() for line in out]
