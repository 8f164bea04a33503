"""What is live, and must be cleaned up when the kit stops: client process groups,
temporary folders and files, each told to the watchdog too; and in a ``-j`` worker, the
pool's ledger of its temporary paths, so the parent can remove them if the worker is
killed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO

from stella_conform.stopping import state
from stella_conform.stopping.signals import signals_held, supervise
from stella_conform.stopping.watchdog_link import _tell_watchdog, watch


def track_group(pid: int) -> None:
    state.groups.add(pid)
    _tell_watchdog("+g", str(pid))


def untrack_group(pid: int) -> None:
    state.groups.discard(pid)
    _tell_watchdog("-g", str(pid))


@contextlib.contextmanager
def tracked_dir(path: str) -> Iterator[str]:
    """A temporary folder removed when the block ends or the kit is stopped."""
    state.dirs.add(path)
    _note("dir", path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        state.dirs.discard(path)
        _tell_watchdog("-d", path)


def temp_dir(prefix: str) -> str:
    """A new private temporary folder (``mkdtemp``, mode 0700), removed by the stop handler
    and when the command ends; :func:`remove_dir` removes it sooner.

    Made with the stop signals held back, so a signal cannot fall between the folder's
    creation and its tracking and leave it behind; and in a command's main process the
    stop handlers are installed first (:func:`supervise`), so a command that starts no
    process (``decode -`` keeps a copy of its stdin) is stopped with its folder removed.
    """
    supervise()
    with signals_held():
        path = tempfile.mkdtemp(prefix=prefix)
        state.dirs.add(path)
        _note("dir", path)
    return path


def track_file(path: str | os.PathLike[str]) -> None:
    """A temporary file the stop handler removes (a half-written cache, say) until
    :func:`untrack_file`; make it inside :func:`signals_held` so no signal falls between
    (call :func:`supervise` before, in a command that may start no process)."""
    state.files.add(os.fspath(path))
    _note("file", os.fspath(path))


def untrack_file(path: str | os.PathLike[str]) -> None:
    state.files.discard(os.fspath(path))
    _tell_watchdog("-f", os.fspath(path))


def remove_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    state.dirs.discard(path)
    _tell_watchdog("-d", path)


@contextlib.contextmanager
def private_dir(prefix: str) -> Iterator[str]:
    """:func:`temp_dir` for the length of a block."""
    path = temp_dir(prefix)
    try:
        yield path
    finally:
        remove_dir(path)


def _note(kind: str, path: str) -> None:
    """In a ``-j`` worker, note a tracked temporary ``kind`` ("file" or "dir") in the ledger.

    A worker killed by SIGKILL (the OOM killer) runs no handler: its half-written case
    cache file and its clients' ``{stream}`` folders would stay behind, and only the
    worker knows their names.  One line of JSON a path, appended unbuffered: the line is there
    before the path is used.

    The watchdog starts here if none runs yet: a command that starts no client (``decode -``
    keeps a copy of its stdin) killed by SIGKILL must not leave its folder behind."""
    watch()
    _tell_watchdog("+" + kind[0], path)
    if state.ledger is None or state.ledger[0] != os.getpid():
        return
    with contextlib.suppress(OSError):
        os.write(state.ledger[1], (json.dumps([kind, os.path.abspath(path)]) + "\n").encode())


def _clear_ledger(ledger: IO[bytes]) -> None:
    """Remove what the pool's workers noted (gone already, unless a worker was killed).
    Only once every worker of the pool has ended."""
    with contextlib.suppress(OSError, ValueError):
        ledger.seek(0)
        for line in ledger:
            with contextlib.suppress(ValueError, TypeError, OSError):
                kind, path = json.loads(line)
                if kind == "dir" and os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                elif kind == "file":
                    os.unlink(path)
