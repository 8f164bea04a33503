#!/usr/bin/env python3
"""Recorder bug: drops an event whose type and ts it has already stored, as duplicates
(a retried write, it assumes). ts is a wall clock in milliseconds: two events of one type
written in the same millisecond are two events, and the second is lost."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from recorder import RecordingReader, main


class Broken(RecordingReader):
    def __init__(self, out):
        super().__init__(out)
        self.seen = set()

    def on_event(self, line, event, tag):
        key = (str(event.get("type")), event.get("ts"))
        if event.get("ts") is not None and key in self.seen:
            return
        self.seen.add(key)
        super().on_event(line, event, tag)


if __name__ == "__main__":
    main(Broken)
