#!/usr/bin/env python3
"""Recorder bug: stores events ordered by ts (a table keyed on time), not as they arrived."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from recorder import RecordingReader, main


class Broken(RecordingReader):
    def __init__(self, out):
        super().__init__(out)
        self.held = []

    def on_event(self, line, event, tag):
        ts = event.get("ts")
        self.held.append((ts if isinstance(ts, int) else 0, self.line_text(event)))

    def finish(self):
        out = super().finish()
        for _, text in sorted(self.held, key=lambda pair: pair[0]):
            self.out.write(text + "\n")
        self.held = []
        return out


if __name__ == "__main__":
    main(Broken)
