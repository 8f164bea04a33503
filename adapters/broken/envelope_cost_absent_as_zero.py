#!/usr/bin/env python3
"""Envelope bug: records ``cost_usd`` as 0.0 when the envelope has no cost.

The pre-flight error envelope ("no API key found", an unknown model) has no ``cost_usd``
key: it "has no model or event log to report".  This reader reads the cost as
``doc.get("cost_usd", 0.0)`` would, so its spend report shows a cost of $0.00 where
stella reported none.  The contract's own summary prints the cost as it is
(``"cost: $\\(.cost_usd)"``), where it writes ``// 0`` for a count it lacks: an absent
cost is null, not zero (docs/contract-readings.md).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, main


class Broken(EnvelopeReader):
    def read(self, data, command):
        out = super().read(data, command)
        if "status" in out and out.get("cost_usd") is None:
            out["cost_usd"] = 0.0
        return out


if __name__ == "__main__":
    main(Broken)
