"""Fixture corpora: ``corpus export``, ``corpus expect``, ``corpus check`` and ``corpus diff``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.client import load_vocabulary, wire_schema_option
from stella_conform.cli.input_files import stream_lines
from stella_conform.cli.params import KitPath, Seconds
from stella_conform.errors import FAILED, PASSED, SetupError
from stella_conform.safe_files import open_regular
from stella_conform.safe_text import for_terminal


@click.group()
def corpus() -> None:
    """Generate and check fixture corpora (NAME.jsonl + NAME.expect.json)."""


@corpus.command("export")
@click.argument("directory", type=KitPath("folder", file_okay=False))
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


@corpus.command("expect")
@click.argument("streams", nargs=-1, required=True, type=KitPath("file", dir_okay=False))
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="RULE",
    help="What the case exercises (repeatable): R1..R6, or a further guarantee the "
    "expectation schema names (default R1).",
)
@click.option("--description", default="", help="What the case is, in words.")
@click.option("--force", is_flag=True, help="Replace an expectation file already there.")
@wire_schema_option
def corpus_expect(
    streams: tuple[Path, ...],
    rules: tuple[str, ...],
    description: str,
    force: bool,
    wire_schema: Path | None,
) -> None:
    """Write NAME.expect.json beside each NAME.jsonl: the reference decoder's reading of it,
    every other conforming reading included, as the kit's fixtures and saved cases hold it.

    A stream of your own becomes a case `replay` judges in full (and `replay --check`, and
    `corpus check`, read); the stream itself is not changed.
    """
    from stella_conform.oracle.corpus import (
        EXPECT_SUFFIX,
        case_bytes,
        expectation_from,
        validate_expectation,
    )
    from stella_conform.oracle.readings import also_conforming, read_stream
    from stella_conform.schemas.vocabulary import load_schema

    known = load_schema("expectation.schema.json")["properties"]["rules"]["items"]["enum"]
    for rule in rules:
        if rule not in known:
            named = ", ".join(known)
            raise SetupError(f"--rule {rule!r}: not a rule an expectation names ({named})")
    vocab = load_vocabulary(wire_schema)
    planned = []
    for stream in streams:
        if not stream.name.endswith(".jsonl"):
            raise SetupError(f"{stream}: a stream case is named NAME.jsonl")
        target = stream.with_name(stream.name.removesuffix(".jsonl") + EXPECT_SUFFIX)
        if os.path.lexists(target) and not force:
            raise SetupError(f"{target} exists (--force replaces it)")
        planned.append((stream, target))
    for stream, target in planned:  # every target checked before any is written
        readings = read_stream(case_bytes(stream, follow=False), vocab)
        expect = expectation_from(
            readings.default.summary,
            rules=rules,
            description=description,
            also_conforming=also_conforming(readings),
        )
        validate_expectation(expect, str(target))
        _write_expectation(target, expect)
        others = len(expect.get("also_conforming", ()))
        verdict = expect["verdict"] + (
            f" at line {expect['rejected_line']}" if expect["verdict"] == "reject" else ""
        )
        also = f"; {others} other conforming reading(s)" if others else ""
        click.echo(for_terminal(f"wrote {target} ({verdict}{also}; {vocab.ident})"))


def _write_expectation(target: Path, expect: dict[str, Any]) -> None:
    """The expectation file as the fixture format writes it (``write_fixture``): indented,
    UTF-8, a lone surrogate (a registered reading) kept escaped; never through a link."""
    import json

    from stella_conform.safe_files import write_atomic

    text = json.dumps(expect, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(expect, indent=2) + "\n"
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise SetupError(f"cannot write {target}: {exc.strerror or exc}") from None


@corpus.command("check")
@click.argument("directory", type=KitPath("folder", file_okay=False))
@wire_schema_option
def corpus_check(directory: Path, wire_schema: Path | None) -> None:
    """Check that the reference decoder agrees with every expectation file in DIRECTORY."""
    from stella_conform.oracle.corpus import compare, iter_fixtures
    from stella_conform.oracle.decoder import summarize

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
    sys.exit(FAILED if failed else PASSED)


@corpus.command("diff")
@click.argument("directories", nargs=-1, type=KitPath("folder", file_okay=False))
@click.option(
    "--oracle",
    "oracle",
    required=True,
    help="The external decoder, as one shell-quoted command: run once per case with the "
    "stream on stdin (answer: docs/contract-readings.md).",
)
@click.option(
    "--generated",
    "-n",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    help="Generated cases to compare as well (0: fixtures only).",
)
@click.option("--seed", "-s", type=int, default=0, show_default=True)
@click.option("--timeout", type=Seconds(min=0.1), default=10.0, show_default=True)
@click.option("--json", "json_path", type=KitPath("output", dir_okay=False))
@wire_schema_option
def corpus_diff(
    directories: tuple[Path, ...],
    oracle: str,
    generated: int,
    seed: int,
    timeout: float,
    json_path: Path | None,
    wire_schema: Path | None,
) -> None:
    """Compare the kit's oracle with an external decoder over fixtures and a generated corpus.

    DIRECTORIES default to the bundled fixtures; any folder of .jsonl recordings will do
    (expectation files are not needed: the oracle computes them). Prints agreement per
    corpus and every disagreement grouped by class: the registered reading that explains
    it, a documented bug of stella's own reader, or "unexplained". Generated cases are
    named as `corpus export` names them for the same seed. Exit 0 when every disagreement
    is explained by a reading or a documented bug, 1 when one is not.
    """
    import shlex

    from stella_conform import stopping
    from stella_conform.conformance.clients.runner import resolve_client
    from stella_conform.conformance.differential import render, to_json

    try:
        words = shlex.split(oracle)
    except ValueError as exc:  # an unbalanced quote
        raise SetupError(f"--oracle: {exc}") from None
    command = resolve_client(words)  # a missing program is exit 2, not 0 % agreement
    vocab = load_vocabulary(wire_schema)
    results: list[Any] = []
    stopping.install()  # SIGTERM, SIGHUP, SIGINT: oracles killed, what was compared shown
    try:
        _diff_all(results, directories, command, vocab, generated, seed, timeout)
    except stopping.Stopped as stop:
        results += stop.partial
        why = f"stopped by {stop.name} after {sum(r.cases for r in results)} case(s)"
        click.echo(render(results))
        click.echo(f"INCOMPLETE: {why}")
        _write_diff(json_path, {**to_json(results), "incomplete": why})
        stopping.leave(stop.exit_code)
    click.echo(render(results))
    _write_diff(json_path, to_json(results))
    sys.exit(FAILED if any(r.unexplained for r in results) else PASSED)


def _write_diff(json_path: Path | None, doc: dict[str, Any]) -> None:
    import json

    from stella_conform.safe_files import write_atomic

    if json_path is not None:
        try:
            write_atomic(json_path, json.dumps(doc, indent=2) + "\n")
        except OSError as exc:
            raise SetupError(f"cannot write {json_path}: {exc.strerror or exc}") from None


def _diff_all(
    results: list[Any],
    directories: tuple[Path, ...],
    command: tuple[str, ...],
    vocab: Any,
    generated: int,
    seed: int,
    timeout: float,
) -> None:
    """Each corpus against the oracle, its result appended as it is done."""
    from stella_conform.conformance.differential import DiffCase, diff_corpus
    from stella_conform.generators.export import case_name, draw_cases
    from stella_conform.oracle.corpus import bundled_fixtures_dir

    for directory in directories or (bundled_fixtures_dir(),):
        if not directory.is_dir():
            raise SetupError(f"not a directory: {directory}")
        if not any(_stream(p) for p in directory.iterdir()):
            raise SetupError(f"no recordings (*.jsonl) in {directory}")
        # read one at a time as the oracle is asked, so a folder of big recordings is not
        # held whole before the first is compared
        read = [0]
        recordings = _recordings(directory, read)
        name = "fixtures" if not directories else str(directory)
        result = diff_corpus(name, recordings, command, vocab, timeout)
        if not read[0]:  # every one skipped: nothing of the folder was compared
            raise SetupError(f"no recording of {directory} could be read (each skipped above)")
        results.append(result)
    if generated:
        label = f"generated (seed {seed})"
        drawn = [  # named as `corpus export --seed S` names the same case's files
            DiffCase(label, case_name(index, case), case.stream)
            for index, case in enumerate(draw_cases(generated, seed, vocab), 1)
        ]
        results.append(diff_corpus(label, drawn, command, vocab, timeout))


def _stream(path: Path) -> bool:
    return path.name.endswith(".jsonl") and not path.name.startswith(".")


def _recordings(directory: Path, read: list[int]) -> Iterator[Any]:
    """The ``*.jsonl`` streams of a folder, by name (fixtures or plain recordings alike),
    read by the rule ``--seed-corpus`` holds (:func:`recordings.folder_files`): a link, a
    FIFO or a file over the case cap is skipped with a warning, the rest compared, every
    one of them (read one at a time, nothing held: no cap on how many); ``read[0]``
    counts them."""
    from stella_conform.conformance.differential import DiffCase
    from stella_conform.conformance.store.recordings import Skipped, folder_files
    from stella_conform.safe_files import CASE_CAP

    files = folder_files(directory, _stream, CASE_CAP, recursive=False, limit=None)
    for path, data in files:
        if isinstance(data, Skipped):
            click.echo(f"warning: corpus diff: skipped {for_terminal(str(data))}", err=True)
        elif data is not None:
            read[0] += 1
            yield DiffCase(str(directory), path.name.removesuffix(".jsonl"), data)
