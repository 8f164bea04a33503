#!/usr/bin/env python3
"""Python pitfall: each step's usage kept in SQLite (``sqlite3``, the standard library's
store), its counts in INTEGER columns.  An SQLite INTEGER is a signed 64-bit number:
binding a valid count above 2^63 - 1 raises ``OverflowError: Python int too large to
convert to SQLite INTEGER``, which this reader reports as the line's failure: a valid
stream rejected; and the
column takes ``-1`` as it takes any integer, so a count the schema refuses is stored
(the sign of a count is never looked at).  Otherwise the conforming Python reader."""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main

COUNTS = (
    "step", "input_tokens", "output_tokens", "cached_input_tokens", "duration_ms", "retries",
    "tool_calls",
)  # fmt: skip


class BrokenReader(Reader):
    def __init__(self):
        super().__init__()
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE TABLE usage ({', '.join(f'{c} INTEGER' for c in COUNTS)})")

    def misfit(self, tag, event):
        if tag != "step_usage":
            return super().misfit(tag, event)
        counts = [event.get(c) for c in COUNTS]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in counts):
            insert = f"INSERT INTO usage VALUES ({', '.join('?' * len(COUNTS))})"
            try:
                self.db.execute(insert, counts)
            except OverflowError as exc:
                return f"{tag}: {exc}"
            event = {k: abs(v) if k in COUNTS else v for k, v in event.items()}
        return super().misfit(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
