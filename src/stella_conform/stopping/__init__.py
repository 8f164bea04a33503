"""Stopping the kit stops everything: clients, workers, temporary files, escaped grandchildren.

A CI job is cancelled with SIGTERM, a terminal closes with SIGHUP, a person presses Ctrl-C.
Whatever the kit was doing, within two seconds: every client process group is killed,
``-j`` workers are stopped (each kills its own clients first), temporary folders are
removed, the report is written marked incomplete, and the kit exits 128 + the signal
(130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).

This module keeps what must be cleaned up — the live client process groups and temporary
folders of *this* process — and does the cleaning.  On Linux the kit (and each worker) is
also a *child subreaper*: a grandchild that left the client's process group with
``setsid`` is re-parented to the kit when the client dies, instead of to init, so the kit
can find and kill it after each case.

It is one mechanism for every command, not a step each command must remember: the CLI
runs every command inside :func:`command`, and everything that starts a process (a
client, an oracle, a worker pool) calls :func:`supervise` first, which sets up the
handlers and the subreaper in the command's main process the first time.  When the
command ends — by returning, by an error, or by a stop signal — :func:`command` kills
whatever is still tracked and reaps whatever a client left behind.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the pool's modules are imported when a pool is made
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")

#: Signals that stop the kit.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1

_groups: set[int] = set()
_dirs: set[str] = set()
_files: set[str] = set()
_subreaper = False
#: Children a :func:`reaped` block found when it began: never reaped as orphans.
_spared: set[int] = set()
#: The environment variable every client started inside a :func:`reaped` block carries,
#: with the block's own value: what the block reaps must carry it (the clients' leftovers),
#: so an orphan of the rest of the test session (a server whose launcher exited) lives on.
REAP_MARK_ENV = "STELLA_CONFORM_REAP_MARK"
_reap_mark: str | None = None
_main_pid: int | None = None
_stopping = False
#: The pid of the kit command running in this process (see :func:`command`), if any.
_command_pid: int | None = None
#: Whether the handlers are installed in this process (:func:`install`).
_installed_pid: int | None = None
#: Inside :func:`first_interrupt_asks`: a first Ctrl-C only asks to stop.
_soft_interrupt = False
_interrupt_asked = False
#: A :class:`Stopped` that the code it was raised in swallowed (see :func:`check`).
_swallowed: Stopped | None = None


class Stopped(KeyboardInterrupt):
    """The kit got a stop signal; unwinding writes what it has, marked incomplete.

    No ``except Exception`` on the way (a client's error handling) may swallow it, and it
    is a ``KeyboardInterrupt`` for Hypothesis, whose engine lets only that pass as it
    is: any other exception raised in the middle of a draw is recorded as the test
    case's outcome first, and recording a case cut short raised "Inconsistent data
    generation!" in its place (a stopped run graded on, its clients killed: minutes
    more at load 17, then exit 0 with a false "not deterministic" error).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.partial: list[object] = []

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def why(self) -> str:
        """What stopped the command, for its report: "stopped by SIGTERM"."""
        return f"stopped by {self.name}"

    #: Whether the command says :attr:`why` on stderr too: a stop signal was sent by the
    #: person (or the CI job) who sees the command end; a lost worker was not.
    news = False

    @property
    def hint(self) -> str:
        """What the stderr line adds to :attr:`why` (a lost worker: who sends its signal)."""
        return ""


class WorkerLost(Stopped):
    """A ``-j`` worker process ended in the middle of its checks: killed from outside.

    The OOM killer's SIGKILL, a stray ``kill``, a SIGTERM meant for someone else: no
    worker ends on its own while it has checks, so this is never the client's verdict
    and not the kit's bug either.  The command ends as a stopped one does, with what was
    graded in every report, marked incomplete, and exit 128 + the worker's signal (137
    for SIGKILL); concurrent.futures' ``BrokenProcessPool`` was a traceback and exit 3,
    "a bug in the kit".  A worker that exited with a status instead (nothing in the kit
    does that) is exit 3, as an internal error is, but still one line.
    """

    def __init__(self, pid: int | None, status: int | None) -> None:
        signum = -status if status is not None and status < 0 else 0
        if status is not None and 128 < status < 128 + signal.NSIG:
            # the worker's own stop handler (:func:`_on_signal`): it exits 128 + N
            signum = status - 128
        super().__init__(signum)
        self.pid, self.status = pid, status

    @property
    def name(self) -> str:
        if not self.signum:
            return "no signal" if self.status is None else f"exit status {self.status}"
        with contextlib.suppress(ValueError):
            return signal.Signals(self.signum).name
        return f"signal {self.signum}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum if self.signum else 3  # cli._common.INTERNAL_ERROR

    @property
    def why(self) -> str:
        worker = "a -j worker process" + (f" (pid {self.pid})" if self.pid else "")
        if self.status is None:
            return f"{worker} ended abruptly in the middle of its checks"
        if not self.signum:
            return f"{worker} ended with {self.name} in the middle of its checks"
        return f"{worker} was killed by {self.name} from outside the kit"

    @property
    def hint(self) -> str:
        if self.signum == signal.SIGKILL:
            return " (SIGKILL is what the OOM killer sends when memory runs out)"
        return ""

    news = True


# ------------------------------------------------------------------ what is live


def track_group(pid: int) -> None:
    _groups.add(pid)
    _tell_watchdog("+g", str(pid))


def untrack_group(pid: int) -> None:
    _groups.discard(pid)
    _tell_watchdog("-g", str(pid))


@contextlib.contextmanager
def tracked_dir(path: str) -> Iterator[str]:
    """A temporary folder removed when the block ends or the kit is stopped."""
    _dirs.add(path)
    _note("dir", path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _dirs.discard(path)
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
        _dirs.add(path)
        _note("dir", path)
    return path


def track_file(path: str | os.PathLike[str]) -> None:
    """A temporary file the stop handler removes (a half-written cache, say) until
    :func:`untrack_file`; make it inside :func:`signals_held` so no signal falls between
    (call :func:`supervise` before, in a command that may start no process)."""
    _files.add(os.fspath(path))
    _note("file", os.fspath(path))


def untrack_file(path: str | os.PathLike[str]) -> None:
    _files.discard(os.fspath(path))
    _tell_watchdog("-f", os.fspath(path))


def remove_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    _dirs.discard(path)
    _tell_watchdog("-d", path)


@contextlib.contextmanager
def private_dir(prefix: str) -> Iterator[str]:
    """:func:`temp_dir` for the length of a block."""
    path = temp_dir(prefix)
    try:
        yield path
    finally:
        remove_dir(path)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Stop signals wait (pending, not lost) until the block ends: for the kit's own
    bookkeeping only, never around starting a process (a child would inherit the mask)."""
    main = threading.current_thread() is threading.main_thread()
    if main and hasattr(signal, "pthread_sigmask"):
        before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    else:
        yield


def clean_up() -> None:
    """Kill every live client group of this process, remove its folders and temporary
    files, reap orphans."""
    for pid in list(_groups):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    for path in list(_dirs):
        shutil.rmtree(path, ignore_errors=True)
    for path in list(_files):
        with contextlib.suppress(OSError):
            os.unlink(path)
    if _groups:
        time.sleep(0.05)  # the killed clients die, and their setsid children become ours
    reap_orphans()


# ------------------------------------------------------------------ orphans


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
    process had when it began are spared by every reap in it (a test's own redis-server
    was killed by an in-process ``report merge``).

    The one saved stop state for :func:`reaped` (the pytest plugin) and :func:`command`
    run in-process: the two kept near-copies of it.  Handlers can only be read and set on
    the main thread; elsewhere only the children are spared."""
    global _spared, _installed_pid
    pid, spared, installed_pid, was_subreaper = os.getpid(), _spared, _installed_pid, _subreaper
    main = threading.current_thread() is threading.main_thread()
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} if main else {}
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
                _installed_pid = installed_pid
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


# ------------------------------------------------------------------ the watchdog

#: The environment variable every client the kit starts carries, with the value of the
#: kit's watchdog (:func:`watch`): its children and grandchildren inherit it, even one
#: that leaves the client's process group with ``setsid``.
WATCH_ENV = "STELLA_CONFORM_WATCHDOG"

#: The watchdog's program (see its docstring): a file run by path, importing nothing of the kit.
_WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog.py")

#: This process's watchdog: (the pid that started it, its ``Popen``, the kit's end of the
#: pipe, its token). A forked ``-j`` worker keeps its parent's (and its end of the pipe):
#: the watchdog acts once the last of them is gone.
_watchdog: tuple[int, Any, int, str] | None = None


def watch() -> str | None:
    """The token of this process's watchdog, started the first time (and again if it died).

    SIGKILL cannot be handled: a kit killed by it runs none of its clean-up, and a client
    that ignores its stdin closing (and SIGTERM) ran on for ever, with its children. The
    watchdog outlives the kit by design (a session of its own, the stop signals ignored)
    and kills what the kit left. It costs one process per command, started once (not per
    case), a few bytes down a pipe per client started, and a scan of ``/proc`` when the
    kit ends. ``None`` where it cannot start.
    """
    global _watchdog
    current = _watchdog
    if current is not None:
        owner, proc, _fd, token = current
        if owner != os.getpid() or proc.poll() is None:
            return token  # (a forked worker cannot poll its parent's child: it trusts it)
        with contextlib.suppress(OSError):
            os.close(current[2])
        _watchdog = None
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
    _watchdog = (os.getpid(), proc, write_end, token)
    for pid in _groups:
        _tell_watchdog("+g", str(pid))
    for path in _dirs:
        _tell_watchdog("+d", path)
    for path in _files:
        _tell_watchdog("+f", path)
    return token


def _tell_watchdog(what: str, value: str) -> None:
    """One line to the watchdog: ``+g PGID`` (a client's group), ``+d PATH`` (a temporary
    folder), ``+f PATH`` (a temporary file), ``-`` for each when it is gone; a path in
    hex (any byte but a newline may be in one). Never blocks, never fails the kit."""
    if _watchdog is None:
        return
    if what[1] != "g":
        value = os.fsencode(value).hex()
    with contextlib.suppress(OSError):
        os.write(_watchdog[2], f"{what} {value}\n".encode())


#: Seconds a command that ended cleanly waits for its watchdog to exit (:func:`dismiss`):
#: one scan of ``/proc``, a few milliseconds, unless that scan found something to kill.
DISMISS_WAIT = 2.0


def dismiss(started_before: tuple[int, Any, int, str] | None = None) -> None:
    """A command's clean-up has run (:func:`clean_up`): tell this process's watchdog so
    (``=clean``), close the pipe and wait, at most :data:`DISMISS_WAIT`, until it exits: it
    scans once and, finding nothing left, exits at once, so that no process of the kit
    outlives a command that ended (review-6 R6-7: the watchdog, in a session of its own,
    outlived every command by three scans). What the scan does find is killed as after a
    SIGKILLed kit, by a watchdog the command no longer waits for.

    Only the process that started the watchdog does this, and only for one started by the
    command (not ``started_before``, a library caller's or a test session's, which may
    still have clients of its own)."""
    global _watchdog
    current = _watchdog
    if current is None or current is started_before or current[0] != os.getpid():
        return
    _watchdog = None
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
    up to 50 ms: a 4 ms wait took 32 or 64)."""
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
    if _watchdog is None or _watchdog[0] != os.getpid():
        return None
    return int(_watchdog[1].pid)


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
    clients before the process (a CI job cancelling the test session left every client and
    its grandchildren running). A handler the session has is left alone."""
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
        spare = _groups | workers | _spared | (keep or set())
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


# ------------------------------------------------------------------ signals


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _stopping, _interrupt_asked
    first_ctrl_c = signum == signal.SIGINT and _soft_interrupt and not _interrupt_asked
    if first_ctrl_c and os.getpid() == _main_pid:
        _interrupt_asked = True  # the command finishes what it is doing, then reports
        return
    clean_up()
    if os.getpid() != _main_pid:  # a -j worker: its clients are dead; go, now
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
    landed there was lost, and the run graded on with its clients killed (a ``run -j 1``
    took minutes to exit after SIGTERM, and then exited 0).
    """
    global _swallowed
    stop = getattr(unraisable, "exc_value", None)
    if isinstance(stop, Stopped) and os.getpid() == _main_pid:
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
    global _main_pid, _stopping, _installed_pid
    if _installed_pid == os.getpid():
        return
    _main_pid = os.getpid()
    _installed_pid = _main_pid
    _stopping = False
    become_subreaper()
    global _unraisable_before
    if sys.unraisablehook is not _keep_swallowed:
        _unraisable_before = sys.unraisablehook
        sys.unraisablehook = _keep_swallowed
    for signum in STOP_SIGNALS:
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
    process or not: ``validate`` or ``trace check`` reading a pipe ended -15 on SIGTERM
    (no handler), where every other command exits 143. A :class:`Stopped` the command did
    not handle itself (it had no partial report to write) exits 128 + the signal here;
    any other ending kills every process group still tracked and reaps every orphan a
    client left behind, then goes on as it was going. A command run inside another
    program (click's test runner) leaves that program's handlers as it found them, and
    its children alive: the reaping after the command spares the children the program
    had when the command started (a test's own redis-server was killed by an in-process
    ``report merge``).
    """
    global _command_pid, _watchdog_before
    _command_pid = os.getpid()
    _watchdog_before = _watchdog
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
    return _installed_pid == os.getpid()


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


# ------------------------------------------------------------------ -j workers

#: In a ``-j`` worker: the pool's ledger, a file with no name that every worker of the pool
#: appends to (:func:`_note`), so that the parent can remove what a killed worker tracked.
_ledger: tuple[int, int] | None = None  # (the worker's pid, the ledger's descriptor)


def _note(kind: str, path: str) -> None:
    """In a ``-j`` worker, note a tracked temporary ``kind`` ("file" or "dir") in the ledger.

    A worker killed by SIGKILL (the OOM killer) runs no handler: its half-written case
    cache file and its clients' ``{stream}`` folders stayed behind, and only the worker
    knew their names.  One line of JSON a path, appended unbuffered: the line is there
    before the path is used.

    The watchdog starts here if none runs yet: a command that starts no client (``decode -``
    keeps a copy of its stdin) killed by SIGKILL left its folder behind (review-6 R6-2)."""
    watch()
    _tell_watchdog("+" + kind[0], path)
    if _ledger is None or _ledger[0] != os.getpid():
        return
    with contextlib.suppress(OSError):
        os.write(_ledger[1], (json.dumps([kind, path]) + "\n").encode())


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


def worker_init(ledger: int | None = None) -> None:
    """In a ``-j`` worker (forked from the main process): a subreaper of its own clients,
    stopped (its clients with it) when the main process dies, even by SIGKILL; what it
    tracks noted in the pool's ledger, the descriptor ``ledger`` (see :func:`worker_pool`)."""
    global _ledger
    # what the parent tracks is the parent's: a worker's stop handler would remove the
    # parent's folders with its own, and kill a client the parent had running
    _groups.clear()
    _dirs.clear()
    _files.clear()
    become_subreaper()
    _stop_with_parent()
    if ledger is not None:
        _ledger = (os.getpid(), ledger)


def _start_worker(ledger: int, initializer: Callable[[], object] | None) -> None:
    worker_init(ledger)
    if initializer is not None:
        initializer()


def _stop_with_parent() -> None:
    """A SIGKILLed kit cannot stop its workers, but the kernel can signal them.

    Without this, workers blocked on the pool's queue outlived a killed kit for good, each
    holding its clients.  ``PR_SET_PDEATHSIG`` fires when the thread that forked the worker
    ends: the pool forks from the thread that submits, the main one.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if _main_pid is not None and os.getppid() != _main_pid:  # it died before the prctl
        os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def worker_pool(
    jobs: int, initializer: Callable[[], object] | None = None
) -> Iterator[ProcessPoolExecutor]:
    """A process pool of ``jobs`` forked workers, for every caller that grades in parallel.

    A stop signal (or any error) stops it at once, not after its tasks (``with
    ProcessPoolExecutor()`` waits for them).  A worker killed from outside (the OOM
    killer) ends the block with :class:`WorkerLost`, a stop the command reports as
    such, after the results that had come back (:func:`finished`); concurrent.futures'
    ``BrokenProcessPool`` read as the kit's bug.  Whatever happened, no worker is left
    when the block ends, nor a client or temporary file of a worker that could not
    clean up after itself (its ledger, :func:`_note`).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    supervise()  # a stop signal stops the workers (each its own clients)
    watch()  # before the fork: every worker shares it, and holds its end of the pipe
    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    # no name: nothing to leave behind, even when the kit itself is killed
    with tempfile.TemporaryFile(buffering=0) as ledger:
        start = functools.partial(_start_worker, ledger.fileno(), initializer)
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=start)
        try:
            yield pool
        except BrokenProcessPool:
            lost = _lost(stop_pool(pool))
            _clear_ledger(ledger)
            raise lost from None
        except BaseException:
            stop_pool(pool)
            _clear_ledger(ledger)  # a worker that outlived its SIGTERM was killed
            raise
        pool.shutdown()


def _lost(endings: dict[int, int | None]) -> WorkerLost:
    """The worker whose end broke the pool, from how each ended (pid -> exit code).

    concurrent.futures SIGTERMs the others once one is gone (each exits 143 through its
    stop handler), so the one that broke it is the one that ended otherwise; when every
    one ended by SIGTERM, someone sent one a SIGTERM."""
    broke = [(pid, code) for pid, code in endings.items() if code not in (0, None)]
    by_term = (-signal.SIGTERM, 128 + signal.SIGTERM)
    first = next(((p, c) for p, c in broke if c not in by_term), broke[0] if broke else None)
    return WorkerLost(*first) if first else WorkerLost(None, None)


def finished(futures: Iterable[Future[T]]) -> Iterator[tuple[Future[T], T]]:
    """Each future with its result as it comes back, every one that did come back even
    when a worker was lost meanwhile; then the loss (``BrokenProcessPool``, made a
    :class:`WorkerLost` by :func:`worker_pool`)."""
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    broken: BrokenProcessPool | None = None
    for future in as_completed(futures):
        try:
            result = future.result()
        except BrokenProcessPool as exc:
            broken = broken or exc
            continue
        yield future, result
    if broken is not None:
        raise broken


def stop_pool(pool: Any) -> dict[int, int | None]:
    """Stop a ``ProcessPoolExecutor`` now: SIGTERM each worker (it kills its clients and
    exits), SIGKILL any still there after a second, then reap what they left behind
    (the clients of a worker that was killed are this process's orphans now).  Returns
    how each worker ended (pid -> its exit code, negative for a signal)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.terminate()
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + 1.0
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        with contextlib.suppress(Exception):
            if worker.is_alive():
                worker.kill()
                worker.join(0.5)
    reap_orphans()
    return {w.pid: w.exitcode for w in workers if w.pid is not None}


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
