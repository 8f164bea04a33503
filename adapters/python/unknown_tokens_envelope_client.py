#!/usr/bin/env python3
"""A conforming envelope reader that reports token totals as unknown (null) when no
``step_usage`` event reported any.

stella's envelope has no token keys: the counts are in the ``step_usage`` events.  An
envelope whose events hold none sums to 0 (reading A of ``tokens-without-usage``), or has
no token count at all (reading B: nothing said how many tokens were spent).  Both conform
(docs/contract-readings.md): this client takes B.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from envelope_client import EnvelopeReader, main


class UnknownTokens(EnvelopeReader):
    def tokens(self, doc, reader):
        steps = [e for e in doc.get("events") or [] if isinstance(e, dict)]
        if reader is not None and not any(e.get("type") == "step_usage" for e in steps):
            return None, None
        return super().tokens(doc, reader)


if __name__ == "__main__":
    main(UnknownTokens)
