#!/usr/bin/env python3
"""A conforming client that reads the whole text, then answers: a summary, no line reports.

Some clients do not process a stream line by line: a script that reads a finished
``stella-events.jsonl`` with one ``read()``, a poller that re-reads a file. They still
split the text into lines and follow rules 2 to 6, but they have no per-line moment to
report. Its hello claims ``"summary_only": true``: the kit writes the stream whole, takes
the summary alone, and skips the checks that need one observation per line (lockstep,
the kept last line), saying why; every other check grades its summary.

    stella-conform run --mode report -- python3 adapters/python/summary_only_client.py
"""

import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, main


class SummaryOnly(Adapter):
    claims = {"summary_only": True}  # noqa: RUF012 - read-only

    def read(self, stream, emit):
        whole = io.BytesIO(stream.read())  # the whole text first, on purpose
        return super().read(whole, lambda message: None)  # no line observations


if __name__ == "__main__":
    main(SummaryOnly)
