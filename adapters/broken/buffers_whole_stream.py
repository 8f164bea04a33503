#!/usr/bin/env python3
"""Breaks rule 1: reads the whole stream before parsing any line."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from stella_reader import Adapter, Reader, Rejected, main  # noqa: F401


class Broken(Adapter):
    buffer_whole_stream = True


if __name__ == "__main__":
    main(Broken)
