#!/usr/bin/env python3
"""A client modelled on stella's own stream reader, with exactly its two real bugs.

What stella's reader does, from its source at the wire schema's commit: it reads
the whole input as UTF-8 before splitting, splits on ``\\n`` and trims Unicode
whitespace (a byte order mark is none: line 1 is then not JSON), parses strict JSON
(serde_json) into a value first (a key written twice: the last one wins), rejects
non-objects, a missing or non-string ``type``, a scope-less ``stage`` and a field beside
its legacy alias, reads a struct written as an array and a unit variant written as a
one-key map as serde does, ignores ``ts`` (``null`` too), and drops the last non-blank
line whenever it fails.  Every one of
those choices is a registered reading of the contract (docs/contract-readings.md)
and passes.  Two are bugs against the contract, and the kit fails them:

1. a final line cut inside a multi-byte UTF-8 character makes the whole input
   invalid UTF-8, so the whole stream is rejected (rule 6 says tolerate it);
2. a complete final line that fails — not JSON, not an object, no ``type``, a known
   type with a bad body — is dropped silently instead of rejected (rule 4 says fail
   loudly).

This adapter reads line by line (so it can be graded in lockstep) and gives the
verdicts reading the whole input first would give: any line that is not UTF-8
rejects the stream; a line that fails is held until a later non-blank line shows
it was not the last.  adapters/broken/targets.json lists the checks it fails.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from reading_b_client import NonObject, ReaderB
from stella_reader import Adapter, Reader, Rejected, main

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class StellaLikeReader(ReaderB):
    def push(self, line: int, content: bytes, terminated: bool = True) -> list[dict[str, Any]]:
        if self.rejected:
            return []
        try:
            content.decode("utf-8")
        except UnicodeDecodeError as exc:  # bug 1: the whole input must be UTF-8
            self.pending = None
            return self._reject(line, f"stream is not UTF-8 (byte {exc.start} of line {line})")
        out = Reader.push(self, line, self.trim(content), terminated)
        if self.rejected and self.rejected[0] == line:
            # bug 2: a failing line is dropped when it turns out to be the last non-blank one
            _, reason = self.rejected
            self.rejected = None
            self.pending = (line, reason)
            return [m for m in out if m.get("line") != line] + [{"kind": "pending", "line": line}]
        return out

    def parse(self, content: bytes) -> Any:
        value = super().parse(content)
        if isinstance(value, NonObject):
            raise Rejected("the line is JSON but not an object")
        self.duplicates = False  # parsed into a serde_json Value first: the last key wins
        return value

    def misfit(self, tag: str, event: dict[str, Any]) -> str | None:
        if "ts" in event and event["ts"] is None:  # ts is ignored, a null one too
            event = {k: v for k, v in event.items() if k != "ts"}
        return super().misfit(tag, event)

    def normalize(self, tag: str, event: dict[str, Any]) -> dict[str, Any]:
        return super().normalize(tag, serde_forms(tag, event))


#: The structs of the kit's default vocabulary, by the field that holds one: their fields
#: in declaration order (serde reads a struct from an array of them, in that order).
STRUCTS = {("tool_start", "call"): ("call_id", "name", "input")}
#: The arms of a tool result's output, each a struct (read from an array as well).
ARMS = {"ok": ("content",), "error": ("message",)}
#: The enums of unit variants, by the field that holds one (serde reads {"run": null}).
UNIT_ENUMS = {("stage", "scope"), ("budget_tick", "mode"), ("file_change", "kind")}


def serde_forms(tag: str, event: dict[str, Any]) -> dict[str, Any]:
    """The event as serde reads it: a struct written as an array is the object of its
    fields in declaration order, a unit variant written as a one-key map is its name."""
    out = dict(event)
    for (owner, name), fields in STRUCTS.items():
        value = out.get(name)
        if owner == tag and isinstance(value, list) and len(value) <= len(fields):
            out[name] = dict(zip(fields, value, strict=False))
    for owner, name in UNIT_ENUMS:
        value = out.get(name)
        if owner == tag and isinstance(value, dict) and len(value) == 1:
            ((variant, inner),) = value.items()
            if inner is None:
                out[name] = variant
    output = out.get("output")
    if tag == "tool_result" and isinstance(output, dict) and len(output) == 1:
        ((arm, inner),) = output.items()
        if arm in ARMS and isinstance(inner, list) and len(inner) <= len(ARMS[arm]):
            out["output"] = {arm: dict(zip(ARMS[arm], inner, strict=False))}
    return out


class StellaLike(Adapter):
    reader_class = StellaLikeReader


if __name__ == "__main__":
    main(StellaLike)
