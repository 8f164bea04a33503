"""Reports after the fact: ``report merge`` and ``report diff``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.params import KitPath
from stella_conform.errors import FAILED, PASSED, SetupError
from stella_conform.safe_text import for_terminal, json_text


@click.group()
def report() -> None:
    """Merge shard reports, or diff two reports (for a pull-request comment)."""


@report.command("merge")
@click.option(
    "--markdown", "markdown_path", type=KitPath("output", dir_okay=False),
    help="Matrix shards: also write the merged matrix as Markdown.",
)  # fmt: skip
@click.option(
    "--html", "html_path", type=KitPath("output", dir_okay=False),
    help="Matrix shards: also write the merged matrix as a self-contained HTML page.",
)  # fmt: skip
@click.argument("output", type=KitPath("output", dir_okay=False))
@click.argument("shards", nargs=-1, required=True, type=KitPath("file"))
def report_merge(
    output: Path, shards: tuple[Path, ...], markdown_path: Path | None, html_path: Path | None
) -> None:
    """Merge the JSON reports of --shard runs (of run or matrix) into OUTPUT.

    Exit status is the whole run's: 0 when nothing blocking failed, 1 otherwise.
    """
    from stella_conform.conformance.matrix import (
        is_matrix,
        load_matrix,
        merge_matrices,
        summary_counts,
    )
    from stella_conform.conformance.report.compare import load_report, merge
    from stella_conform.conformance.report.files import check_writable

    check_writable([output, markdown_path, html_path])
    from stella_conform.errors import read_json_file

    first = read_json_file(shards[0], "report")
    if is_matrix(first):
        merged = merge_matrices([load_matrix(p) for p in shards])
        counts_map = summary_counts(merged)
        _write_matrix(merged, output, markdown_path, html_path)
    else:
        if markdown_path or html_path:
            raise SetupError("--markdown and --html apply to matrix reports only")
        merged = merge([load_report(p) for p in shards])
        counts_map = merged["summary"]
        from stella_conform.conformance.report.files import write_rendered

        write_rendered([(output, lambda: _json_text(merged))])
    counts = ", ".join(f"{n} {o}" for o, n in counts_map.items() if n)
    click.echo(for_terminal(f"merged {len(shards)} report(s) into {output}: {counts}"))
    sys.exit(merged["exit_code"])


def _write_matrix(
    doc: dict[str, Any], json_path: Path, markdown_path: Path | None, html_path: Path | None
) -> None:
    from stella_conform.conformance.matrix.outputs import matrix_files
    from stella_conform.conformance.report.events import MatrixFinished, emit

    emit(matrix_files(json_path, markdown_path, html_path), MatrixFinished(doc))


def _json_text(doc: Any) -> str:
    from stella_conform.conformance.report.json_report import report_json_text

    return report_json_text(doc)


@report.command("diff")
@click.argument("old", type=KitPath("file"))
@click.argument("new", type=KitPath("file"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def report_diff(old: Path, new: Path, as_json: bool) -> None:
    """What newly fails, newly passes or changed outcome from OLD to NEW (Markdown).

    Exit 1 when a check newly fails (a regression), else 0.
    """
    from stella_conform.conformance.report.compare import diff, diff_markdown, load_report

    result = diff(load_report(old), load_report(new))
    click.echo(json_text(json.dumps(result, indent=2)) if as_json else diff_markdown(result))
    sys.exit(FAILED if result["newly_failing"] else PASSED)
