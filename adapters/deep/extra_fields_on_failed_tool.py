#!/usr/bin/env python3
"""Deep bug (rule 5): fails a valid stream only when three things line up.

It keeps the extra fields of a failed tool call "for the next reasoning step" and
then checks the reasoning event against them, as if they were part of its schema.
Unknown fields must be ignored (rule 5), so the stream is valid; the client fails on
it (its ``Rejected`` escapes the reader: a crash) only when all of these hold at once:

1. a ``tool_result`` carries a field the contract does not define,
2. that tool call failed (its output is an error),
3. a ``reasoning`` event comes later in the stream.

Each condition alone is common; together they are rare in random runs, which is
what makes it a test of ``stella-conform fuzz`` (docs/fuzzing.md).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import OPTIONAL, REQUIRED, Adapter, Reader, Rejected, main

TOOL_RESULT_FIELDS = {"type", "ts", *REQUIRED["tool_result"], *OPTIONAL["tool_result"]}


class CarryOverReader(Reader):
    def __init__(self):
        super().__init__()
        self.carried = set()

    def on_event(self, line, event, tag):
        if tag == "tool_result" and "error" in event["output"]:
            self.carried = set(event) - TOOL_RESULT_FIELDS
        elif tag == "reasoning" and self.carried:
            missing = sorted(self.carried - set(event))
            raise Rejected(f"reasoning lacks the fields of the failed call: {missing}")


class CarryOverAdapter(Adapter):
    reader_class = CarryOverReader


if __name__ == "__main__":
    main(CarryOverAdapter)
