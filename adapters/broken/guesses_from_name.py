#!/usr/bin/env python3
"""Breaks rule 3: guesses an unknown type from its name (text_v2 is read as text)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def type_of(self, event):
        tag = super().type_of(event)
        raw = event.get("type")
        if tag is None and isinstance(raw, str):
            for known in sorted(self.known_types, key=len, reverse=True):
                if raw.startswith(known + "_") and self.misfit(known, event) is None:
                    return known  # "surely text_v2 is just a newer text"
        return tag


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
