#!/usr/bin/env python3
"""A conforming client that reads the streams of today's stella and of the older one.

The older stella closed each turn with ``complete`` (renamed ``turn_complete``, stella
#3379); a dashboard that shows archived runs next to new ones knows both names, and says
so in its hello (``"knows"``: today's types and ``complete``).  It reads a stage without
``scope`` as today's wire schema does, an archived shape (unrecognized), whichever stella
wrote it.  The kit grades it by its claims against streams of either stella, in one
matrix:

    stella-conform run --vocabulary stella-older --mode report -- \\
        python3 adapters/python/both_versions_client.py

Under today's vocabulary its ``complete`` is a type this stella never writes; where an
archived fixture holds one, it is a known turn boundary, and its body is checked.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import REQUIRED, Adapter, Reader, main

#: Today's types and the older stella's turn boundary, with today's turn boundary's body.
BOTH_REQUIRED = {**REQUIRED, "complete": REQUIRED["turn_complete"]}


class BothReader(Reader):
    known_types = frozenset(BOTH_REQUIRED)
    required = BOTH_REQUIRED

    def _fold(self, tag, event):
        super()._fold(tag, event)
        if tag == "complete":
            self.turns_completed += 1  # the older stella's turn boundary


class Both(Adapter):
    reader_class = BothReader
    claims = {"knows": sorted(BOTH_REQUIRED)}  # noqa: RUF012 - read-only


if __name__ == "__main__":
    main(Both)
