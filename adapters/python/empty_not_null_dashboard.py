#!/usr/bin/env python3
"""A conforming dashboard that starts every value at its empty form, never at null.

Its preview is a string buffer (``""`` when no ``text_delta`` is pending), its token
usage a set of counters at zero before any ``step_usage``, its elapsed time 0 before
two stamps: as a dashboard initialises the fields it displays.  The kit's reference
dashboard reports each of these as ``null``; both spellings say the same, and both
conform (docs/adapter-protocol.md, the summary field by field).  Otherwise it is
``dashboard.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any


class EmptyNotNull(Reader):
    def __init__(self) -> None:
        super().__init__()
        self.elapsed_ms = 0
        self.usage = {"input_tokens": 0, "output_tokens": 0, "duration_ms": 0}

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        if out["preview"] is None:
            out["preview"] = ""
        return out


class EmptyNotNullDashboard(Adapter):
    reader_class = EmptyNotNull


if __name__ == "__main__":
    main(EmptyNotNullDashboard)
