#!/usr/bin/env python3
"""Recorder bug: re-serializes known events from the fields it knows, dropping the rest."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from recorder import RecordingReader, main
from stella_reader import OPTIONAL, REQUIRED


class Broken(RecordingReader):
    def on_event(self, line, event, tag):
        if tag is not None:
            keep = {"type", "ts", *REQUIRED[tag], *OPTIONAL.get(tag, {})}
            event = {k: v for k, v in event.items() if k in keep}
        super().on_event(line, event, tag)


if __name__ == "__main__":
    main(Broken)
