#!/usr/bin/env python3
"""Journal reader bug: an event tag from a newer trace format stops the reader."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from journal_reader import JournalReader, main


class Broken(JournalReader):
    def on_unknown(self, line, entry):
        self.rejected = (line, f"unknown event {entry.get('event')!r}")


if __name__ == "__main__":
    main(Broken)
