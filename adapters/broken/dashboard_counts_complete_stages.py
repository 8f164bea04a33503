#!/usr/bin/env python3
"""Dashboard bug: counts a turn at the stage named `complete`, not at turn_complete.

The engine's stage list ends with `complete`, so the name invites it; but stages are
conditional (a turn emits a subsequence), and the turn boundary is the turn_complete
event.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def _fold(self, tag, event):
        before = self.turns_completed
        super()._fold(tag, event)
        self.turns_completed = before
        if tag == "stage" and event["name"] == "complete":
            self.turns_completed += 1


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
