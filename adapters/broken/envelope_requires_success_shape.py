#!/usr/bin/env python3
"""Envelope bug: written for the success shape; a null text is treated as a broken envelope."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main


class Broken(EnvelopeReader):
    def read(self, data, command):
        out = super().read(data, command)
        if "status" in out and out["text"] is None:
            raise Refused("text is null")
        return out


if __name__ == "__main__":
    main(Broken)
