#!/usr/bin/env python3
"""Python pitfall: each line goes through ``str.strip()`` before ``json.loads`` (the
``for line in sys.stdin: line = line.strip()`` of every tutorial).

``str.strip()`` removes what ``str.isspace()`` calls whitespace, which is more than
JSON's four: besides Unicode's spaces (the registered reading ``unicode-whitespace``) it
removes FS, GS, RS and US (U+001C to U+001F).  A line ``\\x1e{"type":"text",...}`` is
not JSON, and a stream holding it before its last line must be rejected; this reader
parses what is left after the strip, and a line of only US is blank to it.  Otherwise
the conforming Python reader.  The fix: strip JSON's whitespace only,
``line.strip(" \\t\\r\\n")`` (what ``json.loads`` skips anyway).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class StrippingReader(Reader):
    def push(self, line, content, terminated=True):
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return super().push(line, content, terminated)
        return super().push(line, text.strip().encode("utf-8"), terminated)


class Broken(Adapter):
    reader_class = StrippingReader


if __name__ == "__main__":
    main(Broken)
