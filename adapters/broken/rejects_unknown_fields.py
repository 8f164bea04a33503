#!/usr/bin/env python3
"""Breaks rule 5: a known event with a field it does not know is an error."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import ALIASES, OPTIONAL, REQUIRED, Adapter, Reader, Rejected, main  # noqa: F401  # noqa: E402


class BrokenReader(Reader):
    def misfit(self, tag, event):
        allowed = {"type", "ts", *REQUIRED[tag], *OPTIONAL.get(tag, {}), *ALIASES.get(tag, ())}
        extra = sorted(set(event) - allowed)
        if extra:
            return f"{tag}: unexpected field(s) {extra}"
        return super().misfit(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
