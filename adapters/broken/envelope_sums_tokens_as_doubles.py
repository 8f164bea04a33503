#!/usr/bin/env python3
"""Envelope bug: token counts read as doubles, so above 2^53 the totals lose their units.

Modelled on a TypeScript script that read ``stella run --output-format json`` with
``JSON.parse`` and added up ``input_tokens`` over the step_usage events: every JSON number
becomes a double, and a u64 count above 2^53 is rounded before it is summed. Everything
else is read as the conforming reader reads it.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from envelope_client import EnvelopeReader, main


class Broken(EnvelopeReader):
    def tokens(self, doc, reader):
        if reader is None:
            return None, None
        steps = [e for e in doc["events"] if isinstance(e, dict) and e.get("type") == "step_usage"]
        totals = []
        for key in ("input_tokens", "output_tokens"):
            total = 0.0  # a JavaScript number
            for event in steps:
                total += float(event[key])
            totals.append(int(total))
        return tuple(totals)


if __name__ == "__main__":
    main(Broken)
