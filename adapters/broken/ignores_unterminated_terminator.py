#!/usr/bin/env python3
"""Breaks rule 6's content: sees a complete last line without a newline, but treats it as
still being written and never acts on it, so a final run_complete (or text) is ignored."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    terminated = True

    def push(self, line, content, terminated=True):
        self.terminated = terminated
        return super().push(line, content, terminated)

    def _fold(self, tag, event):
        if self.terminated:
            super()._fold(tag, event)
        else:
            self.known_events += 1  # acknowledged, "acted on when its newline arrives"


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
