"""Many clients by many vocabularies: ``matrix``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.grading import cap_jobs, parse_shard
from stella_conform.cli.options import model_option
from stella_conform.cli.params import KitPath
from stella_conform.cli.report import _write_matrix
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
    from stella_conform.conformance.matrix import cell_text, load_config, run_matrix
    from stella_conform.safe_files import pin_dir

    pin_dir(out_dir)  # before any client runs (load_config reads hellos): no link followed
    config = load_config(config_path)
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
    from stella_conform.conformance.report.render import check_writable

    check_writable(paths)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, cell: str, result: Any) -> None:
        line = f"[{done}/{total}] {cell}: {result.id}: {result.outcome}"
        if tty:
            click.echo(f"\r\033[K{line}", err=True, nl=done == total)
        elif verbose:
            click.echo(line, err=True)

    cells = len(config.cells())
    click.echo(
        f"grading {len(config.clients)} client(s) x {len(config.vocabularies)} vocabulary(ies) "
        f"= {cells} cell(s) with {config.jobs} worker(s)...",
        err=True,
    )
    stopping.install()  # SIGTERM, SIGHUP, SIGINT: clients and workers stopped, partial matrix
    try:
        doc = run_matrix(config, shard=parsed, progress=progress)
    except stopping.Stopped as stop:
        partial = stop.partial[0] if stop.partial else None
        if isinstance(partial, dict):
            _write_matrix(partial, *paths)
            click.echo(f"{partial['incomplete']}; wrote {', '.join(str(p) for p in paths)}")
        stopping.leave_after(stop, partial["incomplete"] if isinstance(partial, dict) else stop.why)
    _write_matrix(doc, *paths)
    width = max(len(c.name) for c in config.clients)
    for client in config.clients:
        row = [
            f"{cell['vocabulary']}: {cell_text(cell['report'])}"
            for cell in doc["cells"]
            if cell["client"] == client.name
        ]
        click.echo(f"{client.name:<{width}}  " + "   ".join(row))
    click.echo(f"wrote {', '.join(str(p) for p in paths)}")
    sys.exit(doc["exit_code"])
