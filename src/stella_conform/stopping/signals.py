"""The stop signals: SIGTERM, SIGHUP and SIGINT raise :class:`Stopped` in the kit's main
process, after killing what is live; a ``-j`` worker exits at once.  :func:`command` runs a
kit command inside them, and :func:`leave` exits as a stop asks."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from stella_conform.stopping import state
from stella_conform.stopping.reaper import _as_before, become_subreaper, clean_up
from stella_conform.stopping.stops import Stopped
from stella_conform.stopping.watchdog_link import dismiss

#: A stop is under way: a second stop signal exits at once.
_stopping = False
#: The pid of the kit command running in this process (see :func:`command`), if any.
_command_pid: int | None = None
#: Inside :func:`first_interrupt_asks`: a first Ctrl-C only asks to stop.
_soft_interrupt = False
_interrupt_asked = False
#: A :class:`Stopped` that the code it was raised in swallowed (see :func:`check`).
_swallowed: Stopped | None = None


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Stop signals wait (pending, not lost) until the block ends: for the kit's own
    bookkeeping only, never around starting a process (a child would inherit the mask)."""
    main = threading.current_thread() is threading.main_thread()
    if main and hasattr(signal, "pthread_sigmask"):
        before = signal.pthread_sigmask(signal.SIG_BLOCK, state.STOP_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    else:
        yield


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _stopping, _interrupt_asked
    first_ctrl_c = signum == signal.SIGINT and _soft_interrupt and not _interrupt_asked
    if first_ctrl_c and os.getpid() == state.main_pid:
        _interrupt_asked = True  # the command finishes what it is doing, then reports
        return
    clean_up()
    if os.getpid() != state.main_pid:  # a -j worker: its clients are dead; go, now
        for last_words in list(_worker_stops):  # (a check in progress bounds its cases)
            with contextlib.suppress(Exception):
                last_words()
        os._exit(128 + signum)
    if _stopping:  # a second signal while unwinding: no more waiting
        os._exit(128 + signum)
    _stopping = True
    raise Stopped(signum)


#: What a ``-j`` worker does before it exits on a stop signal (:func:`on_worker_stop`).
_worker_stops: list[Callable[[], object]] = []


@contextlib.contextmanager
def on_worker_stop(last_words: Callable[[], object]) -> Iterator[None]:
    """Within the block, a ``-j`` worker stopped by a signal calls ``last_words`` before it
    exits (it raises no :class:`Stopped`: it goes at once); quick work only, as the pool
    kills a worker still there a second after its SIGTERM. (The main process raises
    :class:`Stopped` instead, which its callers handle.)"""
    _worker_stops.append(last_words)
    try:
        yield
    finally:
        _worker_stops.remove(last_words)


def _keep_swallowed(unraisable: Any) -> None:
    """``sys.unraisablehook``: a :class:`Stopped` raised where Python cannot pass an
    exception on is kept for :func:`check`, not printed; anything else as before.

    A signal's handler runs wherever the main thread is at the next bytecode, and that
    may be a garbage collector callback (Hypothesis keeps one to time its collections), a
    ``__del__`` or a weakref callback: an exception raised there is "ignored". A stop that
    landed there would be lost, and the run would grade on with its clients killed, for
    minutes, and then exit 0.
    """
    global _swallowed
    stop = getattr(unraisable, "exc_value", None)
    if isinstance(stop, Stopped) and os.getpid() == state.main_pid:
        _swallowed = stop
        return
    _unraisable_before(unraisable)


_unraisable_before: Callable[[Any], object] = sys.unraisablehook


def check() -> None:
    """Raise, here, a stop that was swallowed where it landed (:func:`_keep_swallowed`).

    Called wherever the kit waits or starts something (every client's pump, every start,
    every line of a stream read), so a lost stop ends the command within one wait, with
    its partial report, as a stop that landed anywhere else does."""
    global _swallowed
    if _swallowed is not None and threading.current_thread() is threading.main_thread():
        stop, _swallowed = _swallowed, None
        raise stop


def install() -> None:
    """In the kit's main process: stop signals raise :class:`Stopped`; become a subreaper.

    Once per process: a second call changes nothing (a stop already under way stays so).
    """
    global _stopping
    if state.installed_pid == os.getpid():
        return
    state.main_pid = os.getpid()
    state.installed_pid = state.main_pid
    _stopping = False
    become_subreaper()
    global _unraisable_before
    if sys.unraisablehook is not _keep_swallowed:
        _unraisable_before = sys.unraisablehook
        sys.unraisablehook = _keep_swallowed
    for signum in state.STOP_SIGNALS:
        signal.signal(signum, _on_signal)


def supervise() -> None:
    """Called before the kit starts any process (a client, an oracle, a worker pool).

    In a kit command's main process (:func:`command`), on its main thread, the first call
    installs the stop handlers and makes the process a subreaper; every later call, and
    every call elsewhere (a ``-j`` worker, the pytest plugin inside someone's test
    session, a library caller), changes nothing. A stop that was swallowed where it
    landed is raised here (:func:`check`): no process starts after a stop.
    """
    if (
        _command_pid is not None
        and _command_pid == os.getpid()
        and threading.current_thread() is threading.main_thread()
    ):
        install()
    check()


@contextlib.contextmanager
def command() -> Iterator[None]:
    """A kit command from start to end: whatever it started is gone when it ends.

    The stop handlers are installed first, for every command, whether it starts a
    process or not: ``validate`` or ``trace check`` reading a pipe exits 143 on SIGTERM,
    as every other command does, not -15 (no handler). A :class:`Stopped` the command did
    not handle itself (it had no partial report to write) exits 128 + the signal here;
    any other ending kills every process group still tracked and reaps every orphan a
    client left behind, then goes on as it was going. A command run inside another
    program (click's test runner) leaves that program's handlers as it found them, and
    its children alive: the reaping after the command spares the children the program
    had when the command started (a test's own server outlives an in-process ``report
    merge``).
    """
    global _command_pid, _watchdog_before
    _command_pid = os.getpid()
    _watchdog_before = state.watchdog
    with _as_before() if not installed() else contextlib.nullcontext():
        try:
            try:
                supervise()
                yield
            finally:
                check()  # a stop swallowed after the command's last wait ends it 128 + N too
        except Stopped as stop:
            leave_after(stop, stop.why)
        finally:
            if _command_pid == os.getpid():
                clean_up()
                dismiss(_watchdog_before)
                _command_pid = None


#: The watchdog this process had when its command began (:func:`command`): not the command's.
_watchdog_before: tuple[int, Any, int, str] | None = None


def installed() -> bool:
    """Whether this process runs the kit's stop handlers (:func:`install`)."""
    return state.installed_pid == os.getpid()


@contextlib.contextmanager
def first_interrupt_asks() -> Iterator[Callable[[], bool]]:
    """Within the block a first Ctrl-C only asks the command to finish (``fuzz``: stop
    fuzzing and report); the function yielded says whether it was pressed.  A second
    Ctrl-C, SIGTERM and SIGHUP stop the kit as anywhere else (:class:`Stopped`).

    Where the kit's handlers are not installed (the fuzzer driven as a library) the
    block installs a SIGINT handler of its own with the same two steps, and puts the
    old one back.
    """
    global _soft_interrupt, _interrupt_asked
    _soft_interrupt, _interrupt_asked = True, False
    previous = None
    own = not installed() and threading.current_thread() is threading.main_thread()
    if own:

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            global _interrupt_asked
            if not _interrupt_asked:
                _interrupt_asked = True
                return
            raise Stopped(signum)

        previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield lambda: _interrupt_asked
    finally:
        _soft_interrupt = False
        if own:
            signal.signal(signal.SIGINT, previous)


def leave_after(stop: Stopped, why: str) -> None:
    """Exit as ``stop`` asks (:func:`leave`), having said ``why`` on stderr, in one line,
    when the stop is news to whoever watches the command (:attr:`Stopped.news`)."""
    if stop.news:
        print(f"stella-conform: {why}{stop.hint}", file=sys.stderr)
    leave(stop.exit_code)


def leave(code: int) -> None:
    """Exit now, output flushed: no atexit handler may wait on a stopped worker pool.

    Whatever is still tracked is killed and removed first (:func:`clean_up`), and the
    command's watchdog told so (:func:`dismiss`).
    """
    clean_up()
    if _command_pid == os.getpid():
        dismiss(_watchdog_before)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
