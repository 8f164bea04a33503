#!/usr/bin/env python3
"""A conforming reader of *run* envelopes that reads only the keys it uses.

It reads ``status``, ``text``, ``model``, ``reason`` and ``cost_usd`` of ``stella run
--output-format json``, and never looks at ``events`` or ``files_touched``; it is not
meant for query commands. The contract asks exactly that ("check only the keys you
use"), so its hello claims ``"reads": ["run"]`` and the summary fields it computes. In
exit mode (no hello) tell the kit:

    stella-conform run --profile envelope --reads run -- \\
        python3 adapters/python/run_envelope_client.py
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import envelope_client
from envelope_client import EnvelopeReader, Refused

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any

READS = ["run"]
COMPUTES = ["status", "text", "model", "stop_reason", "cost_usd"]


class RunEnvelopeReader(EnvelopeReader):
    def read(self, data: bytes, command: str) -> dict[str, Any]:
        doc = self.parse(data)
        if not isinstance(doc, dict):
            raise Refused("the envelope is not an object")
        self.check_version(doc)
        status = doc.get("status")
        if not isinstance(status, str):
            raise Refused("status is missing")
        cost = doc.get("cost_usd")
        return {
            "status": status,
            "text": self.optional(doc, "text", str),
            "model": self.optional(doc, "model", str),
            "stop_reason": self.optional(doc, "reason", str),
            "cost_usd": cost if isinstance(cost, (int, float)) and cost is not True else None,
        }


if __name__ == "__main__":
    envelope_client.HELLO_CLAIMS = {"reads": READS, "computes": COMPUTES}
    envelope_client.main(RunEnvelopeReader)
