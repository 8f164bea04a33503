"""Many clients by many vocabularies: ``matrix``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.grading import cap_jobs, parse_shard
from stella_conform.cli.options import model_option
from stella_conform.cli.params import KitPath
from stella_conform.errors import SetupError


@click.command()
@click.argument("config_path", metavar="CONFIG.toml", type=KitPath("file"))
@click.option(
    "--out", "out_dir", type=KitPath("folder", file_okay=False),
    default=Path("matrix-report"), show_default=True,
    help="Directory for matrix.json, matrix.md, matrix.html and the failing cases (failures/).",
)  # fmt: skip
@model_option("shard", help="Grade only shard I of N of the (cell, check) tasks.")
@model_option("jobs", default=None, show_default=False, help="Parallel workers (config: jobs).")
@model_option(
    "examples",
    default=None,
    show_default=False,
    help="Generated cases per check; from 25 on, each check's strata too (docs/generators.md).",
)
@model_option("seed", default=None, show_default=False, help="Seed (config: seed).")
@model_option("verbose", help="One line per graded check.")
def matrix(
    config_path: Path,
    out_dir: Path,
    shard: str | None,
    jobs: int | None,
    examples: int | None,
    seed: int | None,
    verbose: bool,
) -> None:
    """Grade every client of CONFIG.toml against every vocabulary: one table.

    Writes OUT/matrix.json, OUT/matrix.md and OUT/matrix.html (self-contained). Exit 1
    when any client fails a check it must pass, 2 on a bad config.
    """
    from stella_conform import stopping
    from stella_conform.conformance.matrix import load_config, run_matrix
    from stella_conform.conformance.matrix.outputs import (
        MatrixProgress,
        MatrixSummary,
        matrix_files,
    )
    from stella_conform.conformance.matrix.run import cell_plans
    from stella_conform.conformance.report.events import (
        MatrixFinished,
        MatrixStopped,
        RunStarted,
        Session,
    )
    from stella_conform.conformance.report.files import check_writable
    from stella_conform.safe_files import pin_dir

    pin_dir(out_dir)  # before any client runs (load_config reads hellos): no link followed
    config = load_config(config_path)
    _say_recordings(config)
    if jobs is not None:
        config.jobs = jobs
    config.jobs = cap_jobs(config.jobs, "-j" if jobs is not None else "[matrix] jobs =")
    if examples is not None:
        config.examples = examples
    if seed is not None:
        config.seed = seed
    if config.failures_dir is None:
        config.failures_dir = out_dir / "failures"  # failures travel with the report
    pin_dir(config.failures_dir)
    parsed = parse_shard(shard) if shard else None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SetupError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    paths = [out_dir / "matrix.json", out_dir / "matrix.md", out_dir / "matrix.html"]
    check_writable(paths)
    session = Session(
        (
            MatrixProgress(click.echo, sys.stderr.isatty(), verbose, cell_plans(config, parsed)),
            *matrix_files(*paths),
            MatrixSummary(click.echo, paths),
        )
    )
    cells = len(config.cells())
    session.emit(
        RunStarted(
            f"grading {len(config.clients)} client(s) x {len(config.vocabularies)} "
            f"vocabulary(ies) = {cells} cell(s) with {config.jobs} worker(s)..."
        )
    )
    stopping.install()  # SIGTERM, SIGHUP, SIGINT: clients and workers stopped, partial matrix

    try:
        doc = run_matrix(config, shard=parsed, tell=session.emit)
    except stopping.Stopped as stop:
        partial = stop.partial[0] if stop.partial else None
        if isinstance(partial, dict):
            session.emit(MatrixStopped(partial, partial["incomplete"]))
        stopping.leave_after(stop, partial["incomplete"] if isinstance(partial, dict) else stop.why)
    session.emit(MatrixFinished(doc))
    sys.exit(doc["exit_code"])


def _say_recordings(config: Any) -> None:
    """Each column's recordings, as ``run --seed-corpus`` says them: the files skipped
    (each a warning), then how many were read."""
    from stella_conform.cli.databases import SKIPPED_SHOWN
    from stella_conform.safe_text import for_terminal

    for vocab in config.vocabularies:
        corpus = vocab.corpus
        if corpus is None:
            continue
        column = f"vocabulary {vocab.name!r}"
        for skipped in corpus.skipped[:SKIPPED_SHOWN]:
            click.echo(for_terminal(f"warning: {column}: seed corpus: skipped {skipped}"), err=True)
        if len(corpus.skipped) > SKIPPED_SHOWN:
            more = len(corpus.skipped) - SKIPPED_SHOWN
            click.echo(for_terminal(f"warning: {column}: skipped {more} more file(s)"), err=True)
        click.echo(for_terminal(f"{column}: {corpus.summary()}"), err=True)
