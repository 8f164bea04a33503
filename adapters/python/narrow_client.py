#!/usr/bin/env python3
"""A conforming client that recognizes only `text` and `run_complete`, and says so.

Many real clients read a handful of the types stella writes: this one keeps the final
text and notices the end of the run, and treats every other type as unrecognized (rule
3), bad body or not.  Its hello claims ``"knows": ["run_complete", "text"]``, so in
report and persistent modes the kit grades it on those two types; in exit mode, where
there is no hello, tell the kit:

    stella-conform run --knows text,run_complete -- python3 adapters/python/narrow_client.py

Graded as if it knew every type, it fails rule 4 on a bad `tool_result` body it never
reads: noise, which the claim removes.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main

KNOWS = ("run_complete", "text")


class NarrowReader(Reader):
    known_types = frozenset(KNOWS)


class Narrow(Adapter):
    reader_class = NarrowReader
    claims = {"knows": list(KNOWS)}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Narrow)
