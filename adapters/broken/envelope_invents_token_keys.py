#!/usr/bin/env python3
"""Envelope bug: reads token counts from keys stella's envelope does not have.

Modelled on a real TypeScript reader that looked for ``usage.input_tokens`` and, finding
nothing, silently reported zero tokens for every run. The counts are in the step_usage
events; nothing in the envelope's own keys holds them.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, main


class Broken(EnvelopeReader):
    def tokens(self, doc, reader):
        usage = doc.get("usage") or {}
        return usage.get("input_tokens", 0), usage.get("output_tokens", 0)


if __name__ == "__main__":
    main(Broken)
