#!/usr/bin/env python3
"""Recorder bug: copies raw lines through, torn tail included, then appends its own end marker."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from recorder import RecordingReader, main


class Broken(RecordingReader):
    def push(self, line, content, terminated=True):
        out = super().push(line, content, terminated)
        if content.strip():
            self.out.write(content.decode("utf-8", "replace") + "\n")
        return out

    def on_event(self, line, event, tag):
        pass  # the raw line is already written

    def finish(self):
        out = super().finish()
        self.out.write(json.dumps({"type": "recording_end"}) + "\n")
        return out


if __name__ == "__main__":
    main(Broken)
