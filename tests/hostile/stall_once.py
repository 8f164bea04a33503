#!/usr/bin/env python3
"""A conforming persistent-mode client that stalls, as on a machine that was busy.

    stall_once.py MARKER SECONDS ONCE|AGAIN CLIENT [ARGS...]

Runs CLIENT (its answers go straight to our stdout) and passes the kit's messages on,
but sleeps SECONDS before the third case and records it in MARKER.  ONCE: the process
the kit starts after a timeout answers at once (to the kit this looks exactly like a
client that got no CPU for a while).  AGAIN: that process stalls on its first case too
(a client that really hangs on that input).
"""

import os
import subprocess
import sys
import time


def main():
    marker, seconds, mode, client = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    stall_at = 3
    if os.path.exists(marker):
        stall_at = 1 if mode == "AGAIN" else 0
    child = subprocess.Popen(client, stdin=subprocess.PIPE)
    cases = 0
    for line in sys.stdin.buffer:
        if b'"case"' in line:
            cases += 1
            if cases == stall_at:
                open(marker, "w").close()
                time.sleep(seconds)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
