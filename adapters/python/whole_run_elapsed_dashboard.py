#!/usr/bin/env python3
"""A conforming dashboard that clamps the elapsed time of the whole run, not each step's.

"Clamp a negative time difference to zero instead of displaying it": this dashboard's
elapsed time is the last stamp less the first, and shows 0 when the clock was set back
below where the run began (reading B of ``elapsed-clamp``).  ``dashboard.py`` clamps each
step between two stamps and sums the forward ones (reading A).  Both conform
(docs/contract-readings.md); neither ever shows a negative time.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class WholeRunClock(Reader):
    first_ts: int | None = None

    def _clock(self, ts: Any) -> None:
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            return
        if self.first_ts is None:
            self.first_ts = ts
        self.elapsed_ms = max(0, ts - self.first_ts)


class WholeRunDashboard(Adapter):
    reader_class = WholeRunClock


if __name__ == "__main__":
    main(WholeRunDashboard)
