#!/usr/bin/env python3
"""Write a valid stream of about N MiB to stdout, generated as it goes (nothing on disk).

stream_flood.py MIB [KIND]

KIND is what the stream is made of: ``unknown`` (the default: an event type the reader
does not know, counted and never kept), or what a reader's summary does keep —
``deltas`` (text deltas: the preview), ``texts`` (texts), ``tools`` (tool calls, each
with a new id), ``types`` (unknown events, each of a new type).
"""

import os
import sys

mib = int(sys.argv[1])
kind = sys.argv[2] if len(sys.argv) > 2 else "unknown"
pad = "x" * 1000
os.write(1, b'{"type":"stage","name":"execute","scope":"turn"}\n')
if kind == "unknown":
    line = b'{"type":"x_progress","pad":"' + pad.encode() + b'"}\n'
    block = line * (1024 * 1024 // len(line))
    for _ in range(mib):
        view = memoryview(block)
        while view:
            view = view[os.write(1, view) :]
else:
    written, n = 0, 0
    while written < mib * 1024 * 1024:
        lines = []
        for _ in range(1000):
            n += 1
            if kind == "deltas":
                lines.append(f'{{"type":"text_delta","delta":"{pad}"}}\n')
            elif kind == "texts":
                lines.append(f'{{"type":"text","text":"{pad} {n}"}}\n')
            elif kind == "tools":
                lines.append(
                    f'{{"type":"tool_start","call":{{"call_id":"c{n}","name":"read","input":{{}}}}}}\n'
                )
            else:
                lines.append(f'{{"type":"x_{n}","pad":"{pad[:100]}"}}\n')
        data = "".join(lines).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
        written += len(data)
os.write(1, b'{"type":"run_complete","model":"m","cost_usd":0}\n')
