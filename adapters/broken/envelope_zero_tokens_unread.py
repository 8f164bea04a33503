#!/usr/bin/env python3
"""Envelope bug: a reader of *run* envelopes that never reads ``events`` and reports 0
tokens for every run.

It is ``run_envelope_client.py`` (``"reads": ["run"]``: the keys it uses, never
``events``), computing ``input_tokens`` and ``output_tokens`` too.  stella's envelope has no
token keys: the counts are in the ``step_usage`` events, which this reader does not read,
so its users see 0 tokens for a run that used 38,344.  A reader that reads no
``step_usage`` event reports its totals as null (nothing read); 0 only where the envelope
holds no ``step_usage`` event at all (docs/contract-readings.md, ``tokens-not-read``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import envelope_client
from run_envelope_client import COMPUTES, READS, RunEnvelopeReader

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class ZeroTokens(RunEnvelopeReader):
    def read(self, data: bytes, command: str) -> dict[str, Any]:
        return {**super().read(data, command), "input_tokens": 0, "output_tokens": 0}


if __name__ == "__main__":
    envelope_client.HELLO_CLAIMS = {
        "reads": READS,
        "computes": [*COMPUTES, "input_tokens", "output_tokens"],
    }
    envelope_client.main(ZeroTokens)
