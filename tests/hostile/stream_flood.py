#!/usr/bin/env python3
"""Write a valid stream of about N MiB to stdout, generated as it goes (nothing on disk).

stream_flood.py MIB
"""

import os
import sys

mib = int(sys.argv[1])
# an event type the reader does not know: counted, never kept, so the fold stays flat
line = b'{"type":"x_progress","pad":"' + b"x" * 1000 + b'"}\n'
block = line * (1024 * 1024 // len(line))
os.write(1, b'{"type":"stage","name":"execute","scope":"turn"}\n')
for _ in range(mib):
    view = memoryview(block)
    while view:
        view = view[os.write(1, view) :]
os.write(1, b'{"type":"run_complete","model":"m","cost_usd":0}\n')
