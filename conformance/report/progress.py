"""Progress on stderr while a session runs, so a slow run is never silent.

On a terminal one line is rewritten in place, naming the check being graded and its cases
so far; in a CI log each finished check (or each fuzzing interval) gets its own line the
moment it is known.  A headline names what the client said of itself (``--mode auto``'s
reason); every line goes through :func:`~stella_conform.safe_text.for_terminal`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from stella_conform.conformance.report.events import (
    CaseGraded,
    CheckFinished,
    CheckStarted,
    Echo,
    Event,
    Fuzzing,
    RunFinished,
    RunStarted,
)
from stella_conform.conformance.report.failures import terminal_line
from stella_conform.conformance.report.terminal import colour_outcome
from stella_conform.conformance.suite import CheckResult
from stella_conform.safe_text import for_terminal

#: Rewrites the terminal's current line (cursor control, not colour: kept whatever
#: ``--color`` says).
REWRITE = "\r\033[K"


def progress_line(
    done: int, total: int, result: CheckResult, *, color: bool = False, message: bool = True
) -> str:
    """One finished check, as progress: ``[3/17] PASS R3.unknown-type-inert (1.2 s): ...``."""
    word = result.outcome.upper()
    shown = colour_outcome(word) if color else word
    line = f"[{done}/{total}] {shown} {result.id} ({result.seconds:.1f} s)"
    if not message:
        return line
    said = for_terminal(terminal_line(result.message))
    return f"{line}: {said if len(said) <= 120 else said[:119] + '…'}"


@dataclass
class CheckProgress:
    """``run``'s progress: a line per finished check; on a terminal, without its message
    (the line is rewritten, and the report shows every message at the end), and between
    two ends the check last started with its cases so far, at most every ``every``
    seconds (a long check is seen to be working)."""

    echo: Echo
    tty: bool
    color: bool = False
    every: float = 0.1
    clock: Callable[[], float] = time.monotonic
    done: int = field(default=0, init=False)
    total: int = field(default=0, init=False)
    shown: float = field(default=float("-inf"), init=False)

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.echo(for_terminal(event.headline), err=True)  # it may quote the client
        elif isinstance(event, CheckFinished):
            self.done, self.total = event.done, event.total
            done, total = event.done, event.total
            line = progress_line(done, total, event.result, color=self.color, message=not self.tty)
            if self.tty:
                self.echo(f"{REWRITE}{line}", err=True, nl=done == total, color=True)
            else:
                self.echo(line, err=True, color=self.color)
        elif self.tty and isinstance(event, CheckStarted):
            self.total = event.total
            self._working(event.check_id, "")
        elif self.tty and isinstance(event, CaseGraded) and self.clock() - self.shown >= self.every:
            self._working(event.check_id, f": {event.number:,} case(s)")

    def _working(self, check_id: str, cases: str) -> None:
        """The check being graded (the last started), and its cases so far."""
        self.shown = self.clock()
        line = f"[{self.done}/{self.total}] {for_terminal(check_id)}{cases} …"
        self.echo(f"{REWRITE}{line}", err=True, nl=False, color=True)


def clock(seconds: float) -> str:
    """``1:02:03``, or ``02:03`` under an hour."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:02d}:{rest % 60:02d}"


@dataclass
class FuzzProgress:
    """``fuzz``'s progress: cases, rate, coverage and failures, at most once every
    ``every`` seconds of the session."""

    echo: Echo
    tty: bool
    every: float
    last: float = 0.0

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.echo(for_terminal(event.headline), err=True)  # it may quote the client
        elif isinstance(event, Fuzzing):
            self._show(event)
        elif isinstance(event, RunFinished) and self.tty:
            self.echo("", err=True)  # the rewritten line ends before the report

    def _show(self, p: Fuzzing) -> None:
        if p.seconds - self.last < self.every:
            return
        self.last = p.seconds
        failed = p.failed_checks
        line = (
            f"[{clock(p.seconds)}] {p.cases:,} cases ({p.rate:.0f}/s), "
            f"coverage {p.features:,} features (+{p.new_features}), "
            f"failures {p.failures}" + (f" ({', '.join(failed)})" if failed else "")
        )
        if self.tty:
            self.echo(f"{REWRITE}{line}", err=True, nl=False)
        else:
            self.echo(line, err=True)
