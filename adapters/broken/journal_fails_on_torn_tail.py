#!/usr/bin/env python3
"""Journal reader bug: the torn last line of a crashed harness is an error."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from journal_reader import JournalReader, main


class Broken(JournalReader):
    def on_corrupt(self, line, reason, last):
        self.rejected = (line, f"corrupt line: {reason}")


if __name__ == "__main__":
    main(Broken)
