"""Generated corpora in the fixture format: ``corpus export`` and ``corpus check``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from stella_conform.cli._common import load_vocabulary, stream_lines, wire_schema_option
from stella_conform.errors import SetupError
from stella_conform.safe_files import open_regular


@click.group()
def corpus() -> None:
    """Generate and check fixture corpora (NAME.jsonl + NAME.expect.json)."""


@corpus.command("export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--count", "-n", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", "-s", type=int, default=0, show_default=True)
@click.option("--max-mutations", type=click.IntRange(min=0), default=2, show_default=True)
@click.option("--force", is_flag=True, help="Replace a corpus already in DIRECTORY.")
@wire_schema_option
def corpus_export(
    directory: Path,
    count: int,
    seed: int,
    max_mutations: int,
    force: bool,
    wire_schema: Path | None,
) -> None:
    """Write generated cases in the fixture format; the same seed gives the same files."""
    from stella_conform.generators.export import export_corpus

    vocab = load_vocabulary(wire_schema)
    names = export_corpus(
        directory, count=count, seed=seed, vocab=vocab, force=force, max_mutations=max_mutations
    )
    click.echo(f"wrote {len(names)} case(s) to {directory} (seed {seed}, {vocab.ident})")


@corpus.command("check")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@wire_schema_option
def corpus_check(directory: Path, wire_schema: Path | None) -> None:
    """Check that the reference decoder agrees with every expectation file in DIRECTORY."""
    from stella_conform.corpus import compare, iter_fixtures
    from stella_conform.decoder import summarize

    vocab = load_vocabulary(wire_schema)
    checked = failed = 0
    for fixture in iter_fixtures(directory):
        checked += 1
        try:
            fh = open_regular(fixture.stream_path)
        except OSError as exc:
            raise SetupError(f"cannot read fixture stream: {exc}") from None
        with fh:
            problems = compare(fixture.expect, summarize(stream_lines(fh), vocab))
        if problems:
            failed += 1
            for problem in problems:
                click.echo(f"{fixture.name}: {problem}")
    if checked == 0:
        raise SetupError(f"no fixtures (*.jsonl) in {directory}")
    click.echo(f"{checked} fixture(s), {failed} disagreement(s)")
    sys.exit(1 if failed else 0)
