"""The matrix's outputs, as handlers of its session: progress, its files, its summary.

The files are the document (``matrix.json``) and its renderings (``matrix.md``,
``matrix.html``, :mod:`.renderers`); a stopped matrix writes them too, with what was
graded before the stop, and says it is incomplete.  Client and vocabulary names come from
the config and paths from the command line: every line printed goes through
:func:`~stella_conform.safe_text.for_terminal`, each name on one line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stella_conform.conformance.matrix.counts import CellCounts, cell_status
from stella_conform.conformance.matrix.renderers import ICONS, cell_text, to_html, to_markdown
from stella_conform.conformance.report.events import (
    CaseGraded,
    CheckFinished,
    CheckStarted,
    Echo,
    Event,
    Handler,
    MatrixFinished,
    MatrixStopped,
    RunStarted,
)
from stella_conform.conformance.report.files import write_rendered
from stella_conform.conformance.report.json_report import report_json_text
from stella_conform.conformance.report.progress import REWRITE
from stella_conform.safe_text import for_terminal, terminal_safe


@dataclass(frozen=True)
class MatrixFile:
    """One file of the matrix: ``render`` of its document, written when it ends."""

    path: Path
    render: Callable[[dict[str, Any]], str]

    def handle(self, event: Event) -> None:
        if isinstance(event, MatrixFinished | MatrixStopped):
            doc = event.document
            write_rendered([(self.path, lambda: self.render(doc))])


def matrix_files(
    json_path: Path, markdown_path: Path | None, html_path: Path | None
) -> list[Handler]:
    """The document as JSON, then as Markdown and HTML when asked for."""
    files: list[Handler] = [MatrixFile(json_path, report_json_text)]
    if markdown_path is not None:
        files.append(MatrixFile(markdown_path, to_markdown))
    if html_path is not None:
        files.append(MatrixFile(html_path, to_html))
    return files


@dataclass(frozen=True)
class CellPlan:
    """What the progress of one cell needs: how many of its tasks this run grades, and
    the checks its client's known-failures file lists."""

    tasks: int
    known: frozenset[str] = frozenset()


@dataclass
class MatrixProgress:
    """The matrix's progress on stderr, so a long matrix is never silent.

    Each cell, once its last task is graded, gets a line with its numbers
    (:class:`~.counts.CellCounts`); in a CI log, ``--verbose`` adds a line per task, and
    a long task is named with its cases so far at most every ``every`` seconds when no
    other line came.  On a terminal one line is rewritten in place: the task last
    finished, or the one last started with its cases so far.
    """

    echo: Echo
    tty: bool
    verbose: bool
    #: By cell label (``client × vocabulary``); a cell not named is never said finished.
    cells: Mapping[str, CellPlan] = field(default_factory=dict)
    #: Seconds between a log's lines on a task still running.
    every: float = 30.0
    #: Seconds between two rewrites of a terminal's line.
    redraw: float = 0.1
    clock: Callable[[], float] = time.monotonic
    done: int = field(default=0, init=False)
    total: int = field(default=0, init=False)
    shown: float = field(default=float("-inf"), init=False)
    outcomes: dict[str, list[tuple[str, bool]]] = field(default_factory=dict, init=False)

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.echo(for_terminal(event.headline), err=True)
            self.shown = self.clock()
        elif isinstance(event, CheckFinished):
            self._finished(event)
        elif isinstance(event, CheckStarted):
            self.total = event.total
            if self.tty:
                self._working(event.cell, event.check_id, "")
        elif isinstance(event, CaseGraded):
            wait = self.redraw if self.tty else self.every
            if self.clock() - self.shown >= wait:
                self._working(event.cell, event.check_id, f", {event.number:,} case(s)")

    def _line(self, text: str, *, keep: bool) -> None:
        """``text`` on stderr: on a terminal over the line in place (and kept, ``keep``)."""
        self.shown = self.clock()
        line = for_terminal(text)
        if self.tty:
            self.echo(f"{REWRITE}{line}", err=True, nl=keep)
        else:
            self.echo(line, err=True)

    def _finished(self, event: CheckFinished) -> None:
        self.done, self.total = event.done, event.total
        cell = str(event.cell)
        result = event.result
        plan = self.cells.get(cell)
        listed = plan is not None and result.id in plan.known
        self.outcomes.setdefault(cell, []).append((result.outcome, listed))
        said = f"[{self.done}/{self.total}] {terminal_safe(cell)}: {result.id}: {result.outcome}"
        if self.tty or self.verbose:
            self._line(said, keep=False)
        if plan is not None and len(self.outcomes[cell]) == plan.tasks:
            counts = CellCounts.of_outcomes(self.outcomes[cell])
            mark = ICONS[cell_status(self.outcomes[cell])]
            where = f"[{self.done}/{self.total}] {terminal_safe(cell)}"
            self._line(f"{where} done: {mark} {counts.text()}", keep=True)
        elif self.tty and self.done == self.total:
            self.echo("", err=True)

    def _working(self, cell: str | None, check_id: str, cases: str) -> None:
        """The task being graded (the last started) and its cases so far."""
        where = f"{terminal_safe(str(cell))}: " if cell else ""
        self._line(f"[{self.done}/{self.total}] {where}{check_id}{cases} …", keep=not self.tty)


@dataclass(frozen=True)
class MatrixSummary:
    """On stdout at the end: a row per client (a cell per vocabulary) and the files written;
    a stopped matrix says why and what it wrote."""

    echo: Echo
    paths: Sequence[Path]

    def handle(self, event: Event) -> None:
        wrote = f"wrote {', '.join(terminal_safe(str(p)) for p in self.paths)}"
        if isinstance(event, MatrixStopped):
            self.echo(for_terminal(f"{event.why}; {wrote}"))
        elif isinstance(event, MatrixFinished):
            doc = event.document
            names = [client["name"] for client in doc["clients"]]
            shown = {name: terminal_safe(name) for name in names}
            width = max(len(name) for name in shown.values())
            for name in names:
                row = [
                    f"{terminal_safe(cell['vocabulary'])}: {cell_text(cell['report'])}"
                    for cell in doc["cells"]
                    if cell["client"] == name
                ]
                self.echo(for_terminal(f"{shown[name]:<{width}}  " + "   ".join(row)))
            self.echo(for_terminal(wrote))
