"""The ``-j`` worker pool: forked workers that are subreapers of their own clients, stop
with the kit (even a SIGKILLed one), note their temporary paths in the pool's ledger, and
are all gone when the block ends; a worker killed from outside is a :class:`WorkerLost`."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from stella_conform.stopping import state
from stella_conform.stopping.ledger import _clear_ledger
from stella_conform.stopping.reaper import become_subreaper, reap_orphans
from stella_conform.stopping.signals import supervise
from stella_conform.stopping.stops import WorkerLost
from stella_conform.stopping.watchdog_link import watch

if TYPE_CHECKING:  # the pool's modules are imported when a pool is made
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
_PR_SET_PDEATHSIG = 1


def worker_init(ledger: int | None = None) -> None:
    """In a ``-j`` worker (forked from the main process): a subreaper of its own clients,
    stopped (its clients with it) when the main process dies, even by SIGKILL; what it
    tracks noted in the pool's ledger, the descriptor ``ledger`` (see :func:`worker_pool`)."""
    # what the parent tracks is the parent's: a worker's stop handler would remove the
    # parent's folders with its own, and kill a client the parent had running
    state.groups.clear()
    state.dirs.clear()
    state.files.clear()
    become_subreaper()
    _stop_with_parent()
    if ledger is not None:
        state.ledger = (os.getpid(), ledger)


def _start_worker(ledger: int, initializer: Callable[[], object] | None) -> None:
    worker_init(ledger)
    if initializer is not None:
        initializer()


def _stop_with_parent() -> None:
    """A SIGKILLed kit cannot stop its workers, but the kernel can signal them.

    Otherwise workers blocked on the pool's queue would outlive a killed kit for good, each
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
    if state.main_pid is not None and os.getppid() != state.main_pid:  # it died before the prctl
        os.kill(os.getpid(), signal.SIGTERM)


def pool_context() -> Any:
    """The multiprocessing context the pool's workers start in: forked where the system
    can fork (the workers inherit the parent's imports), spawned elsewhere.  What the
    parent shares with its workers (a queue) is made in the same context."""
    import multiprocessing

    return multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")


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
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    supervise()  # a stop signal stops the workers (each its own clients)
    watch()  # before the fork: every worker shares it, and holds its end of the pipe
    ctx = pool_context()
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


def finished(
    futures: Iterable[Future[T]],
    between: Callable[[], object] | None = None,
    every: float = 0.2,
) -> Iterator[tuple[Future[T], T]]:
    """Each future with its result as it comes back, every one that did come back even
    when a worker was lost meanwhile; then the loss (``BrokenProcessPool``, made a
    :class:`WorkerLost` by :func:`worker_pool`).  ``between`` is called at least every
    ``every`` seconds while waiting, and before each result is handed back (what the
    workers said meanwhile, read from a queue, comes before it)."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    broken: BrokenProcessPool | None = None
    pending = set(futures)
    while pending:
        done, pending = wait(
            pending, timeout=None if between is None else every, return_when=FIRST_COMPLETED
        )
        if between is not None:
            between()
        for future in done:
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
