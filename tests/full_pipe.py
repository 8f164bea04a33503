"""A client's answers read only once its output pipe is full or it has exited: what it
wrote before exiting, so a client that exits while answers wait behind a full pipe shows
the loss (the reference clients' and the documented adapters' flush tests)."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import termios
import threading
import time

from stella_conform.conformance.clients.runner import Client


def _unread(fd: int) -> int:
    """Bytes waiting in a pipe (FIONREAD)."""
    buf = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    return int.from_bytes(buf, sys.byteorder)


def answers_after_a_full_pipe(
    argv: list[str], mode: str, stdin: bytes, grace: float = 0.0
) -> list[dict]:
    """Write ``stdin`` whole, wait until the client's stdout pipe is full or it has exited,
    then read everything it wrote.  ``grace``: seconds more to wait, once the pipe is full,
    for a client about to exit (on a loaded machine it may reach its exit after the pipe
    fills: read at once, the pipe would take what it had queued)."""
    env = Client(tuple(argv), mode=mode).environment()  # type: ignore[arg-type]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin_pipe = proc.stdin

    def write() -> None:
        try:
            stdin_pipe.write(stdin)
            stdin_pipe.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write)
    writer.start()
    fd = proc.stdout.fileno()
    capacity = fcntl.fcntl(fd, 1032)  # F_GETPIPE_SZ
    try:
        # the client's answers (each far smaller than PIPE_BUF, so written whole) fill the
        # pipe to within one answer; a client that exits instead has dropped the rest
        while proc.poll() is None and _unread(fd) < capacity - 4096:
            time.sleep(0.005)
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        out = proc.stdout.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
        writer.join()
    return [json.loads(line) for line in out.splitlines() if line.strip()]
