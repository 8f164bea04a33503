#!/usr/bin/env python3
"""Breaks rule 1: a 64 KiB line buffer; longer lines are an error."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main


class BrokenReader(Reader):
    def parse(self, content):
        if len(content) > 64 * 1024:
            raise Rejected("line longer than 65536 bytes")
        return super().parse(content)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
