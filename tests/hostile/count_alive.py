#!/usr/bin/env python3
"""``count_alive.py DIR CMD...``: note how many earlier runs are still alive, then be CMD.

Each start writes its pid into DIR and appends to DIR/peaks the number of other pids there
whose process is still running (a zombie does not count), then execs CMD (same pid). The
largest number in DIR/peaks is how many clients the kit kept alive beside a new one.
"""

import os
import sys


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


directory = sys.argv[1]
others = [int(n) for n in os.listdir(directory) if n.isdigit() and int(n) != os.getpid()]
with open(os.path.join(directory, "peaks"), "a") as fh:
    fh.write(f"{sum(running(pid) for pid in others)}\n")
open(os.path.join(directory, str(os.getpid())), "w").close()
os.execv(sys.argv[2], sys.argv[2:])
