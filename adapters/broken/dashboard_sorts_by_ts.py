#!/usr/bin/env python3
"""Dashboard bug: trusts ts for order, sorting the transcript by it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def __init__(self):
        super().__init__()
        self.stamped = []

    def _fold(self, tag, event):
        super()._fold(tag, event)
        if tag == "text":
            ts = event.get("ts")
            self.stamped.append((ts if isinstance(ts, int) else 0, event["text"]))
            self.texts = [text for _, text in sorted(self.stamped, key=lambda p: p[0])]


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
