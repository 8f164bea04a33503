#!/usr/bin/env python3
"""Dashboard pitfall: keeps a pointer to "the message being streamed" and writes each
``text`` into it, never resetting the pointer after the text arrives.

The pattern of a chat UI's state: the first ``text_delta`` opens a message (its index is
remembered), later deltas grow it, and the ``text`` replaces its content.  The pointer
is left set, so the text of a later step that streamed no preview overwrites the
earlier message instead of adding its own: the transcript loses a text.  The fix is to
clear the pointer when the text arrives (a text with no preview is a message of its
own).  Otherwise the conforming Python dashboard.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, main


class BrokenReader(Reader):
    streaming = None  # the index in texts of the message the deltas opened

    def _fold(self, tag, event):
        if tag == "text_delta" and self.streaming is None:
            self.streaming = len(self.texts)
        if tag == "text" and self.streaming is not None and self.streaming < len(self.texts):
            super()._fold(tag, event)
            self.texts[self.streaming] = self.texts.pop()  # written into the open message
            return
        super()._fold(tag, event)


class Broken(Adapter):
    reader_class = BrokenReader
    profiles = ("dashboard",)


if __name__ == "__main__":
    main(Broken)
