#!/usr/bin/env python3
"""The conforming client of the older stella (``adapters/python/older_client.py``), but
one that dies on any line saying ``pinned-0.9``: only the recordings in ``stella-0.9/``
say it, so it fails exactly where a case started from one of them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "adapters" / "python"))

from older_client import Older, OlderReader
from stella_reader import main


class TripsOnPinned(OlderReader):
    def push(self, line, content, terminated=True):
        if b"pinned-0.9" in content:
            raise RuntimeError("a line of the pinned stella's recordings")
        return super().push(line, content, terminated)


class Trips(Older):
    reader_class = TripsOnPinned


if __name__ == "__main__":
    main(Trips)
