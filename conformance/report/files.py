"""Reports written to files: checked writable before a run, written whole or not at all."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stella_conform.conformance.report.events import Event, RunFinished, RunStopped
from stella_conform.errors import SetupError
from stella_conform.safe_files import write_atomic

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report


def write_rendered(outputs: Sequence[tuple[Path | None, Callable[[], str]]]) -> None:
    """Render and write each requested output (``None``: not asked for); errors exit 2."""
    for path, render in outputs:
        if path is None:
            continue
        try:
            write_atomic(path, render())  # whole or not at all; never through a planted link
        except OSError as exc:
            raise SetupError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_writable(paths: Sequence[Path | None]) -> None:
    """Fail before running anything if an output path cannot be written."""
    for path in paths:
        if path is None:
            continue
        parent = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise SetupError(f"output path is a directory: {path}")
        if not parent.is_dir():
            raise SetupError(f"output directory does not exist: {parent}")
        if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise SetupError(f"output path is not writable: {path}")


@dataclass(frozen=True)
class ReportFile:
    """One report file, written when the run ends, finished or stopped: a stopped run's
    file holds what was graded and says it is incomplete."""

    path: Path

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished | RunStopped):
            report = event.report
            write_rendered([(self.path, lambda: self.render(report))])

    def render(self, report: Report) -> str:
        raise NotImplementedError
