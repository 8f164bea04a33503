"""The floor: the least any grader can spend feeding a client cases one at a time.

Starts the client once in persistent mode, writes one ``case`` message, reads its answer
lines until the summary, and goes on to the next: no validation, no oracle, no judge, no
generation.  This is what the protocol costs (a case at a time, lockstep), the baseline
``bench_throughput.py`` puts the kit's figures beside.

    python benchmarks/minimal_harness.py STREAMS.jsonl.b64 -- CMD [ARGS...]   (see main)
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Sequence


def feed(argv: Sequence[str], streams: Sequence[bytes]) -> int:
    """Every stream to one client process, a case at a time; the cases answered."""
    env = dict(os.environ, STELLA_CONFORM_MODE="persistent", STELLA_CONFORM_PROTOCOL="1",
               STELLA_CONFORM_DIGESTS="sha256")  # fmt: skip
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.readline()  # the hello
    answered = 0
    for n, stream in enumerate(streams):
        proc.stdin.write(b'{"kind":"case","id":"c%d","stream":"%s"}\n'
                         % (n, base64.b64encode(stream)))  # fmt: skip
        proc.stdin.flush()
        for line in proc.stdout:
            if b'"summary"' in line:
                answered += 1
                break
    proc.stdin.write(b'{"kind":"shutdown"}\n')
    proc.stdin.close()
    proc.wait()
    return answered


def main() -> int:
    """``minimal_harness.py FILE -- CMD...``: FILE holds one base64 stream per line."""
    at = sys.argv.index("--")
    with open(sys.argv[1], "rb") as fh:
        streams = [base64.b64decode(line) for line in fh if line.strip()]
    print(f"{feed(sys.argv[at + 1 :], streams)} of {len(streams)} cases answered")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
