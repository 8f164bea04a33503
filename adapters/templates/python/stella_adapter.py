#!/usr/bin/env python3
"""A stella-conform adapter (report and persistent modes) around a trivial stella reader.

Written by `stella-conform init python`.  Grade it as it is, then make it yours:

    stella-conform smoke --mode report -- python3 stella_adapter.py
    stella-conform run -- python3 stella_adapter.py

The lines marked `EDIT` are the ones to change.  `read_stream` is handed the raw bytes of
one stella stream as a binary file: call your own parser on it there, as your program
calls it on stdin or on a pipe from stella, so that your parser's own line splitting,
decoding and buffering are what the kit grades; then tell `report` what it made of each
line and return what it read.  Everything else speaks the adapter protocol
(docs/adapter-protocol.md) and can stay as it is.  Standard library only, Python 3.9 or
newer.

An adapter grades your parser as it reads the bytes it is handed here.  Grade the program
your users run as well, unmodified, by its exit status:
`stella-conform run --mode exit -- your-cli ARGS` (the stream on its stdin).
"""

import base64
import binascii
import io
import json
import os
import sys

CLIENT = {"name": "my-stella-client", "version": "0.1", "language": "python"}  # EDIT: yours


def read_stream(stream, report):
    """Read one stella stream: `stream` is a binary file holding its raw bytes (stdin itself
    in report mode, a case's bytes in persistent mode).  For each physical line, call
    `report.line(number, outcome, type=..., reason=...)` as soon as your parser has read it
    (or `report.pending(number)` for a line that does not parse, until the next line tells
    whether it was the torn last one); return the summary (docs/adapter-protocol.md: the
    summary, field by field).  In report mode the kit writes line k+1 only after the answer
    for line k, so read one line at a time, never ahead."""
    return TrivialReader(report).read(stream)  # EDIT: your parser, reading `stream` itself


def main():
    emit(
        {
            "kind": "hello",
            "protocol": 1,
            "client": CLIENT,
            "profiles": ["reader"],
            "modes": ["report", "persistent"],
            # the types your parser recognizes (today's stella's, or an older one's too): the
            # kit grades it on streams of any stella by what it knows, not by what that wrote
            "knows": sorted(KNOWN),  # EDIT: the types yours knows
        }
    )
    if os.environ.get("STELLA_CONFORM_MODE") == "persistent":
        return serve_cases(sys.stdin.buffer)
    summary = read_stream(sys.stdin.buffer, Report())  # report mode: the stream is stdin
    emit({**summary, "kind": "summary"})
    return 1 if summary["verdict"] == "reject" else 0


def serve_cases(stdin):
    """Persistent mode: one case per stdin line, `{"kind":"case","id":..,"stream":<base64>}`,
    each answered with observations and a summary that carry its id."""
    for raw in iter(stdin.readline, b""):
        try:
            message = json.loads(raw)
            kind = message.get("kind")
        except (ValueError, AttributeError):
            continue  # not a message of this protocol: ignored
        if kind == "shutdown":
            break
        if kind != "case":
            continue
        try:
            stream = base64.b64decode(message["stream"], validate=True)
        except (KeyError, TypeError, binascii.Error):
            print("stella-adapter: a case without a base64 stream", file=sys.stderr)
            return 2
        report = Report(message.get("id"))
        summary = read_stream(io.BytesIO(stream), report)
        report.emit({**summary, "kind": "summary"})
    return 0


class Report:
    """What the parser made of each line, written to the kit at once (with the case's id in
    persistent mode)."""

    def __init__(self, case_id=None):
        self.case_id = case_id

    def line(self, number, outcome, type=None, reason=None):
        message = {"kind": "line", "line": number, "outcome": outcome}
        if outcome in ("known", "unknown"):
            message["type"] = type
        if reason is not None:
            message["reason"] = reason
        self.emit(message)

    def pending(self, number):
        self.emit({"kind": "pending", "line": number})

    def emit(self, message):
        emit(message if self.case_id is None else {**message, "id": self.case_id})


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # lockstep: the kit waits for each answer before the next line


# ---------------------------------------------------------------------------------------
# The trivial reader: the six rules of stella's stream contract, and nothing more.
# Replace it with your parser; keep what it reports.

U64, U32 = 2**64 - 1, 2**32 - 1


def uint(top):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= top


def string(v):
    return isinstance(v, str)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def boolean(v):
    return isinstance(v, bool)


def one_of(*names):
    return lambda v: isinstance(v, str) and v in names


def or_null(check):
    return lambda v: v is None or check(v)


def tool_call(v):
    return (
        isinstance(v, dict)
        and string(v.get("call_id"))
        and string(v.get("name"))
        and ("input" in v)
    )


def tool_output(v):
    ok, error = (v.get("ok"), v.get("error")) if isinstance(v, dict) else (None, None)
    return (isinstance(ok, dict) and string(ok.get("content"))) or (
        isinstance(error, dict) and string(error.get("message"))
    )


# Rule 4: each known type's required fields (first), then its optional ones.
KNOWN = {
    "stage": ({"name": string, "scope": one_of("turn", "run")}, {}),
    "text": ({"text": string}, {}),
    "text_delta": ({"delta": string}, {}),
    "reasoning": ({"delta": string}, {}),
    "tool_start": ({"call": tool_call}, {}),
    "tool_result": (
        {"call_id": string, "output": tool_output, "duration_ms": uint(U64)},
        {"speculated": boolean},
    ),
    "step_usage": (
        {
            "step": uint(U64),
            "model": string,
            "input_tokens": uint(U64),
            "output_tokens": uint(U64),
            "cached_input_tokens": uint(U64),
            "cost_usd": number,
            "duration_ms": uint(U64),
            "retries": uint(U32),
            "tool_calls": uint(U64),
        },
        {
            "provider": string,
            "reasoning_tokens": or_null(uint(U64)),
            "output_text": or_null(string),
            "complete": boolean,
        },
    ),
    "turn_complete": ({"model": string, "cost_usd": number}, {}),
    "run_complete": ({"model": string, "cost_usd": number}, {}),
    "error": ({"message": string, "retryable": boolean}, {}),
    "budget_tick": (
        {"spent_usd": number, "mode": one_of("off", "observed", "enforced")},
        {
            "limit_usd": or_null(number),
            "session_spent_usd": or_null(number),
            "session_limit_usd": or_null(number),
            "deadline_remaining_ms": or_null(uint(U64)),
        },
    ),
    "file_change": (
        {"path": string, "kind": one_of("read", "created", "modified", "deleted")},
        {"added": uint(U32), "removed": uint(U32), "diff": or_null(string)},
    ),
}
ALIASES = {"text": ("text", "delta"), "text_delta": ("delta", "text")}  # (name, legacy name)
ARCHIVED = {"stage": "scope"}  # a stage written before `scope` existed: read as unrecognized


def no_constants(name):
    raise ValueError(f"{name} is not JSON")


class TrivialReader:
    def __init__(self, report):
        self.report = report
        self.pending = None  # (line, reason): a corrupt line, the torn last one if nothing follows
        self.rejected = None  # (line, reason)
        self.known = self.unknown = 0
        self.unknown_types = set()
        self.texts = []
        self.turns = 0
        self.last_known = None
        self.completed = False

    def read(self, stream):
        """The whole stream, one physical line at a time as soon as it has arrived (split at
        LF only, on bytes: a CR or U+2028 inside a line is no line end); what it read."""
        for number, raw in enumerate(iter(stream.readline, b""), 1):
            self.push(number, raw)
            if self.rejected:
                break  # the first error ends the stream
        self.finish()
        return self.summary()

    def push(self, line, raw):
        """Read one physical line (bytes, with its newline if it had one)."""
        content = raw[:-1] if raw.endswith(b"\n") else raw
        if not content.strip(b" \t\r\n"):
            return self.report.line(line, "blank")
        if self.pending:  # rule 6: a corrupt line with more after it is an error
            return self.reject(self.pending[0], "corrupt line: " + self.pending[1])
        try:  # rule 1: each line is one JSON document
            event = json.loads(content.decode("utf-8"), parse_constant=no_constants)
        except (ValueError, RecursionError) as exc:
            self.pending = (line, str(exc))
            return self.report.pending(line)
        if not isinstance(event, dict):
            return self.reject(line, "line is JSON but not an object")
        tag = event.get("type")  # rule 2: the type string alone decides
        known = isinstance(tag, str) and tag in KNOWN
        if not known or (tag in ARCHIVED and ARCHIVED[tag] not in event):
            self.unknown += 1  # rule 3: unrecognized events are counted, nothing more
            if isinstance(tag, str):
                self.unknown_types.add(tag)
            return self.report.line(line, "unknown", type=tag if isinstance(tag, str) else None)
        name, legacy = ALIASES.get(tag, (None, None))
        if name and name not in event and legacy in event:
            event = {**event, name: event[legacy]}
        problem = misfit(tag, event)  # rule 4: a known type must fit; rule 5: extras ignored
        if problem:
            return self.reject(line, problem)
        self.known += 1
        self.last_known = tag
        if tag == "text":
            self.texts.append(event["text"])
        if tag == "turn_complete":
            self.turns += 1
        self.completed = self.completed or tag == "run_complete"
        return self.report.line(line, "known", type=tag)

    def finish(self):
        if self.pending and not self.rejected:
            line, reason = self.pending  # rule 6: the cut-off final line is dropped
            self.report.line(line, "torn", reason=reason)

    def reject(self, line, reason):
        self.rejected = (line, reason)
        self.report.line(line, "reject", reason=reason)

    def summary(self):
        return {
            "verdict": "reject" if self.rejected else "accept",
            "rejected_line": self.rejected[0] if self.rejected else None,
            "known_events": self.known,
            "unrecognized_events": self.unknown,
            "unrecognized_types": sorted(self.unknown_types),
            "final_text": self.texts[-1] if self.texts else None,
            "texts": self.texts,
            "turns_completed": self.turns,
            "terminator": "run_complete"
            if self.completed
            else ("error" if self.last_known == "error" else None),
        }


def misfit(tag, event):
    required, optional = KNOWN[tag]
    for field, fits in required.items():
        if field not in event:
            return f"{tag}: missing required field {field!r}"
        if not fits(event[field]):
            return f"{tag}: field {field!r} has the wrong shape"
    for field, fits in optional.items():
        if field in event and not fits(event[field]):
            return f"{tag}: field {field!r} has the wrong shape"
    if event.get("ts") is not None and not uint(U64)(event["ts"]):  # a null ts is no ts
        return f"{tag}: ts must be an integer >= 0"
    return None


if __name__ == "__main__":
    sys.exit(main())
