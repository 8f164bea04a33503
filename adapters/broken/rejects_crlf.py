#!/usr/bin/env python3
"""Breaks rule 1 on valid input: a line ending in CR (a CRLF stream) is taken as corrupt."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def parse(self, content):
        if content.endswith(b"\r"):
            raise ValueError("unexpected character after the object")
        return super().parse(content)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
