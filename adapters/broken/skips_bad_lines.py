#!/usr/bin/env python3
"""Breaks rules 4 and 6: wraps every line in try/except and skips whatever fails."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class BrokenReader(Reader):
    def push(self, line, content, terminated=True):
        out = super().push(line, content, terminated)
        if self.rejected:  # swallow the error: "probably just something new"
            self.rejected = None
            return [{"kind": "line", "line": line, "outcome": "unknown"}]
        if self.pending is not None:
            self.pending = None
            return [{"kind": "line", "line": line, "outcome": "unknown"}]
        return out


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
