#!/usr/bin/env python3
"""Dashboard bug: elapsed = last ts - first ts, which goes negative when ts runs backwards."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    first_ts = None

    def _clock(self, ts):
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            return
        if self.first_ts is None:
            self.first_ts = ts
        self.elapsed_ms = ts - self.first_ts


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
