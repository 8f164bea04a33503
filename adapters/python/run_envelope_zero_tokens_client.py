#!/usr/bin/env python3
"""A conforming reader of *run* envelopes that never reads ``events`` and reports its
token totals as 0: none counted.

It is ``run_envelope_client.py`` (``"reads": ["run"]``: the keys it uses, never ``events``),
computing ``input_tokens`` and ``output_tokens`` too.  stella's envelope has no token keys:
the counts are in the ``step_usage`` events, which this reader does not read.  Its totals are
then nothing read (null, reading A of ``tokens-not-read``) or none counted (0, reading B:
how the contract's own jq prints a count it lacks, ``.revisions // 0``).  Both conform
(docs/contract-readings.md): this client takes B.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

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
