#!/usr/bin/env python3
"""Python pitfall: an event built as ``Event(**{k: v for k, v in raw.items() if
hasattr(Event, k)})``, the filter meant to drop unknown fields before a dataclass (or a
model class) takes the rest as keyword arguments.  ``hasattr`` is true of every name
the class has, not only its fields: ``__class__``, ``__init__``, ``__dict__``,
``__module__`` pass the filter, and the constructor raises ``TypeError`` on them, which
this reader reports as a body that does not fit: an unknown field fails the stream.
Otherwise the conforming Python reader."""

import dataclasses
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


@dataclasses.dataclass
class Event:
    type: str = ""
    ts: int | None = None


class BrokenReader(Reader):
    def misfit(self, tag, event):
        try:
            Event(**{k: v for k, v in event.items() if hasattr(Event, k)})
        except TypeError as exc:
            return f"{tag}: {exc}"
        return super().misfit(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
