#!/usr/bin/env python3
"""Breaks rule 3: fails the stream on a type it does not recognize."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main


class BrokenReader(Reader):
    def on_unknown(self, line, event):
        if not isinstance(event.get("type"), str):
            return super().on_unknown(line, event)
        raise Rejected(f"unknown event type {event.get('type')!r}")


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
