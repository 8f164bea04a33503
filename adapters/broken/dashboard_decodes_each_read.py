#!/usr/bin/env python3
"""Dashboard pitfall: reads its input ``io.DEFAULT_BUFFER_SIZE`` (8 KiB) at a time and
decodes each read on its own, ``chunk.decode("utf-8", "replace")``, before splitting the
text into lines.

A character whose bytes straddle two reads is decoded as two halves, each U+FFFD: the
text the dashboard shows is not the text stella wrote.  Decoding is the stream's, not the
read's: ``codecs.getincrementaldecoder("utf-8")()`` (or ``io.TextIOWrapper``, or
splitting the bytes first) keeps a split character whole.  Otherwise the conforming
Python dashboard, fed the lines of the text it decoded.
"""

import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, main


def chunked_lines(stream):
    """(number, content, terminated) per line of the text, each read decoded alone."""
    number, text = 0, ""
    while True:
        chunk = stream.read(io.DEFAULT_BUFFER_SIZE)
        if not chunk:
            break
        text += chunk.decode("utf-8", "replace")
        *done, text = text.split("\n")
        for piece in done:
            number += 1
            yield number, piece.encode("utf-8"), True
    if text:
        yield number + 1, text.encode("utf-8"), False


class Broken(Adapter):
    profiles = ("dashboard",)

    def lines(self, stream):
        return chunked_lines(stream)


if __name__ == "__main__":
    main(Broken)
