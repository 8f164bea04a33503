#!/usr/bin/env python3
"""Breaks rule 3's guard: coerces a non-string type to a string, as JavaScript's String() does.

``KNOWN.has(String(event.type))`` reads ``{"type": ["text"]}`` as a text event.
Whether a line without a string type is skipped or rejected is a registered
reading (``missing-or-non-string-type``); reading it as a known event is not.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


def js_string(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


class BrokenReader(Reader):
    def type_of(self, event):
        tag = event.get("type")
        if "type" in event and not isinstance(tag, str):
            event = dict(event, type=js_string(tag))
        return super().type_of(event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
