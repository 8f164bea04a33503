#!/usr/bin/env python3
"""Breaks rule 3: a line with a missing or non-string type is an error."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main


class BrokenReader(Reader):
    def type_of(self, event):
        if not isinstance(event.get("type"), str):
            raise Rejected("event has no string type")
        return super().type_of(event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
