#!/usr/bin/env python3
"""Breaks rule 6 without line reports: reads the whole text, drops a last line that has no
trailing newline.

The pattern of ``text.split("\\n")[:-1]`` ("the last piece is the empty string after the
final newline"), which throws away a complete final event when the newline is missing.
It reports only a summary (its hello claims ``summary_only``), so only the summaries can
show the lost line: its final text and terminator.
"""

import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, main


class Broken(Adapter):
    claims = {"summary_only": True}  # noqa: RUF012 - read-only
    profiles = ("reader",)

    def read(self, stream, emit):
        whole = stream.read()
        kept = b"".join(line + b"\n" for line in whole.split(b"\n")[:-1])  # the bug
        return super().read(io.BytesIO(kept), lambda message: None)


if __name__ == "__main__":
    main(Broken)
