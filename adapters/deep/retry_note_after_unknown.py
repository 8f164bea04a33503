#!/usr/bin/env python3
"""Deep bug (rule 3): crashes only when several things line up.

From the second turn on, it files the text streamed right after a tool result
under "the event before that result".  It skips unrecognized events by forgetting
the look-behind, so the entry is filed under nothing and the client crashes, only
when all of these hold at once:

1. an event of a type it does not know (an unknown type, or a line whose type is
   missing or not a string: rule 3's sketch skips both alike, and so does this client),
2. immediately followed by a ``tool_result``,
3. immediately followed by a ``text_delta``,
4. in a turn after the first.

Each condition alone is common; together they are rare in random runs, which is
what makes this a test of ``stella-conform fuzz`` (docs/fuzzing.md): a default
``run`` misses it on most seeds.  Every rule-3 check whose cases carry such a line can
find it: ``R3.missing-or-non-string-type`` and ``R3.no-loud-warning`` report the same
crash as ``R3.unknown-type-inert`` (tests/conformance/fuzz/test_fuzz.py checks that this
is the bug).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class RetryNoteReader(Reader):
    def __init__(self):
        super().__init__()
        self.previous = None  # the last known event; None right after an unknown one
        self.result = None  # (the last tool_result, the known event just before it)
        self.notes = {}

    def on_event(self, line, event, tag):
        if tag is None:
            self.previous = None
            return
        if tag == "tool_result":
            self.result = (event, self.previous)
        elif tag == "text_delta" and (self.previous or {}).get("type") == "tool_result":
            result, before = self.result
            if self.turns_completed:  # from the second turn on, notes are filed per call
                # the preview as the reader reads it (its legacy spelling too): the only
                # bug here is the look-behind an unknown event leaves empty
                preview = self.normalize(tag, event)["delta"]
                self.notes[before["type"] + ":" + result["call_id"]] = preview
        self.previous = event


class RetryNoteAdapter(Adapter):
    reader_class = RetryNoteReader


if __name__ == "__main__":
    main(RetryNoteAdapter)
