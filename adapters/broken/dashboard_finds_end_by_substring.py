#!/usr/bin/env python3
"""Dashboard bug: decides the run ended by looking for the bytes "type":"run_complete" in a
line, not at the type field. A tool input holding {"type":"run_complete"} ends the run too
early, and a real run_complete written "type": "run_complete" (a space) never ends it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main

MARKER = b'"type":"run_complete"'


class BrokenReader(Reader):
    def push(self, line, content, terminated=True):
        out = super().push(line, content, terminated)
        if not self.rejected and MARKER in content:
            self.run_complete = True
        return out

    def _fold(self, tag, event):
        ended = self.run_complete
        super()._fold(tag, event)
        self.run_complete = ended  # only the bytes decide


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
