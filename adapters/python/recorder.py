#!/usr/bin/env python3
"""A conforming stella recorder: reads a stream, writes what it keeps as NDJSON.

The recording goes to stdout, or to the file named by ``--out PATH`` (the kit
passes ``--out {record}``).  Every real event is written whole, unknown ones
included, in the order it arrived; blank lines and a torn final line are
dropped.  Keys are re-serialized sorted and spaced, on purpose: key order and
whitespace are not part of the contract, and the kit compares parsed values.
A stream that breaks the rules (a corrupt middle line, a known event with a bad
body) stops the recording: exit 1 with the reason on stderr.

    stella run --output-format stream-json "..." | recorder.py > run.jsonl
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import NAME, Reader, physical_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class RecordingReader(Reader):
    def __init__(self, out: Any) -> None:
        super().__init__()
        self.out = out
        self.content = b""

    def push(self, line: int, content: bytes, terminated: bool = True) -> list[dict[str, Any]]:
        self.content = content  # the line as it came, for an event JSON cannot write again
        return super().push(line, content, terminated)

    def on_event(self, line: int, event: dict[str, Any], tag: str | None) -> None:
        self.out.write(self.line_text(event) + "\n")
        self.out.flush()

    def line_text(self, event: dict[str, Any]) -> str:
        """The event as one line of JSON: re-serialized, or as it came when it holds a
        number beyond a double (``1e400`` parses as ``inf``, which JSON cannot write: the
        original text is the event whole)."""
        try:
            # ASCII escapes: a lone surrogate (legal as a JSON escape) has no UTF-8
            # encoding, and the escaped form parses back to the very same value
            return json.dumps(event, sort_keys=True, allow_nan=False)
        except ValueError:
            return self.content.strip(b" \t\r\n").decode("utf-8")


def record(stream: Any, out: Any, reader_class: type[RecordingReader] = RecordingReader) -> int:
    reader = reader_class(out)
    for number, content, terminated in physical_lines(stream):
        reader.push(number, content, terminated)
        if reader.rejected:
            break
    reader.finish()
    if reader.rejected:
        line, reason = reader.rejected
        sys.stderr.write(f"{NAME} recorder: line {line}: {reason}\n")
        return 1
    return 0


def main(reader_class: type[RecordingReader] = RecordingReader) -> None:
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--out":
        with open(args[1], "w", encoding="utf-8") as out:
            sys.exit(record(sys.stdin.buffer, out, reader_class))
    if args:
        sys.stderr.write("usage: recorder.py [--out PATH] < stream.jsonl\n")
        sys.exit(2)
    sys.exit(record(sys.stdin.buffer, sys.stdout, reader_class))


if __name__ == "__main__":
    main()
