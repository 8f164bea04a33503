#!/usr/bin/env python3
"""A conforming reader of the trace journal (contextgraph-trace), with a stella-conform adapter.

The journal follows the stream's rules: an event tag it does not recognize is
skipped and counted; a recognized event whose envelope or body does not fit is
an error naming the line; unknown fields are ignored; blank lines are nothing;
the torn last line of a crashed writer is dropped; any other line that does
not parse is an error.  Standard library only.

Modes as in ``stella_reader.py``: ``exit`` (journal on stdin or as the first
argument; exit 0 / 1), ``report`` and ``persistent`` (a hello, then one
summary per journal with ``known_events`` and ``unrecognized_events``).
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any

NAME = "stella-journal-reader-python"
PROTOCOL = 1
U64 = 2**64 - 1
U32 = 2**32 - 1


def _int(limit: int) -> Any:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= limit


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _frame_id(v: Any) -> bool:
    return isinstance(v, dict) and all(
        isinstance(v.get(k), str) for k in ("provider_id", "frame_id", "content_digest")
    )


def _rendered(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _frame_id(v.get("frame"))
        and _int(U64)(v.get("token_cost"))
        and isinstance(v.get("citation_label"), str)
        and ("representation" not in v or isinstance(v["representation"], str))
    )


ENVELOPE = {"seq": lambda v: _int(U64)(v) and v >= 1, "at": lambda v: _str(v) and v != "",
            "session": lambda v: _str(v) and v != ""}  # fmt: skip
# (required fields, optional fields) per recognized event
EVENTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "session_start": (
        {"agent": _str, "harness": _str},
        {"model": _opt_str, "trace_format": _opt_str},
    ),
    "session_end": ({"outcome": _str}, {}),
    "resume": ({"last_seq_seen": _int(U64)}, {}),
    "turn_start": ({}, {}),
    "turn_end": ({}, {}),
    "prompt_assembled": (
        {
            "budget_tokens": _int(U32),
            "declared_total_tokens": _int(U64),
            "frames": lambda v: isinstance(v, list) and all(_rendered(f) for f in v),
        },
        {"composition_digest": _opt_str},
    ),
    "model_response": ({"tool_calls": lambda v: isinstance(v, list) and all(map(_str, v))}, {}),
    "tool_call": ({"call_id": _str, "tool": _str}, {}),
    "tool_result": ({"call_id": _str, "status": lambda v: v in ("ok", "error", "rejected")}, {}),
    "verify_observed": (
        {
            "frame": _frame_id,
            "verdict": lambda v: (
                isinstance(v, dict) and v.get("status") in ("valid", "stale", "gone")
            ),
        },
        {},
    ),
    "side_effect": ({"effect_id": _str, "kind": _str}, {"call_id": _opt_str}),
}


class JournalReader:
    """Override a method to break a rule."""

    def __init__(self) -> None:
        self.known = 0
        self.unknown = 0
        self.rejected: tuple[int, str] | None = None

    def parse(self, content: bytes) -> Any:
        return json.loads(content.decode("utf-8"))

    def misfit(self, tag: str, entry: dict[str, Any]) -> str | None:
        required, optional = EVENTS[tag]
        for name, ok in {**ENVELOPE, **required}.items():
            if name not in entry or not ok(entry[name]):
                return f"{tag}: {name} is missing or malformed"
        if "turn" in entry and not _int(U64)(entry["turn"]):
            return f"{tag}: turn is malformed"
        for name, ok in optional.items():
            if name in entry and not ok(entry[name]):
                return f"{tag}: {name} is malformed"
        return None

    def on_unknown(self, line: int, entry: dict[str, Any]) -> None:
        self.unknown += 1

    def on_corrupt(self, line: int, reason: str, last: bool) -> None:
        if not last:
            self.rejected = (line, f"corrupt line: {reason}")

    def read(self, data: bytes) -> None:
        raw = data.split(b"\n")
        if raw and raw[-1] == b"":
            raw.pop()
        nonblank = [i for i, r in enumerate(raw) if r.strip(b" \t\r\n")]
        last = nonblank[-1] if nonblank else -1
        for index in nonblank:
            number = index + 1
            try:
                entry = self.parse(raw[index])
            except (ValueError, UnicodeDecodeError) as exc:
                self.on_corrupt(number, str(exc), index == last)
                if self.rejected:
                    return
                continue
            if not isinstance(entry, dict):
                self.rejected = (number, "not an object")
                return
            tag = entry.get("event")
            if not isinstance(tag, str) or tag not in EVENTS:
                self.on_unknown(number, entry)
                continue
            problem = self.misfit(tag, entry)
            if problem:
                self.rejected = (number, problem)
                return
            self.known += 1

    def summary(self) -> dict[str, Any]:
        return {
            "kind": "summary",
            "verdict": "reject" if self.rejected else "accept",
            "rejected_line": self.rejected[0] if self.rejected else None,
            "known_events": self.known,
            "unrecognized_events": self.unknown,
        }


def main(reader_class: type[JournalReader] = JournalReader) -> None:
    mode = os.environ.get("STELLA_CONFORM_MODE", "exit")

    def emit(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    hello = {"kind": "hello", "protocol": PROTOCOL, "profiles": ["trace"],
             "client": {"name": NAME, "version": "1.0", "language": "python"}}  # fmt: skip
    if mode == "persistent":
        emit(hello)
        for raw in sys.stdin.buffer:
            message = json.loads(raw)
            if message.get("kind") == "shutdown":
                break
            reader = reader_class()
            import base64  # persistent mode only

            reader.read(base64.b64decode(message["stream"]))
            emit({**reader.summary(), "id": message["id"]})
        sys.exit(0)
    if mode == "report":
        emit(hello)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "rb") as fh:
            data = fh.read()
    else:
        data = sys.stdin.buffer.read()
    reader = reader_class()
    reader.read(data)
    if mode == "report":
        emit(reader.summary())
    elif reader.rejected:
        sys.stderr.write(f"{NAME}: line {reader.rejected[0]}: {reader.rejected[1]}\n")
    sys.exit(1 if reader.rejected else 0)


if __name__ == "__main__":
    main()
