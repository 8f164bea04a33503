#!/usr/bin/env python3
"""Envelope bug: expects a list report to be a bare array, so the rows under rows are never seen."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main  # noqa: F401


class Broken(EnvelopeReader):
    def read(self, data, command):
        out = super().read(data, command)
        if "rows" in out:
            doc = self.parse(data)
            out["rows"] = len(doc) if isinstance(doc, list) else None
        return out


if __name__ == "__main__":
    main(Broken)
