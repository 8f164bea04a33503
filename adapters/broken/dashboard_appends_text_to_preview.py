#!/usr/bin/env python3
"""Dashboard bug: shows the text event *after* the streamed preview instead of replacing it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def _fold(self, tag, event):
        if tag == "text" and self.preview:
            event = {**event, "text": "".join(self.preview) + event["text"]}
        super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
