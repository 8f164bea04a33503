"""The grading session: the tasks of a run or a matrix graded in turn, inline or in ``-j``
workers, each step told as an event.

A task is a check and the config it is graded under (in a matrix, a cell's).  As a task
begins the session tells :class:`~stella_conform.conformance.report.events.CheckStarted`,
then :class:`~stella_conform.conformance.report.events.CaseGraded` for each case the client
runs, then :class:`~stella_conform.conformance.report.events.CheckFinished`; the caller's
handlers make progress lines, reports or test outcomes of them.  A worker's events cross to
the main process on a pipe, written before the worker hands back the check's result, so a
handler sees a check's cases before its end; without a listener no event crosses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from stella_conform import stopping
from stella_conform.conformance.checks import Check
from stella_conform.conformance.report.events import (
    CaseGraded,
    CheckFinished,
    CheckStarted,
    Event,
)
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.grading import run_check
from stella_conform.conformance.suite.model import CheckResult, OnCase
from stella_conform.conformance.suite.sessions import shared_sessions
from stella_conform.conformance.suite.workers import worker_pool

#: Where a session's events go: a handler's ``handle``, a session's ``emit``.
Tell = Callable[[Event], None]


@dataclass(frozen=True)
class Task:
    """One check to grade, under ``config``; ``cell`` names a matrix's cell in its events."""

    check: Check
    config: SuiteConfig
    cell: str | None = None


class Grading:
    """The tasks graded so far (``results``, by the task's index), kept when a stop ends
    the session early: the caller reports what was graded before it."""

    def __init__(self, tasks: Sequence[Task], tell: Tell | None = None) -> None:
        self.tasks = list(tasks)
        self.tell = tell
        self.results: dict[int, CheckResult] = {}

    def run(self, jobs: int = 1, groups: Sequence[Sequence[int]] | None = None) -> None:
        """Grade every task in the order given; with ``jobs`` > 1, in workers, each of
        ``groups`` (task indexes, by default one a task) graded in turn by one worker."""
        if jobs <= 1 or len(self.tasks) <= 1:
            with shared_sessions():  # one client process serves the checks (persistent mode)
                for index, task in enumerate(self.tasks):
                    self._finished(index, _grade(task, len(self.tasks), self.tell))
            return
        if groups is None:
            groups = [[index] for index in range(len(self.tasks))]
        with _told(self.tell) as (queue, drain), worker_pool(jobs, _tells_to(queue)) as pool:
            futures = {
                pool.submit(_grade_group, [self.tasks[i] for i in group], len(self.tasks)): group
                for group in groups
            }
            for future, graded in stopping.finished(futures, between=drain, every=0.05):
                for index, result in zip(futures[future], graded, strict=True):
                    self._finished(index, result)

    def _finished(self, index: int, result: CheckResult) -> None:
        self.results[index] = result
        if self.tell is not None:
            cell = self.tasks[index].cell
            self.tell(CheckFinished(len(self.results), len(self.tasks), result, cell))


def _grade(task: Task, total: int, tell: Tell | None) -> CheckResult:
    """One task graded, its start and each of its cases told."""
    if tell is None:
        return run_check(task.check, task.config)
    check, cell = task.check, task.cell
    tell(CheckStarted(check.id, check.name, total, cell))
    number = 0

    def on_case(verdict: str) -> None:
        nonlocal number
        number += 1
        tell(CaseGraded(check.id, number, verdict, cell))

    told: OnCase = on_case
    return run_check(check, task.config, told)


# ---------------------------------------------------------------------- in a worker

#: In a ``-j`` worker: where its events go (the main process reads them), if anyone listens.
_queue: Any = None


def _tells_to(queue: Any) -> Callable[[], None]:
    def start() -> None:
        global _queue
        _queue = queue

    return start


def _tell_main(event: Event) -> None:
    _queue.put(event)


def _grade_group(tasks: list[Task], total: int) -> list[CheckResult]:
    """A worker's share: its tasks graded in turn (a matrix cell's checks share its client),
    their events written to the main process's queue."""
    tell = None if _queue is None else _tell_main
    return [_grade(task, total, tell) for task in tasks]


@contextlib.contextmanager
def _told(tell: Tell | None) -> Iterator[tuple[Any, Callable[[], None]]]:
    """The queue the workers write their events to (none without a listener), and what
    reads every event waiting in it and tells it."""
    if tell is None:
        yield None, lambda: None
        return
    # SimpleQueue writes to its pipe as put() is called (no feeder thread): an event a
    # worker told is readable before the result it hands back after it.  A full pipe
    # holds the worker until it is read: 64 KiB is some 400 events, and it is read every
    # 50 ms, more often than a client answers that many cases.
    queue = stopping.pool_context().SimpleQueue()

    def drain() -> None:
        while not queue.empty():
            tell(queue.get())

    try:
        yield queue, drain
    finally:
        queue.close()
