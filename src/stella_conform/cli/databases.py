"""Where the examples come from: the example database (a folder, a shared Redis, a CI
artifact) and the recordings of ``--seed-corpus``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.cli.options import model_option
from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


def artifact_option(func: F) -> F:
    """``--github-artifact``: read a CI artifact's example database beside the local one."""
    return model_option("github_artifact")(func)


#: The local example database of ``run`` and ``fuzz`` (the one they share).
DEFAULT_DATABASE = Path(".stella-conform/hypothesis")


def database_option(func: F) -> F:
    """``--database DIR|redis://HOST:PORT/N``: the local directory, a shared Redis, or both."""
    return model_option("database")(func)


def build_database(
    databases: tuple[str, ...] | None, github_artifact: str | None, *, no_database: bool = False
) -> Any:
    """The example database of ``run`` and ``fuzz``: the directory, with a shared Redis and
    the artifact read beside it (``--no-database``: none of them)."""
    from stella_conform.conformance.store.database import (
        ArtifactSource,
        example_database,
        parse_sources,
    )

    if no_database:
        if databases:
            raise SetupError("--database and --no-database contradict each other")
        return None
    try:
        directory, shared = parse_sources(databases or ())
    except ValueError as exc:
        raise SetupError(f"--database: {exc}") from None
    artifact = None
    if github_artifact:
        try:
            artifact = ArtifactSource.parse(github_artifact)
        except ValueError as exc:
            raise SetupError(f"--github-artifact: {exc}") from None
    try:
        return example_database(directory or DEFAULT_DATABASE, artifact, shared)
    except ModuleNotFoundError as exc:
        raise SetupError(str(exc)) from None


def seed_corpus_option(func: F) -> F:
    """``--seed-corpus PATH``: real recordings a generated stream case may start from."""
    return model_option("seed_corpus")(func)


#: Skipped recordings named one by one before the rest are counted.
SKIPPED_SHOWN = 20


def load_seed_corpus(paths: tuple[Path, ...], vocab: Any) -> tuple[Any, ...]:
    """The recordings under ``paths`` that fit, a warning for each file skipped."""
    if not paths:
        return ()
    from stella_conform.conformance.store.recordings import load
    from stella_conform.safe_text import for_terminal

    corpus = load(paths, vocab)
    for skipped in corpus.skipped[:SKIPPED_SHOWN]:
        click.echo(f"warning: seed corpus: skipped {for_terminal(str(skipped))}", err=True)
    if len(corpus.skipped) > SKIPPED_SHOWN:
        more = len(corpus.skipped) - SKIPPED_SHOWN
        click.echo(f"warning: seed corpus: skipped {more} more file(s)", err=True)
    click.echo(corpus.summary(), err=True)
    return tuple(corpus.recordings)
