#!/usr/bin/env python3
"""A conforming client that recognizes only `text`, `run_complete` and `error`, and says so.

Many real clients read a handful of the types stella writes: this one keeps the final
text and notices the end of the run (on `run_complete`, or on `error` for a failed run),
and treats every other type as unrecognized (rule 3), bad body or not.  Its hello claims
the three types it knows and the summary fields it computes from them, so in report and
persistent modes the kit grades it on those; in exit mode, where there is no hello, tell
the kit:

    stella-conform run --knows text,run_complete,error -- python3 adapters/python/narrow_client.py

Graded as if it knew every type, it fails rule 4 on a bad `tool_result` body it never
reads: noise, which the claim removes.  Claiming to compute a field it cannot (stages,
without knowing `stage`) would be a failure, not noise: the claim says what it shows.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main

KNOWS = ("error", "run_complete", "text")
#: What it shows: the texts, the end of the run, and what it did not recognize.
COMPUTES = (
    "rejected_line",
    "known_events",
    "unrecognized_events",
    "unrecognized_types",
    "final_text",
    "texts",
    "terminator",
    "elapsed_ms",
)


class NarrowReader(Reader):
    known_types = frozenset(KNOWS)


class Narrow(Adapter):
    reader_class = NarrowReader
    claims = {"knows": list(KNOWS), "computes": list(COMPUTES)}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Narrow)
