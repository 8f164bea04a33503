"""Where the examples come from: the example database (a folder, a shared Redis, a CI
artifact) and the recordings of ``--seed-corpus``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.cli.params import KitPath, PathIn, _unless_url
from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


def artifact_option(func: F) -> F:
    """``--github-artifact``: read a CI artifact's example database beside the local one."""
    return click.option(
        "--github-artifact",
        "github_artifact",
        default=None,
        metavar="OWNER/REPO[/ARTIFACT]",
        envvar="STELLA_CONFORM_GITHUB_ARTIFACT",
        help="Also read (never write) the example database a CI job uploaded as this "
        "GitHub Actions artifact (default name stella-conform-db; needs GITHUB_TOKEN; "
        "env STELLA_CONFORM_GITHUB_ARTIFACT).",
    )(func)


#: The local example database of ``run`` and ``fuzz`` (the one they share).
DEFAULT_DATABASE = Path(".stella-conform/hypothesis")


def database_option(func: F) -> F:
    """``--database DIR|redis://HOST:PORT/N``: the local directory, a shared Redis, or both."""
    return click.option(
        "--database",
        "databases",
        multiple=True,
        # a folder that is a FIFO, a socket, a device or a file: Hypothesis saved nothing
        type=PathIn("folder", _unless_url),
        metavar="DIR|URL",
        envvar="STELLA_CONFORM_DATABASE",
        help="Hypothesis example database: a directory (default "
        f"{DEFAULT_DATABASE}), and/or a shared redis://HOST:PORT/N read and written beside "
        "it (needs stella-conform[redis]); repeatable (env STELLA_CONFORM_DATABASE).",
    )(func)


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


def _named_recordings(
    ctx: click.Context, param: click.Parameter, paths: tuple[Path, ...]
) -> tuple[Path, ...]:
    """A named ``--seed-corpus`` path that is missing, or neither a folder nor a regular
    file, is a usage error here, before any client starts: a typo in a CI job must not
    fuzz without the recordings it names. A file inside a named folder that cannot be read
    stays a warning."""
    for path in paths:
        try:
            os.stat(path)
        except OSError as exc:
            raise click.BadParameter(f"{path}: {exc.strerror or 'cannot be read'}") from None
    return paths


def seed_corpus_option(func: F) -> F:
    """``--seed-corpus PATH``: real recordings a generated stream case may start from."""
    return click.option(
        "--seed-corpus",
        "seed_corpus",
        multiple=True,
        type=KitPath("folder or file"),
        callback=_named_recordings,
        metavar="PATH",
        help="A folder (or file) of recorded streams (.jsonl) and json envelopes: "
        "generated stream cases may start from their runs (repeatable).",
    )(func)


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
