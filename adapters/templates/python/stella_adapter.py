#!/usr/bin/env python3
"""A stella-conform adapter (report mode) around a trivial stella reader.

Written by `stella-conform init python`.  Grade it as it is, then make it yours:

    stella-conform smoke --mode report -- python3 stella_adapter.py
    stella-conform run --mode report -- python3 stella_adapter.py

The lines marked `EDIT` are the ones to change: call your own parser where the
trivial reader is called, and report what it did.  Everything else speaks the
adapter protocol (docs/adapter-protocol.md) and can stay as it is.
Standard library only, Python 3.9 or newer.
"""

import json
import sys

CLIENT = {"name": "my-stella-client", "version": "0.1", "language": "python"}  # EDIT: yours


def main():
    emit(
        {
            "kind": "hello",
            "protocol": 1,
            "client": CLIENT,
            "profiles": ["reader"],
            "modes": ["report"],
            # the types your parser recognizes (today's stella's, or an older one's too): the
            # kit grades it on streams of any stella by what it knows, not by what that wrote
            "knows": sorted(KNOWN),
        }
    )
    reader = TrivialReader()  # EDIT: your parser, fed one physical line at a time
    lines = iter(sys.stdin.buffer.readline, b"")  # each line as soon as it arrives
    for number, raw in enumerate(lines, 1):
        for observation in reader.push(number, raw):  # EDIT: hand the line to your parser
            emit(observation)
        if reader.rejected:
            break
    for observation in reader.finish():  # EDIT: tell your parser the stream ended
        emit(observation)
    emit(reader.summary())  # EDIT: what your parser read (verdict, counts, final text)
    return 1 if reader.rejected else 0


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
    def __init__(self):
        self.pending = None  # (line, reason): a corrupt line, the torn last one if nothing follows
        self.rejected = None  # (line, reason)
        self.known = self.unknown = 0
        self.unknown_types = set()
        self.texts = []
        self.turns = 0
        self.last_known = None
        self.completed = False

    def push(self, line, raw):
        """Observations for one physical line (bytes, with its newline if it had one)."""
        content = raw[:-1] if raw.endswith(b"\n") else raw
        if not content.strip(b" \t\r\n"):
            return [{"kind": "line", "line": line, "outcome": "blank"}]
        if self.pending:  # rule 6: a corrupt line with more after it is an error
            return self.reject(self.pending[0], "corrupt line: " + self.pending[1])
        try:  # rule 1: each line is one JSON document
            event = json.loads(content.decode("utf-8"), parse_constant=no_constants)
        except (ValueError, RecursionError) as exc:
            self.pending = (line, str(exc))
            return [{"kind": "pending", "line": line}]
        if not isinstance(event, dict):
            return self.reject(line, "line is JSON but not an object")
        tag = event.get("type")  # rule 2: the type string alone decides
        known = isinstance(tag, str) and tag in KNOWN
        if not known or (tag in ARCHIVED and ARCHIVED[tag] not in event):
            self.unknown += 1  # rule 3: unrecognized events are counted, nothing more
            if isinstance(tag, str):
                self.unknown_types.add(tag)
            return [
                {
                    "kind": "line",
                    "line": line,
                    "outcome": "unknown",
                    "type": tag if isinstance(tag, str) else None,
                }
            ]
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
        return [{"kind": "line", "line": line, "outcome": "known", "type": tag}]

    def finish(self):
        if not self.pending or self.rejected:
            return []
        line, reason = self.pending  # rule 6: the cut-off final line is dropped
        return [{"kind": "line", "line": line, "outcome": "torn", "reason": reason}]

    def reject(self, line, reason):
        self.rejected = (line, reason)
        return [{"kind": "line", "line": line, "outcome": "reject", "reason": reason}]

    def summary(self):
        return {
            "kind": "summary",
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
