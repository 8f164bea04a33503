#!/usr/bin/env python3
"""Wrapper bug: passes --output-format as a global flag, before run, which stella refuses."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from wrapper_client import Wrapper, main


class Broken(Wrapper):
    def command(self):
        return ["stella", "--output-format", self.output_format, "run", self.prompt]


if __name__ == "__main__":
    main(Broken)
