#!/usr/bin/env python3
"""Envelope bug: looks for the records at .files_touched, one level too shallow."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main  # noqa: F401


class Broken(EnvelopeReader):
    def files_touched(self, doc):
        payload = doc.get("files_touched")
        if isinstance(payload, list):
            return [r.get("path") for r in payload if isinstance(r, dict)]
        return [] if payload is not None else None


if __name__ == "__main__":
    main(Broken)
