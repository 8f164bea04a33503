"""The outputs a grading command's options ask for, as one session of handlers."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from stella_conform.cli.grading import use_color
from stella_conform.conformance.report.events import Handler, Session
from stella_conform.conformance.report.outputs import report_files as report_files
from stella_conform.conformance.report.terminal import TerminalReport


def grading_session(
    progress: Handler,
    files: Sequence[Handler],
    *,
    color: str,
    verbose: bool,
    stopped_color: bool | None = None,
) -> Session:
    """Progress on stderr, then the report files asked for (:func:`report_files`), then the
    report on stdout (coloured as ``--color`` and stdout say; ``stopped_color``: a stopped
    run's, if other)."""
    out_color = use_color(color, sys.stdout)
    terminal = TerminalReport(
        click.echo, verbose=verbose, color=out_color, stopped_color=stopped_color
    )
    return Session((progress, *files, terminal))
