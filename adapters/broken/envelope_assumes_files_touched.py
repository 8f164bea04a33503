#!/usr/bin/env python3
"""Envelope bug: on a completed run, reads files_touched without checking it is there.

The --pipeline shape has no files_touched, so a successful pipeline run crashes the reader.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, Refused, main


class Broken(EnvelopeReader):
    def read(self, data, command):
        out = super().read(data, command)
        if out.get("status") == "completed":
            doc = self.parse(data)
            try:
                out["files_touched"] = [r["path"] for r in doc["files_touched"]["files_touched"]]
            except (KeyError, TypeError) as exc:
                raise Refused(f"cannot read files_touched: {exc!r}") from None
        return out


if __name__ == "__main__":
    main(Broken)
