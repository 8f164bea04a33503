#!/usr/bin/env python3
"""Breaks the SHOULD of rule 4: rejects the right streams but names the wrong line (0-based)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def reject_line_number(self, line):
        return max(1, line - 1) if line > 1 else line + 1


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
