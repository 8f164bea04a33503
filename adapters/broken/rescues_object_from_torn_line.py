#!/usr/bin/env python3
"""Breaks rule 6's content: rescues the last complete inner object with a known type from a
torn final line and reads it as an event, so {"type":"text","text":"INJECTED"} inside a cut-off
tool_start becomes the run's final text."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    last_content = b""

    def push(self, line, content, terminated=True):
        self.last_content = content
        return super().push(line, content, terminated)

    def finish(self):
        torn = self.pending is not None and not self.rejected
        out = super().finish()
        if torn:
            rescued = self._rescue(self.last_content.decode("utf-8", "replace"))
            if rescued is not None:
                self._fold(rescued["type"], rescued)
        return out

    def _rescue(self, text):
        decoder = json.JSONDecoder()
        found = None
        for start in range(1, len(text)):
            if text[start] != "{":
                continue
            try:
                value, _ = decoder.raw_decode(text, start)
            except ValueError:
                continue
            tag = value.get("type") if isinstance(value, dict) else None
            if tag in self.known_types and self.misfit(tag, value) is None:
                found = value
        return found


class Broken(Adapter):
    reader_class = BrokenReader


if __name__ == "__main__":
    main(Broken)
