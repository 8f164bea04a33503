#!/usr/bin/env python3
"""Dashboard bug: ends the run on the old ``complete``, and does not know ``run_complete``.

Three real consumers were written before stella renamed its turn boundary: they match
``"complete"`` to call a run finished.  This one says so honestly in its hello: it knows
``complete`` and not ``run_complete``, and it computes ``terminator``, so on a stream of
today's stella a run never ends for it.  Claims do not hide that:
``D.run-terminator`` fails with the reason rather than skipping.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import REQUIRED, Adapter, Reader, main

KNOWN = {k: v for k, v in REQUIRED.items() if k != "run_complete"}
KNOWN["complete"] = REQUIRED["turn_complete"]


class BrokenReader(Reader):
    known_types = frozenset(KNOWN)
    required = KNOWN

    def _fold(self, tag, event):
        super()._fold(tag, event)
        if tag == "complete":  # "complete means done"
            self.turns_completed += 1
            self.run_complete = True


#: Every field of its summary, a run's end (terminator) among them.
COMPUTES = [k for k in BrokenReader().summary() if k not in ("kind", "verdict")]


class Broken(Adapter):
    reader_class = BrokenReader
    #: It says what it shows, terminator among it: the claim that makes the bug a failure.
    claims = {"knows": sorted(KNOWN), "computes": COMPUTES}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Broken)
