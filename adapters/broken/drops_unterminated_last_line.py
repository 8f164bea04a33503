#!/usr/bin/env python3
"""Breaks rule 6: drops a complete last line because it has no trailing newline."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class Broken(Adapter):
    drop_unterminated_last_line = True


if __name__ == "__main__":
    main(Broken)
