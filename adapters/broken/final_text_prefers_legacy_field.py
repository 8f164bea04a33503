#!/usr/bin/env python3
"""Breaks the alias guarantee in what it shows: where a text event carries both spellings,
its final text is the legacy field's.

The pattern of a client that reads ``event.delta ?? event.text`` (the older spelling first,
"for old recordings"), and reports only ``final_text`` (its hello claims so): a check that
compared ``texts`` and ``preview`` but not ``final_text`` could never fail it.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dashboard_prefers_legacy_field import BrokenReader
from stella_reader import Adapter, main


class Broken(Adapter):
    reader_class = BrokenReader
    claims = {"computes": ["final_text"]}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Broken)
