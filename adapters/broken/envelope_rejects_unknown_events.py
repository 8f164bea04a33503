#!/usr/bin/env python3
"""Envelope bug: treats an unknown event type inside events as a corrupt envelope."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main


class Broken(EnvelopeReader):
    def events(self, doc):
        reader = super().events(doc)
        if reader is not None and reader.unrecognized_events:
            raise Refused(f"unknown event type {reader.unrecognized_types[:1]}")
        return reader


if __name__ == "__main__":
    main(Broken)
