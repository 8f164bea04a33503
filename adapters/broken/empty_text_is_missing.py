#!/usr/bin/env python3
"""Python pitfall: ``text = event.get("text") or event.get("delta")``, the idiom for "the
field, else its legacy spelling".  ``or`` takes every falsy value for a missing one: a
valid ``{"type":"text","text":""}`` (an empty answer) or an empty preview fragment has
"no text" to this reader, which rejects the line as a body without its field.
Otherwise the conforming Python reader."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main

FIELDS = {"text": ("text", "delta"), "text_delta": ("delta", "text"), "reasoning": ("delta",)}


class BrokenReader(Reader):
    def misfit(self, tag, event):
        names = FIELDS.get(tag)
        if names is not None:
            value = event.get(names[0]) or (event.get(names[1]) if len(names) > 1 else None)
            if not value:
                return f"{tag}: missing required field {names[0]!r}"
        return super().misfit(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
