#!/usr/bin/env python3
"""Dashboard bug: one stage list for both scopes (reported under turn)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def _fold(self, tag, event):
        if tag == "stage":
            event = {**event, "scope": "turn"}
        super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
