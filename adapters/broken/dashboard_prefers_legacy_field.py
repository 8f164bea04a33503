#!/usr/bin/env python3
"""Dashboard bug: reads the legacy field first.

An event carrying both spellings shows the wrong one.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def normalize(self, tag, event):
        legacy = {"text": "delta", "text_delta": "text"}.get(tag)
        if legacy and legacy in event:
            name = "text" if tag == "text" else "delta"
            event = {**event, name: event[legacy]}
        return super().normalize(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
