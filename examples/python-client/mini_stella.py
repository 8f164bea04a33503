"""mini_stella: a tiny "SDK" for stella streams, built on the reference reader.

It stands in for a client author's own library: ``read(lines, report)`` is the
in-process hook stella-conform's pytest plugin grades, and ``python3 mini_stella.py``
is the same parser as a command (exit 0 accept, 1 reject) for subprocess grading.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "adapters", "python"))

from stella_reader import Reader  # noqa: E402


class StreamError(ValueError):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line


def read(lines, report=None):
    """Read physical lines (bytes); return a summary dict, or raise StreamError."""
    reader = Reader()

    def tell(messages):
        for m in messages:
            if report is None:
                continue
            if m["kind"] == "pending":
                report.defer(m["line"])
            else:
                report.line(m["line"], m["outcome"], type=m.get("type"))

    for number, raw in enumerate(lines, 1):
        terminated = raw.endswith(b"\n")
        tell(reader.push(number, raw[:-1] if terminated else raw, terminated))
        if reader.rejected:
            raise StreamError(*reader.rejected)
    tell(reader.finish())
    summary = reader.summary()
    summary.pop("kind")
    return summary


if __name__ == "__main__":
    try:
        read(sys.stdin.buffer)
    except StreamError as exc:
        sys.stderr.write(f"mini_stella: {exc}\n")
        sys.exit(1)
