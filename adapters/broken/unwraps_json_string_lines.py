#!/usr/bin/env python3
"""Breaks rule 1: a line that is a JSON string is parsed again, as if it were double-encoded.

Log shippers that wrap each line in a JSON string teach clients this "fix"; it
reads ``"{\\"type\\":\\"text\\",...}"`` as a text event.  A line that is JSON
but not an object is an error or unrecognized (a registered reading), never an event.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    def parse(self, content):
        value = super().parse(content)
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
