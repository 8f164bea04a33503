"""The kit's watchdog: what a kit killed by SIGKILL left running is killed here.

Run by :func:`stella_conform.stopping.watch` as ``python -I -S watchdog.py FD MARK``, in a
session of its own, with the stop signals ignored; it imports nothing of the kit (it must
start fast and outlive it). It reads descriptor ``FD``, the read end of a pipe whose write
end only kit processes hold (the main one and its forked ``-j`` workers; a client never:
``close_fds``). The kit writes ``+g PGID`` when it starts a client in process group PGID and
``-g PGID`` when that group is gone (``+d``/``-d`` and ``+f``/``-f`` with a path in hex for its
temporary folders and files). End of file means every kit process is gone, however it
ended: then every group still listed, and every process whose environment holds ``MARK``
(``STELLA_CONFORM_WATCHDOG=TOKEN``, which every client the kit starts carries, and its
children and grandchildren inherit, even one that left the group with ``setsid``), gets
SIGKILL, scan after scan until three in a row find none (what a dying client forked); then
the temporary folders and files still listed are removed.

A kit that ended cleanly (its command's clean-up ran: every client group killed, its folders
removed, its orphans reaped) says so, ``=clean``, as its last line, and waits for the
watchdog to exit, so that no watchdog outlives the command that started it. After ``=clean``
and end of file the watchdog scans once: finding nothing, it exits at once; finding
anything, it scans as for a killed kit. A ``+`` line after ``=clean`` (a ``-j`` worker still
at work) takes the ``=clean`` back.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from _collections_abc import Callable  # (loaded by os already: collections.abc is not)

# (nothing more, typing neither: this starts beside every command, and must start fast;
# shutil is imported only once the kit is gone and there are folders to remove)

#: Scans at most (a fork bomb is bounded), and the pause between two.
SCANS = 500
PAUSE = 0.02


def listen(fd: int) -> Left:
    """What the kit still has, once it is gone (end of file on ``fd``)."""
    left = Left()
    buf = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except InterruptedError:
            continue
        except OSError:
            return left
        if not data:
            return left
        *lines, buf = (buf + data).split(b"\n")
        for line in lines:
            left.note(line)


class Left:
    """The kit's process groups, temporary folders and files, as its lines say."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self.dirs: set[bytes] = set()
        self.files: set[bytes] = set()
        #: The kit said it ended cleanly, and nothing came after.
        self.clean = False

    def note(self, line: bytes) -> None:
        sign, _, value = line.partition(b" ")
        if sign == b"=clean":
            self.clean = True
            return
        if sign[:1] == b"+":
            self.clean = False
        try:
            if sign == b"+g":
                self.groups.add(int(value))
            elif sign == b"-g":
                self.groups.discard(int(value))
            elif sign in (b"+d", b"-d", b"+f", b"-f"):
                paths = self.dirs if sign[1:] == b"d" else self.files
                path = bytes.fromhex(value.decode("ascii"))
                if sign[:1] == b"+":
                    paths.add(path)
                else:
                    paths.discard(path)
        except ValueError:
            return  # not a line the kit writes

    def remove_files(self) -> None:
        for path in self.files:
            try:  # noqa: SIM105 (no contextlib: a module fewer to import)
                os.unlink(path)
            except OSError:
                pass
        if self.dirs:
            import shutil

            for path in self.dirs:
                shutil.rmtree(path, ignore_errors=True)


def marked(mark: bytes) -> list[int]:
    """Every process whose environment holds ``mark`` (a zombie's reads as empty)."""
    me = os.getpid()
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit() and int(name) != me]
    except OSError:
        return []
    found = []
    for name in names:
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if mark in fh.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found


def kill_all(groups: set[int], mark: bytes, then: Callable[[], None], clean: bool = False) -> None:
    """SIGKILL every group in ``groups`` and every process marked ``mark``, until none;
    ``then`` at the first scan that finds none (no client left to write a file). Three
    scans in a row must find none, or one after a ``clean`` kit that none found before."""
    quiet, enough = 0, 1 if clean else 3
    for _ in range(SCANS):
        for group in groups:
            try:  # noqa: SIM105
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        found = marked(mark)
        for pid in found:
            for kill in (os.killpg, os.kill):  # a setsid grandchild leads its own group
                try:  # noqa: SIM105
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        quiet = 0 if found else quiet + 1
        if found:
            enough = 3  # something was left after all: what it forks too
        if quiet == 1:
            then()
        if quiet >= enough:
            return
        time.sleep(PAUSE)


def main(argv: list[str]) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)  # it ends when the kit does, not before
    fd, mark = int(argv[1]), argv[2].encode()
    left = listen(fd)
    kill_all(left.groups, mark, left.remove_files, left.clean)
    left.remove_files()  # again: what a last straggler made
    os._exit(0)  # (no interpreter teardown: a kit that ended cleanly waits for this exit)


if __name__ == "__main__":
    main(sys.argv)
