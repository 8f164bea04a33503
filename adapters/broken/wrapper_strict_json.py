#!/usr/bin/env python3
"""Wrapper bug: parses output strictly, so the torn envelope of a killed run is an error."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from wrapper_client import Wrapper, main


class Broken(Wrapper):
    def parse_envelope(self, stdout):
        if not stdout.strip():
            return None
        return json.loads(stdout)  # raises on the torn half-envelope of a killed run


if __name__ == "__main__":
    main(Broken)
