#!/usr/bin/env python3
"""A conforming dashboard that reports the version gap as the number of unrecognized type
*names*, not events.

"Count the unrecognized event types and show that count": the kit's default reads it as
occurrences (every unrecognized event counts, reading A of ``unknown-count``); a dashboard
that shows "this run used 2 kinds of events your dashboard cannot display" counts distinct
type names (reading B).  Both conform (docs/contract-readings.md): this client takes B.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main


class NamesReader(Reader):
    def __init__(self):
        super().__init__()
        self.named = 0  # unrecognized events with a type name

    def on_unknown(self, line, event):
        super().on_unknown(line, event)
        self.named += isinstance(event.get("type"), str)

    def summary(self):
        out = super().summary()
        # each name once; a line with no type name still counts once
        out["unrecognized_events"] += len(self.unrecognized_types) - self.named
        return out


class Names(Adapter):
    reader_class = NamesReader


if __name__ == "__main__":
    main(Names)
