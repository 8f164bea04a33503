#!/usr/bin/env python3
"""Wrapper bug: sees exit 3 but never reads why stella stopped."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from wrapper_client import Wrapper, main


class Broken(Wrapper):
    def reason(self, envelope):
        return None


if __name__ == "__main__":
    main(Broken)
