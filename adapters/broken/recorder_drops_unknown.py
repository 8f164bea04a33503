#!/usr/bin/env python3
"""Recorder bug: stores only the events it understands, losing unrecognized ones."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from recorder import RecordingReader, main


class Broken(RecordingReader):
    def on_event(self, line, event, tag):
        if tag is not None:
            super().on_event(line, event, tag)


if __name__ == "__main__":
    main(Broken)
