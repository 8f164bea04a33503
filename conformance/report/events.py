"""What a grading session says as it goes, and the handlers that show it.

A command (``run``, ``fuzz``, ``matrix``) emits events; every output — the progress on
stderr, the terminal report, the JSON, JUnit and Markdown files, the matrix's pages — is
a :class:`Handler` of them, built from the command's options.  A new output is a new
handler; no command learns how to render it.

``run``::

    RunStarted → (CheckStarted → CaseGraded × n → CheckFinished) × N → RunFinished
                                                        (or RunStopped at a stop signal)

The grading session (:mod:`stella_conform.conformance.suite.tasks`) tells the middle three;
with ``-j`` several checks are graded at once, so their events interleave, but each check's
cases come before its end.  ``fuzz`` emits :class:`Fuzzing` about once a second instead;
``matrix`` tags each check's events with its cell and ends in :class:`MatrixFinished` (or
:class:`MatrixStopped`), its document.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.suite import CheckResult


@dataclass(frozen=True)
class RunStarted:
    """Grading begins: ``headline`` says what is graded, how, and with how many workers."""

    headline: str


@dataclass(frozen=True)
class CheckStarted:
    """A check begins, one of ``total`` (in the matrix, in ``cell``)."""

    check_id: str
    name: str
    total: int
    cell: str | None = None


@dataclass(frozen=True)
class CaseGraded:
    """The check's ``number``-th case ran on the client and was judged ``verdict``.

    Every case counts, shrinking tries included: the report's case count leaves those out.
    """

    check_id: str
    number: int
    verdict: str
    cell: str | None = None


@dataclass(frozen=True)
class CheckFinished:
    """The ``done``-th of ``total`` checks is graded (in the matrix, in ``cell``)."""

    done: int
    total: int
    result: CheckResult
    cell: str | None = None


@dataclass(frozen=True)
class Fuzzing:
    """A fuzzing session's state, about once a second."""

    seconds: float
    cases: int
    rate: float
    features: int
    new_features: int
    failures: int
    #: The checks that failed so far, sorted.
    failed_checks: tuple[str, ...]


@dataclass(frozen=True)
class RunStopped:
    """A stop signal ended the run: ``report`` holds what was graded before it."""

    report: Report
    why: str


@dataclass(frozen=True)
class RunFinished:
    """The run's report, every check graded (or the client could not be graded at all)."""

    report: Report


@dataclass(frozen=True)
class MatrixStopped:
    """A stop signal ended the matrix: ``document`` holds the tasks graded before it."""

    document: dict[str, Any]
    why: str


@dataclass(frozen=True)
class MatrixFinished:
    """The matrix document, every task graded."""

    document: dict[str, Any]


Event = (
    RunStarted
    | CheckStarted
    | CaseGraded
    | CheckFinished
    | Fuzzing
    | RunStopped
    | RunFinished
    | MatrixStopped
    | MatrixFinished
)


class Handler(Protocol):
    """One output of a session: it shows or writes the events it cares for, ignores the rest."""

    def handle(self, event: Event) -> None: ...


class Echo(Protocol):
    """Where a handler writes text for people (``click.echo`` in the command line)."""

    def __call__(
        self, message: str, *, nl: bool = True, err: bool = False, color: bool | None = None
    ) -> None: ...


def emit(handlers: Iterable[Handler], event: Event) -> None:
    """Give ``event`` to each handler in turn; an error (a file that cannot be written)
    stops the rest, as it stops the command."""
    for handler in handlers:
        handler.handle(event)


@dataclass(frozen=True)
class Session:
    """A command's handlers, in the order they act: progress, files, then the terminal."""

    handlers: tuple[Handler, ...]

    def emit(self, event: Event) -> None:
        emit(self.handlers, event)
