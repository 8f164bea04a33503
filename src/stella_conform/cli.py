"""The ``stella-conform`` command line.

Exit status everywhere: 0 success, 1 the thing checked is wrong (a stream a
client must reject, a failing check), 2 bad input to the kit (one line on
stderr, never a traceback).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import click

from stella_conform._version import __version__
from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


def fail_setup(message: str) -> NoReturn:
    click.echo(f"stella-conform: {message}", err=True)
    sys.exit(2)


def wire_schema_option(func: F) -> F:
    return click.option(
        "--wire-schema",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Use a stella release's agentevent.schema.json instead of the default vocabulary.",
    )(func)


def load_vocabulary(wire_schema: Path | None) -> Any:
    from stella_conform.schemas.vocabulary import Vocabulary, VocabularyError

    try:
        if wire_schema is None:
            return Vocabulary.default()
        return Vocabulary.from_wire_schema(wire_schema)
    except VocabularyError as exc:
        raise SetupError(str(exc)) from None


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    """``-`` is stdin; anything else must be a readable file."""
    if path == "-":
        yield sys.stdin.buffer
        return
    p = Path(path)
    if not p.exists():
        raise SetupError(f"no such file: {path}")
    if p.is_dir():
        raise SetupError(f"is a directory, not a stream file: {path}")
    try:
        fh = open(p, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise SetupError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        yield fh


class KitGroup(click.Group):
    """Turns :class:`SetupError` into one line and exit 2, and keeps broken pipes quiet."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SetupError as exc:
            fail_setup(str(exc))
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(1)


@click.group(cls=KitGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="stella-conform")
def main() -> None:
    """Conformance tests and fuzzing for clients of stella's machine-readable output."""


@main.command()
@click.argument("stream", metavar="FILE|-")
@click.option(
    "--json", "as_json", is_flag=True, help="Machine-readable output (one JSON document)."
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the verdict.")
@wire_schema_option
def decode(stream: str, as_json: bool, quiet: bool, wire_schema: Path | None) -> None:
    """Show what a correct client does with a stream, line by line.

    Exit 0 when a correct client must accept the stream, 1 when it must reject it.
    """
    from stella_conform.decoder import Kind, RunFold
    from stella_conform.decoder import decode as run_decoder

    vocab = load_vocabulary(wire_schema)
    fold = RunFold()
    lines: list[dict[str, Any]] = []
    with open_input(stream) as fh:
        for outcome in run_decoder(fh, vocab):
            fold.feed(outcome)
            if as_json:
                lines.append(outcome.to_json())
            elif not quiet and outcome.kind is not Kind.BLANK:
                click.echo(_describe(outcome))
    summary = fold.finish()
    if as_json:
        doc = {"vocabulary": vocab.ident, "lines": lines, "summary": summary.to_json()}
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        _print_summary(summary, quiet)
    sys.exit(0 if summary.verdict == "accept" else 1)


_ACTIONS = {
    "known": "handle",
    "unknown": "skip (unrecognized, inert)",
    "torn": "drop (torn final line)",
    "reject": "REJECT",
}


def _describe(outcome: Any) -> str:
    action = _ACTIONS[outcome.kind.value]
    tag = f" {outcome.tag}" if outcome.tag is not None else ""
    reason = f" — {outcome.reason}" if outcome.reason and outcome.kind.value != "known" else ""
    return f"line {outcome.line}: {action}{tag}{reason}"


def _print_summary(summary: Any, quiet: bool) -> None:
    if summary.verdict == "reject":
        click.echo(f"verdict: reject at line {summary.rejected_line}: {summary.reason}")
        if quiet:
            return
    else:
        click.echo("verdict: accept")
        if quiet:
            return
    types = ", ".join(summary.unrecognized_types) or "none"
    click.echo(f"unrecognized: {summary.unrecognized_events} event(s); types: {types}")
    click.echo(
        f"terminator: {summary.terminator or 'none'}; turns completed: {summary.turns_completed}"
    )
    stages = "; ".join(f"{k}: {' > '.join(v) or '-'}" for k, v in summary.stages.items())
    click.echo(f"stages: {stages}")
    if summary.tool_calls:
        calls = ", ".join(f"{c.call_id}={c.status}" for c in summary.tool_calls)
        click.echo(f"tool calls: {calls}")
    final = summary.final_text
    if final is not None and len(final) > 200:
        final = final[:197] + "..."
    click.echo(f"final text: {json.dumps(final, ensure_ascii=False)}")
    if summary.elapsed_ms is not None:
        click.echo(f"elapsed: {summary.elapsed_ms} ms")


@main.command()
@click.argument("stream", metavar="FILE|-")
@wire_schema_option
def validate(stream: str, wire_schema: Path | None) -> None:
    """Validate each line of a stream against the vocabulary's schemas.

    Stricter than decode: it reports every problem, not just the first, and
    flags lines no reader can use. Unrecognized types are reported, not errors.
    """
    from stella_conform.decoder import Kind, classify, iter_physical_lines, parse_line

    vocab = load_vocabulary(wire_schema)
    problems = 0
    lines = 0
    with open_input(stream) as fh:
        for number, (content, _terminated) in enumerate(iter_physical_lines(fh), 1):
            lines = number
            if not content.strip(b" \t\r\n"):
                continue
            value, error = parse_line(content)
            if error is not None:
                problems += 1
                click.echo(f"line {number}: {error}")
                continue
            outcome = classify(number, value, vocab)
            if outcome.kind is Kind.REJECT:
                problems += 1
                click.echo(f"line {number}: {outcome.reason}")
            elif outcome.kind is Kind.UNKNOWN:
                what = outcome.tag if outcome.tag is not None else outcome.reason
                click.echo(f"line {number}: unrecognized ({what})")
    click.echo(f"{lines} line(s), {problems} problem(s) against {vocab.ident}")
    sys.exit(1 if problems else 0)


@main.group()
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
        with open(fixture.stream_path, "rb") as fh:
            problems = compare(fixture.expect, summarize(fh, vocab))
        if problems:
            failed += 1
            for problem in problems:
                click.echo(f"{fixture.name}: {problem}")
    if checked == 0:
        raise SetupError(f"no fixtures (*.jsonl) in {directory}")
    click.echo(f"{checked} fixture(s), {failed} disagreement(s)")
    sys.exit(1 if failed else 0)
