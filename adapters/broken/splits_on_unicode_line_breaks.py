#!/usr/bin/env python3
"""Breaks rule 1: splits lines with str.splitlines(), which also ends a line at U+2028,
U+2029, U+0085 (and VT, FF, FS, GS, RS). stella writes U+2028 raw inside strings, as JSON
allows, so an event is cut in two there."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, main, physical_lines


class Broken(Adapter):
    def lines(self, stream):
        number = 0
        for _, content, terminated in physical_lines(stream):
            text = content.decode("utf-8", "surrogateescape")
            pieces = text.splitlines() or [text]
            for index, piece in enumerate(pieces):
                number += 1
                last = index == len(pieces) - 1
                yield number, piece.encode("utf-8", "surrogateescape"), terminated or not last


if __name__ == "__main__":
    main(Broken)
