#!/usr/bin/env python3
"""Journal reader bug: every line that does not parse is forgiven as if it were a torn tail."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from journal_reader import JournalReader, main


class Broken(JournalReader):
    def on_corrupt(self, line, reason, last):
        pass


if __name__ == "__main__":
    main(Broken)
