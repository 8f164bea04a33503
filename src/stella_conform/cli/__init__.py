"""The ``stella-conform`` command line: a table of contents.

Each command group lives in its own module; this one only assembles them.
Exit status everywhere: 0 success, 1 the thing checked is wrong (a stream a
client must reject, a failing check), 2 bad input to the kit (one line on
stderr, never a traceback), 3 an internal error of the kit (a bug: traceback
and one line on stderr; never 1, which would read as a verdict), 128 + N
stopped by signal N, or a ``-j`` worker killed by it from outside (137: the
OOM killer's SIGKILL; one line on stderr, reports marked incomplete).
"""

from __future__ import annotations

import click

from stella_conform._version import __version__
from stella_conform.allocator import keep_large_blocks
from stella_conform.cli.checks import list_checks
from stella_conform.cli.corpus import corpus
from stella_conform.cli.fuzz import fuzz
from stella_conform.cli.group import KitGroup
from stella_conform.cli.init import init
from stella_conform.cli.matrix import matrix
from stella_conform.cli.replay import replay
from stella_conform.cli.report import report
from stella_conform.cli.run import run
from stella_conform.cli.smoke import smoke
from stella_conform.cli.streams import decode, validate
from stella_conform.cli.trace import trace
from stella_conform.cli.vocabulary import vocabulary


@click.group(cls=KitGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="stella-conform")
def main() -> None:
    """Conformance tests and fuzzing for clients of stella's machine-readable output."""
    keep_large_blocks()  # megabyte cases without a page fault per page (allocator.py)


for command in (decode, validate, corpus, run, replay, smoke, list_checks, trace, report, matrix):
    main.add_command(command)
main.add_command(init)
main.add_command(vocabulary)
main.add_command(fuzz)

__all__ = ["main"]
