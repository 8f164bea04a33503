#!/usr/bin/env python3
"""Python pitfall: events dispatched with ``getattr(handlers, event["type"], None)``, a
method per known type and ``None`` for the rest.  ``getattr`` finds more than the
methods written: every object has ``__class__``, ``__init__``, ``__dict__``,
``__module__`` ..., so an unrecognized type with such a name is "known" to this reader,
and calling what it found raises (``'mappingproxy' object is not callable``), which this
reader reports as the line's failure: a valid stream rejected.  Otherwise the conforming
Python reader."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class Handlers:
    """One method per known type (what it reads of each is the reader's own)."""

    def text(self, event):
        return event

    text_delta = reasoning = stage = tool_start = tool_result = step_usage = text
    turn_complete = run_complete = error = budget_tick = file_change = text


HANDLERS = Handlers()


class BrokenReader(Reader):
    def type_of(self, event):
        tag = event.get("type")
        handler = getattr(HANDLERS, tag, None) if isinstance(tag, str) else None
        if handler is None:
            return None
        try:
            handler(event)  # the handler sees the event first
        except TypeError as exc:
            self.handler_failed = f"{tag}: {exc}"
        return super().type_of(event) or tag

    handler_failed = None

    def misfit(self, tag, event):
        failed, self.handler_failed = self.handler_failed, None
        if failed is not None:
            return failed
        if tag not in self.required:
            return None  # a handler ran, so the type is known and its body taken as it is
        return super().misfit(tag, event)

    def _fold(self, tag, event):
        if tag in self.required:
            super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
