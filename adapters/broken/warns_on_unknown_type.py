#!/usr/bin/env python3
"""Breaks rule 3 quietly: prints a warning on stderr for every unknown type."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def on_unknown(self, line, event):
        super().on_unknown(line, event)
        sys.stderr.write(f"WARNING: unknown event type {event.get('type')!r} on line {line}\n")
        sys.stderr.flush()


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
