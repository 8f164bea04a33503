#!/usr/bin/env python3
"""Dashboard bug: waits for the archived `complete` event to call the run finished."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def on_unknown(self, line, event):
        super().on_unknown(line, event)
        if event.get("type") == "complete":
            self.run_complete = True

    def _fold(self, tag, event):
        super()._fold(tag, event)
        if tag == "run_complete":
            self.run_complete = False  # "not done until complete arrives"


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
