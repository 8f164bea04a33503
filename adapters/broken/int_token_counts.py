#!/usr/bin/env python3
"""Python pitfall: token counts read with ``int(event["input_tokens"])``, the way a
usage tracker turns "whatever the JSON held" into a number.  ``int()`` takes the string
``"1200"``, ``True`` and ``-1`` (the count is never checked against the field's type or
sign), so a bad body is accepted.  It raises on ``"x1200"`` or ``""`` (the crash three
real consumers show uncaught); this one leaves such a value as it came, so the body
check refuses it.  Otherwise the conforming Python reader."""

import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main

COUNTS = {
    "step_usage": (
        "step", "input_tokens", "output_tokens", "cached_input_tokens", "duration_ms",
        "retries", "tool_calls",
    ),
    "tool_result": ("duration_ms",),
}  # fmt: skip


class BrokenReader(Reader):
    def normalize(self, tag, event):
        event = dict(super().normalize(tag, event))
        for name in COUNTS.get(tag, ()):
            if name in event:
                # "x1200", None: left as it came, the body check refuses it
                with contextlib.suppress(TypeError, ValueError):
                    event[name] = int(event[name])
        return event

    def misfit(self, tag, event):
        counts = COUNTS.get(tag, ())  # a count int() took: its sign is never looked at
        read = {k: abs(v) if k in counts and type(v) is int else v for k, v in event.items()}
        return super().misfit(tag, read)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
