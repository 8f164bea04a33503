#!/usr/bin/env python3
"""A conforming client built for an older stella: the one that still wrote `complete`.

That stella closed each turn with ``complete`` (renamed ``turn_complete`` later, stella
#3379), wrote stages without ``scope`` (every stage was the engine's), spelled ``text``
with its legacy field ``delta``, and had no ``turn_complete``.  This client follows the
same six rules as the reference one, against *that* vocabulary.  Grade it against the
bundled vocabulary of that stella:

    stella-conform run --vocabulary stella-older --mode report -- \\
        python3 adapters/python/older_client.py

Against today's vocabulary it is wrong, and the kit says so: it counts ``complete`` as a
known event where today it is unrecognized.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import OPTIONAL, REQUIRED, Adapter, Reader, main

OLDER_REQUIRED = {k: v for k, v in REQUIRED.items() if k != "turn_complete"}
OLDER_REQUIRED["complete"] = REQUIRED["turn_complete"]
OLDER_REQUIRED["stage"] = {"name": "string"}  # no scope yet
OLDER_OPTIONAL = {**OPTIONAL, "stage": {"scope": ("enum", ("turn", "run"))}}


class OlderReader(Reader):
    known_types = frozenset(OLDER_REQUIRED)
    required = OLDER_REQUIRED
    optional = OLDER_OPTIONAL

    def type_of(self, event):
        # no archived shapes here: a stage without scope is this stella's normal stage
        tag = event.get("type")
        return tag if isinstance(tag, str) and tag in self.known_types else None

    def _fold(self, tag, event):
        if tag == "stage":
            self.known_events += 1
            self.last_known = tag
            self._clock(event.get("ts"))
            self.stages[event.get("scope", "turn")].append(event["name"])
        elif tag == "complete":
            super()._fold(tag, event)
            self.turns_completed += 1  # this stella's turn boundary
        else:
            super()._fold(tag, event)


class Older(Adapter):
    reader_class = OlderReader


if __name__ == "__main__":
    main(Older)
