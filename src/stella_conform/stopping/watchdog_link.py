"""The link to the watchdog (:mod:`stella_conform.stopping.watchdog`): a process that
outlives a kit killed by SIGKILL and kills what it left.  The kit starts it once per
command and tells it, one line down a pipe, each client group, temporary folder and file
as they come and go."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from stella_conform.stopping import state

#: The environment variable every client the kit starts carries, with the value of the
#: kit's watchdog (:func:`watch`): its children and grandchildren inherit it, even one
#: that leaves the client's process group with ``setsid``.
WATCH_ENV = "STELLA_CONFORM_WATCHDOG"

#: The watchdog's program (see its docstring): a file run by path, importing nothing of the kit.
_WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog.py")


def watch() -> str | None:
    """The token of this process's watchdog, started the first time (and again if it died).

    SIGKILL cannot be handled: a kit killed by it runs none of its clean-up, and a client
    that ignores its stdin closing (and SIGTERM) would run on for ever, with its children. The
    watchdog outlives the kit by design (a session of its own, the stop signals ignored)
    and kills what the kit left. It costs one process per command, started once (not per
    case), a few bytes down a pipe per client started, and a scan of ``/proc`` when the
    kit ends. ``None`` where it cannot start.
    """
    current = state.watchdog
    if current is not None:
        owner, proc, _fd, token = current
        if owner != os.getpid() or proc.poll() is None:
            return token  # (a forked worker cannot poll its parent's child: it trusts it)
        with contextlib.suppress(OSError):
            os.close(current[2])
        state.watchdog = None
    import subprocess

    token = f"{os.getpid()}-{time.time_ns()}-{os.urandom(4).hex()}"
    read_end, write_end = os.pipe()  # neither inherited by a client (close_fds)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _WATCHDOG, str(read_end), f"{WATCH_ENV}={token}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(read_end,),
            cwd="/",
            start_new_session=True,  # a kill of the kit's whole process group spares it
        )
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    os.set_blocking(write_end, False)  # a watchdog that stopped reading never blocks the kit
    state.watchdog = (os.getpid(), proc, write_end, token)
    for pid in state.groups:
        _tell_watchdog("+g", str(pid))
    for path in state.dirs:
        _tell_watchdog("+d", path)
    for path in state.files:
        _tell_watchdog("+f", path)
    return token


def _tell_watchdog(what: str, value: str) -> None:
    """One line to the watchdog: ``+g PGID`` (a client's group), ``+d PATH`` (a temporary
    folder), ``+f PATH`` (a temporary file), ``-`` for each when it is gone; a path in
    hex (any byte but a newline may be in one). Never blocks, never fails the kit."""
    if state.watchdog is None:
        return
    if what[1] != "g":  # absolute: the watchdog runs in "/", not in the kit's folder
        value = os.fsencode(os.path.abspath(value)).hex()
    with contextlib.suppress(OSError):
        os.write(state.watchdog[2], f"{what} {value}\n".encode())


#: Seconds a command that ended cleanly waits for its watchdog to exit (:func:`dismiss`):
#: one scan of ``/proc``, a few milliseconds, unless that scan found something to kill.
DISMISS_WAIT = 2.0


def dismiss(started_before: tuple[int, Any, int, str] | None = None) -> None:
    """A command's clean-up has run (:func:`clean_up`): tell this process's watchdog so
    (``=clean``), close the pipe and wait, at most :data:`DISMISS_WAIT`, until it exits: it
    scans once and, finding nothing left, exits at once, so that no process of the kit
    outlives a command that ended (the watchdog, in a session of its own, would otherwise
    outlive every command by three scans). What the scan does find is killed as after a
    SIGKILLed kit, by a watchdog the command no longer waits for.

    Only the process that started the watchdog does this, and only for one started by the
    command (not ``started_before``, a library caller's or a test session's, which may
    still have clients of its own)."""
    current = state.watchdog
    if current is None or current is started_before or current[0] != os.getpid():
        return
    state.watchdog = None
    _owner, proc, fd, _token = current
    try:
        said = os.write(fd, b"=clean\n") > 0
    except OSError:
        said = False  # (a pipe full of lines: the watchdog does its full scans)
    with contextlib.suppress(OSError):
        os.close(fd)
    if said:
        _wait_for(proc, DISMISS_WAIT)


def _wait_for(proc: Any, seconds: float) -> None:
    """Wait until ``proc`` exits, at most ``seconds``, and reap it: on Linux woken by its
    ``pidfd`` the moment it exits (``Popen.wait``'s timeout polls, with sleeps that double
    up to 50 ms, so a short wait would take several times as long)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3+ (or it is gone and reaped)
        with contextlib.suppress(Exception):
            proc.wait(seconds)
        return
    try:
        import select

        select.select([fd], [], [], seconds)
    finally:
        os.close(fd)
    proc.poll()


def _watchdog_pid() -> int | None:
    if state.watchdog is None or state.watchdog[0] != os.getpid():
        return None
    return int(state.watchdog[1].pid)
