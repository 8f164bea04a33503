#!/usr/bin/env python3
"""A conforming reader that stops reading at ``run_complete``, as an SDK's event iterator does.

"Match on run_complete to know that nothing more is coming": once it has read
``run_complete`` this client reads nothing more (in report mode it writes its summary
there, and exits), so a line after it, a body that does not fit included, is never seen.
A client that reads on applies the rules to those lines (reading A of
``after-terminator``); this one takes reading B.  Both conform
(docs/contract-readings.md).  Otherwise it is ``reference_client.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import Adapter, Reader, main

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any, BinaryIO


class StopsAtRunComplete(Adapter):
    def read(self, stream: BinaryIO, emit: Any) -> Reader:
        reader = self.reader_class()
        for number, content, terminated in self.lines(stream):
            for message in reader.push(number, content, terminated):
                emit(message)
            if reader.rejected or reader.run_complete:
                return reader  # nothing more is coming
        for message in reader.finish():
            emit(message)
        return reader


if __name__ == "__main__":
    main(StopsAtRunComplete)
