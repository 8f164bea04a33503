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

It models stella over the kit's own vocabulary (the types of ``stella_reader.py``): what
a wire schema says only in its descriptions (old names, values read as ``other``) is no
part of it, as that vocabulary names none.

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


class StellaLike(Adapter):
    reader_class = StellaLikeReader


if __name__ == "__main__":
    main(StellaLike)
