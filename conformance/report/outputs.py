"""The report files a command's options ask for, as handlers of its session."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from stella_conform.conformance.report.events import Handler, RunFinished, emit
from stella_conform.conformance.report.json_report import JsonFile
from stella_conform.conformance.report.junit import JUnitFile
from stella_conform.conformance.report.markdown import MarkdownFile

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report


def report_files(
    *, json_path: Path | None, junit_path: Path | None, markdown_path: Path | None
) -> list[Handler]:
    """``--json``, ``--junit-xml`` and ``--markdown``, in that order (a file that cannot be
    written stops the ones after it)."""
    files: list[Handler] = []
    if json_path is not None:
        files.append(JsonFile(json_path))
    if junit_path is not None:
        files.append(JUnitFile(junit_path))
    if markdown_path is not None:
        files.append(MarkdownFile(markdown_path))
    return files


def write_outputs(
    report: Report, *, json_path: Path | None, junit_path: Path | None, markdown_path: Path | None
) -> None:
    """Write the report files asked for (a client that could not be graded has them too)."""
    files = report_files(json_path=json_path, junit_path=junit_path, markdown_path=markdown_path)
    emit(files, RunFinished(report))
