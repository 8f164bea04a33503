"""The ``-j`` worker processes that grade checks, each sharing its client between them."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

from stella_conform import stopping
from stella_conform.conformance.suite.sessions import SharedSession
from stella_conform.generators.engine.internals import collect_local_constants


def _before_fork() -> None:
    """Work every forked worker would otherwise repeat, done once in the parent.

    Hypothesis reads the constants of every module outside site-packages (the kit's own,
    in an editable install) on its first draw, caching them under ``.hypothesis/`` in the
    working directory: in a fresh directory, a noticeable cost per process.  Collected here
    (:func:`~stella_conform.generators.engine.internals.collect_local_constants`), the
    workers inherit it.
    """
    collect_local_constants()


def _worker_init(then: Callable[[], object] | None) -> None:
    """A ``-j`` worker (:func:`stopping.worker_pool`): its checks share its client; the
    shared client is shut down when the worker exits (multiprocessing runs its finalizers)."""
    from multiprocessing import util

    SharedSession.on = True
    SharedSession.session = None  # a forked parent's client is not this worker's
    util.Finalize(None, SharedSession.close, exitpriority=10)
    if then is not None:
        then()


@contextlib.contextmanager
def worker_pool(
    jobs: int, then: Callable[[], object] | None = None
) -> Iterator[ProcessPoolExecutor]:
    """The pool of ``-j`` workers that grade checks: :func:`stopping.worker_pool` (stopped
    at once by a stop signal; a worker killed from outside is a :class:`stopping.Stopped`
    too), each worker sharing its client between its checks; ``then`` is called in each
    worker as it starts."""
    stopping.supervise()
    _before_fork()
    with stopping.worker_pool(jobs, functools.partial(_worker_init, then)) as pool:
        yield pool
