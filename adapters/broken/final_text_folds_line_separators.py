#!/usr/bin/env python3
"""Breaks rule 1 in what it shows: folds U+2028, U+2029 and U+0085 in the final text into
``\\n``.

The pattern of a client that renders the answer with ``"\\n".join(text.splitlines())`` (or
``str.replace`` for the "exotic" separators): the stream is read correctly, line by line,
but the final text it reports is no longer the text stella wrote.  It reports only
``final_text`` (its hello claims so), the client a verdict-only check could never fail.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main

SEPARATORS = ("\u2028", "\u2029", "\x85")


class BrokenReader(Reader):
    def summary(self):
        out = super().summary()
        text = out["final_text"]
        if isinstance(text, str):
            for separator in SEPARATORS:
                text = text.replace(separator, "\n")
            out["final_text"] = text
        return out


class Broken(Adapter):
    reader_class = BrokenReader
    profiles = ("reader",)
    claims = {"computes": ["final_text"]}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Broken)
