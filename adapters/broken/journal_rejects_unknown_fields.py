#!/usr/bin/env python3
"""Journal reader bug: validates strictly, refusing fields it does not know."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from journal_reader import ENVELOPE, EVENTS, JournalReader, main


class Broken(JournalReader):
    def misfit(self, tag, entry):
        required, optional = EVENTS[tag]
        allowed = {"event", "turn", *ENVELOPE, *required, *optional}
        extra = sorted(set(entry) - allowed)
        if extra:
            return f"{tag}: unexpected field {extra[0]!r}"
        return super().misfit(tag, entry)


if __name__ == "__main__":
    main(Broken)
