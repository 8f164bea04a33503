"""The matrix's outputs, as handlers of its session: progress, its files, its summary.

The files are the document (``matrix.json``) and its renderings (``matrix.md``,
``matrix.html``, :mod:`.renderers`); a stopped matrix writes them too, with what was
graded before the stop, and says it is incomplete.  Client and vocabulary names come from
the config and paths from the command line: every line printed goes through
:func:`~stella_conform.safe_text.for_terminal`, each name on one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stella_conform.conformance.matrix.renderers import cell_text, to_html, to_markdown
from stella_conform.conformance.report.events import (
    CheckFinished,
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
class MatrixProgress:
    """A line per graded (cell, check) task: rewritten in place on a terminal, one each
    in a log with ``--verbose``, none otherwise."""

    echo: Echo
    tty: bool
    verbose: bool

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.echo(for_terminal(event.headline), err=True)
        elif isinstance(event, CheckFinished):
            done, total = event.done, event.total
            said = f"{terminal_safe(str(event.cell))}: {event.result.id}: {event.result.outcome}"
            line = for_terminal(f"[{done}/{total}] {said}")
            if self.tty:
                self.echo(f"{REWRITE}{line}", err=True, nl=done == total)
            elif self.verbose:
                self.echo(line, err=True)


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
