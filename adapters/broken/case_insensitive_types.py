#!/usr/bin/env python3
"""Breaks rule 2: matches type names ignoring case and spaces (Text is read as text)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def type_of(self, event):
        raw = event.get("type")
        if isinstance(raw, str):
            event = {**event, "type": raw.strip().lower()}
        return super().type_of(event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
