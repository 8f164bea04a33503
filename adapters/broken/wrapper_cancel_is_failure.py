#!/usr/bin/env python3
"""Wrapper bug: anything but exit 0 or 3 is a failure: a cancel or a job timeout fails the job."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from wrapper_client import Wrapper, main


class Broken(Wrapper):
    def outcome(self, code):
        return {0: "completed", 3: "stopped"}.get(code, "failed")


if __name__ == "__main__":
    main(Broken)
