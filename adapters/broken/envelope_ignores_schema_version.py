#!/usr/bin/env python3
"""Envelope bug: never looks at schema_version, so a new shape is silently misread."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main  # noqa: F401


class Broken(EnvelopeReader):
    def check_version(self, doc):
        pass


if __name__ == "__main__":
    main(Broken)
