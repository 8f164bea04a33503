#!/usr/bin/env python3
"""A conforming persistent-mode client that stalls, as on a busy machine.

    stall_once.py MARKER SECONDS ONCE|AGAIN CLIENT [ARGS...]

Runs CLIENT (its answers go straight to our stdout) and passes the kit's messages on,
but sleeps SECONDS before the third case and records it in MARKER.  ONCE: the process
the kit starts after a timeout answers at once (to the kit this looks exactly like a
client that got no CPU for a while).  AGAIN: that process stalls on its first case too
(a client that really hangs on that input), and records it in MARKER.again; the
processes after it answer at once, so the run goes on at full speed.
"""

import os
import subprocess
import sys
import time


def main():
    marker, seconds, mode, client = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    again = marker + ".again"
    if not os.path.exists(marker):
        stall_at, record = 3, marker
    elif mode == "AGAIN" and not os.path.exists(again):
        stall_at, record = 1, again
    else:
        stall_at, record = 0, marker
    child = subprocess.Popen(client, stdin=subprocess.PIPE)
    cases = 0
    for line in sys.stdin.buffer:
        if b'"case"' in line:
            cases += 1
            if cases == stall_at:
                open(record, "w").close()
                time.sleep(seconds)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
