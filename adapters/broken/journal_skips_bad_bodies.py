#!/usr/bin/env python3
"""Journal reader bug: a recognized event that does not fit is skipped, not an error."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from journal_reader import JournalReader, main


class Broken(JournalReader):
    def misfit(self, tag, entry):
        problem = super().misfit(tag, entry)
        if problem:
            self.known -= 1  # pretend it was never there
        return None


if __name__ == "__main__":
    main(Broken)
