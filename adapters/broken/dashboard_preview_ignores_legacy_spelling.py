#!/usr/bin/env python3
"""Dashboard bug: a `text_delta` in its legacy spelling (`text`) is read, but left out of
the preview.

The pattern of a panel that checks the body with an alias-aware parser, then renders the
preview from the raw line's ``event["delta"]`` (``event.delta ?? ""`` in JavaScript): an
archived stream's live preview stays empty, while its final texts are right.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def normalize(self, tag, event):
        self.legacy = tag == "text_delta" and "delta" not in event
        return super().normalize(tag, event)

    def _fold(self, tag, event):
        if tag == "text_delta" and self.legacy:
            event = {**event, "delta": ""}  # the raw line's `delta`: absent
        super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
