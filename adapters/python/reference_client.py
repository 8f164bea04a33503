#!/usr/bin/env python3
"""The conforming Python reference client: exit, report and persistent modes.

stella-conform run --mode report -- python3 adapters/python/reference_client.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import main

if __name__ == "__main__":
    main()
