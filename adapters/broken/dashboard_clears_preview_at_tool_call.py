#!/usr/bin/env python3
"""Dashboard pitfall: clears the streamed preview when a tool call starts.

A chat panel that treats a tool call as the end of the model's message ("the assistant
is using a tool now") empties its streaming bubble at ``tool_start``.  But a preview is
replaced by the ``text`` that follows it, whenever that comes, and by nothing else: the
deltas streamed before a tool call are still the run's preview until a text replaces
them (and when the run ends with none, they are what was said).  This dashboard shows
only the deltas after the last tool call.  Otherwise the conforming Python dashboard.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def _fold(self, tag, event):
        if tag == "tool_start":
            self.preview.clear()
        super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader
    profiles = ("dashboard",)


if __name__ == "__main__":
    main(Broken)
