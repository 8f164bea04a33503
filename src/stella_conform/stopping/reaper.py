"""Orphans: on Linux the kit (and each worker) is a *child subreaper*, so a grandchild
that left its client's process group with ``setsid`` is re-parented to the kit when the
client dies, and the kit kills it after each case.  :func:`clean_up` kills what is live
and reaps what it left; :func:`reaped` gives a caller that is no kit command (the pytest
plugin) the same for the length of a block."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType

from stella_conform.stopping import state
from stella_conform.stopping.watchdog_link import WATCH_ENV, _watchdog_pid, watch

_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False
#: Children a :func:`reaped` block found when it began: never reaped as orphans.
_spared: set[int] = set()
#: The environment variable every client started inside a :func:`reaped` block carries,
#: with the block's own value: what the block reaps must carry it (the clients' leftovers),
#: so an orphan of the rest of the test session (a server whose launcher exited) lives on.
REAP_MARK_ENV = "STELLA_CONFORM_REAP_MARK"
_reap_mark: str | None = None


def clean_up() -> None:
    """Kill every live client group of this process, remove its folders and temporary
    files, reap orphans."""
    for pid in list(state.groups):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    for path in list(state.dirs):
        shutil.rmtree(path, ignore_errors=True)
    for path in list(state.files):
        with contextlib.suppress(OSError):
            os.unlink(path)
    if state.groups:
        time.sleep(0.05)  # the killed clients die, and their setsid children become ours
    reap_orphans()


def become_subreaper() -> bool:
    """Linux: orphaned descendants of this process's children are re-parented to it."""
    global _subreaper
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def _stop_being_subreaper() -> None:
    global _subreaper
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return
    _subreaper = False


@contextlib.contextmanager
def _as_before() -> Iterator[None]:
    """A block that runs inside another program (someone's test session, click's test
    runner): what the block changes of this process's stop handling is as it was when it
    ends — the stop signals' handlers, ``sys.unraisablehook``, whether the process is a
    subreaper and whether the kit's handlers count as installed — and the children the
    process had when it began are spared by every reap in it (a test's own server must
    outlive an in-process ``report merge``).

    The one saved stop state for :func:`reaped` (the pytest plugin) and :func:`command`
    run in-process: the two kept near-copies of it.  Handlers can only be read and set on
    the main thread; elsewhere only the children are spared."""
    global _spared
    pid, spared, installed_pid, was_subreaper = (
        os.getpid(),
        _spared,
        state.installed_pid,
        _subreaper,
    )
    main = threading.current_thread() is threading.main_thread()
    handlers = {signum: signal.getsignal(signum) for signum in state.STOP_SIGNALS} if main else {}
    hook = sys.unraisablehook
    _spared = spared | _children()
    try:
        yield
    finally:
        if os.getpid() == pid:  # not in a forked child unwinding (it exits, it puts nothing back)
            for signum, handler in handlers.items():
                if handler is not None and signal.getsignal(signum) is not handler:
                    signal.signal(signum, handler)
            if main:
                sys.unraisablehook = hook
                state.installed_pid = installed_pid
            if _subreaper and not was_subreaper:
                _stop_being_subreaper()
            _spared = spared


@contextlib.contextmanager
def reaped() -> Iterator[None]:
    """For a caller that is no kit command (the pytest plugin, inside someone's test
    session): a subreaper for the block only, and what the clients started in it and
    left behind (a grandchild in a session of its own) is killed when it ends.

    The process's children from before the block (the session's own servers, say) are
    never touched, and after it the process is no subreaper again: orphans of the rest
    of the session go where they went (:func:`_as_before`).  In a kit command (already a
    subreaper) it adds nothing: :func:`command` reaps at its end and the runner after each
    case.
    """
    if _subreaper or threading.current_thread() is not threading.main_thread():
        yield
        return
    global _reap_mark
    with _as_before():  # every reap in the block (one after each case) spares its children
        _reap_mark = f"{os.getpid()}-{time.monotonic_ns()}"
        subreaper = become_subreaper()
        _die_cleanly()
        try:
            yield
        finally:
            if subreaper:
                reap_orphans()
            _reap_mark = None


def client_env(env: dict[str, str] | None) -> dict[str, str]:
    """The environment a client starts with: marked with this kit's watchdog's token
    (:data:`WATCH_ENV`, see :func:`watch`), and inside a :func:`reaped` block as the
    block's too (see :data:`REAP_MARK_ENV`)."""
    marked = dict(os.environ) if env is None else dict(env)
    token = watch()
    if token is not None:
        marked[WATCH_ENV] = token
    if _reap_mark is not None:
        marked[REAP_MARK_ENV] = _reap_mark
    return marked


def _a_client_s(pid: int) -> bool:
    """Whether an orphan came from a client of the current :func:`reaped` block: its
    environment carries the block's mark. One whose environment cannot be read is gone
    or not ours to kill either way."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read(1 << 20)
    except OSError:
        return False
    return f"{REAP_MARK_ENV}={_reap_mark}".encode() in environ.split(b"\0")


def _on_fatal_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP where it would kill the process outright (its default): the
    clients and what they left are killed first, then the signal does what it did."""
    clean_up()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _die_cleanly() -> None:
    """Within :func:`reaped`: SIGTERM and SIGHUP, where nobody handles them, kill the
    clients before the process (a CI job cancelling the test session would otherwise leave
    every client and its grandchildren running). A handler the session has is left alone."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _on_fatal_signal)


def _children() -> set[int]:
    pids: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as fh:
                pids.update(int(p) for p in fh.read().split())
    return pids


def reap_orphans(keep: set[int] | None = None) -> list[int]:
    """Kill and reap children that are not live clients (or ``keep``): escaped grandchildren.

    Only in a subreaper, where such children can only be orphans a client left behind.
    An orphan's own children are this process's once it is reaped (the clients of a
    killed ``-j`` worker, and then their grandchildren): so again, until none is left.
    """
    if not _subreaper:
        return []
    import multiprocessing

    killed: list[int] = []
    for _ in range(8):  # a chain of escaped generations is short; a fork bomb is bounded
        workers = {p.pid for p in multiprocessing.active_children() if p.pid is not None}
        spare = state.groups | workers | _spared | (keep or set())
        watchdog = _watchdog_pid()
        if watchdog is not None:
            spare.add(watchdog)  # it is the kit's: it must outlive the kit, not a case
        now = []
        for pid in _children() - spare:
            if _reap_mark is not None and not _a_client_s(pid):
                continue  # an orphan of the test session around the block: not the kit's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # a setsid grandchild leads its own group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
            now.append(pid)
        if not now:
            break
        killed += now
    return killed
