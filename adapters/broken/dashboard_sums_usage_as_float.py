#!/usr/bin/env python3
"""Dashboard bug: sums token counts and durations as floats (a float64 column, the way a
data frame stores them), so counts above 2^53 lose their units."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def add_usage(self, event):
        if self.usage is None:
            self.usage = {"input_tokens": 0, "output_tokens": 0, "duration_ms": 0}
        for name in self.usage:
            self.usage[name] = int(float(self.usage[name]) + float(event[name]))


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
