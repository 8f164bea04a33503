#!/usr/bin/env python3
"""Dashboard bug: the version-gap report keeps only the last unrecognized type it saw."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def on_unknown(self, line, event):
        self.unrecognized_events += 1
        tag = event.get("type")
        if isinstance(tag, str):
            self.unrecognized_types = [tag]


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
