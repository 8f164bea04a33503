#!/usr/bin/env python3
"""Breaks the alias guarantee: knows only today's field names (text carrying delta fails)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def normalize(self, tag, event):
        return event  # no aliases: {"type": "text", "delta": ...} lacks text


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
