"""One case at a time: ``replay``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.client import client_options, make_client, wire_schema_option
from stella_conform.cli.echo import say
from stella_conform.cli.grading import claim_options, told_on_the_command_line
from stella_conform.cli.options import ConfiguredCommand
from stella_conform.cli.params import MODULE_SPEC, KitPath
from stella_conform.errors import FAILED, PASSED, SetupError
from stella_conform.safe_text import clip, for_terminal


@click.command(cls=ConfiguredCommand)
@client_options
@wire_schema_option
@click.option(
    "--check",
    "check_id",
    metavar="ID",
    help="Judge the case as this check does (needed for dashboard, recorder, envelope and "
    "wrapper cases; the report's replay command includes it).",
)
@click.option(
    "--parser",
    "parser_spec",
    type=MODULE_SPEC,
    metavar="MODULE:FUNCTION",
    help="Replay against an in-process Python parser instead of a command "
    "(FILE.py:FUNCTION also works; the pytest plugin's replay line includes it).",
)
@click.option(
    "--reject",
    "reject_specs",
    type=MODULE_SPEC,
    metavar="MODULE:EXCEPTION",
    multiple=True,
    help="With --parser: an exception type that means the parser rejected the stream "
    "(repeatable; default ValueError). Any other exception is a crash.",
)
@click.option(
    "--cwd",
    "client_cwd",
    type=KitPath("folder", exists=True, file_okay=False),
    help="Start the client in this directory (the matrix's replay commands name the "
    "config's folder, which its commands' relative paths are relative to).",
)
@claim_options
@click.argument("case", metavar="CASE|fixture:NAME", type=KitPath("file"))
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def replay(
    case: Path,
    command: tuple[str, ...],
    mode: str,
    timeout: float,
    line_timeout: float,
    wire_schema: Path | None,
    check_id: str | None,
    parser_spec: str | None,
    reject_specs: tuple[str, ...],
    client_cwd: Path | None,
    knows: str | None,
    reads: str | None,
    computes: str | None,
    summary_only: bool | None,
) -> None:
    """Re-run one saved case: stella-conform replay CASE -- CMD [ARGS...]

    CASE is a saved case file, or fixture:NAME for one of the kit's bundled fixtures.

    Shows what the client did against what a correct client does. A stream case without
    --check is judged on everything its expectation (CASE's NAME.expect.json, or the
    reference decoder's whole reading) holds that the client tells: its verdict, each
    line it reports, each summary field it computes. Exit 0 when the client agrees under
    some conforming reading, 1 when not.
    """
    from stella_conform.conformance.checks import GradedCase
    from stella_conform.conformance.clients.runner import run_once
    from stella_conform.conformance.report.excerpt import decisive_lines, show_stream
    from stella_conform.conformance.suite.replay import held_fields, judge_whole, replayed_fields
    from stella_conform.conformance.suite.travel import case_argument
    from stella_conform.oracle.corpus import case_bytes

    case = case_argument(str(case))  # fixture:NAME is the bundled corpus's
    if not case.is_file():
        raise SetupError(f"no such case file: {case}")
    # what is played to the client: a regular file, not a link (one to a 0600 file would
    # leak it), of at most CASE_CAP bytes (a case of gigabytes would not fit in memory)
    stream = case_bytes(case, follow=False)
    # every value given is checked before the client starts
    told = told_on_the_command_line()
    stella = told.vocab
    as_check = check_id is not None or case.suffix == ".json"
    # what the case's expectation holds, read (and refused) before the client starts
    held, disagreements = ((), []) if as_check else held_fields(case, stream, stella)
    client = _replay_client(
        command, mode, timeout, line_timeout, parser_spec, reject_specs, client_cwd
    )
    mode = client.mode
    hello = None
    if client.function is None:
        from stella_conform.conformance.clients.runner import ensure_mode_supported

        hello = ensure_mode_supported(client)
    claims = told.claims(hello)
    vocab = claims.vocabulary(stella)
    client = dataclasses.replace(client, summary_only=claims.summary_only)
    if as_check:
        _replay_as_check(case, stream, check_id, client, stella, claims)
    for problem in disagreements:  # a hand-written expectation: the decoder's values judge
        click.echo(
            for_terminal(f"stella-conform: warning: {case.name}'s expectation file: {problem} "
                         "(the decoder's reading is what is judged; stella-conform corpus "
                         "expect writes the file from it)"),
            err=True,
        )  # fmt: skip
    graded = GradedCase(case.name, stream, "saved", vocab=vocab)
    obs = run_once(client, graded.stream)
    # judged as run judges: under every conforming reading of the stream, on everything
    # the expectation holds that the client tells (its verdict, its lines, the fields it
    # computes); the tables follow the reading the judgment was made under
    fields = replayed_fields(held, obs.summary, claims.computes)
    verdict = judge_whole(graded, obs, fields)
    shown = next(
        (graded.under(a) for a in graded.alternatives if a.reading == verdict.reading), graded
    )
    keep = decisive_lines(shown, obs, verdict.message)
    say(_stream_header("stream", len(graded.stream), keep, "it"))
    say(show_stream(graded.stream, keep=keep))
    say("")
    column = "correct client" + (f" (reading {shown.reading_id})" if shown.reading_id else "")
    width = max(28, len(column) + 1)
    say(f"{'line':>5}  {column:<{width}} client")
    for row in _line_rows(shown, obs, mode, width):
        say(row)
    differing = _differing_fields(shown, obs, fields)
    if differing:
        say("\nsummary, where it differs (expected against the client's):")
        for line in differing:
            say(line)
    say(f"\nexpected: {_expected_verdicts(graded)}")
    say(f"client:   {obs.describe()}")
    _echo_stderr(obs)
    say(f"judgment: {verdict.verdict}" + (f": {verdict.message}" if verdict.message else ""))
    sys.exit(PASSED if verdict.verdict == "pass" else FAILED)


def _replay_client(
    command: tuple[str, ...],
    mode: str,
    timeout: float,
    line_timeout: float,
    parser_spec: str | None,
    reject_specs: tuple[str, ...],
    client_cwd: Path | None,
) -> Any:
    """The client the case is played to: an in-process parser, or the command (started in
    ``client_cwd``, where a matrix's replay line names the config's folder)."""
    if parser_spec is not None:
        if command:
            raise SetupError("give either --parser or a command after '--', not both")
        return _inprocess_client(parser_spec, reject_specs)
    if reject_specs:
        raise SetupError("--reject only applies to an in-process --parser")
    if client_cwd is None:
        return make_client(command, mode, timeout, line_timeout)
    with _in_directory(client_cwd):  # a relative program path is relative to it
        client = make_client(command, mode, timeout, line_timeout)
    return dataclasses.replace(client, cwd=os.fspath(client_cwd.resolve()))


def _line_rows(shown: Any, obs: Any, mode: str, width: int) -> list[str]:
    """Each line's outcome for a correct client beside what the client said of it."""
    rows = []
    for outcome in shown.outcomes:
        seen = obs.lines.get(outcome.line)
        right = outcome.kind.value + (f" {outcome.tag}" if outcome.tag else "")
        got = (
            (seen["outcome"] + (f" {seen.get('type')}" if seen.get("type") else ""))
            if seen
            else ("-" if mode == "exit" else "(no observation)")
        )
        rows.append(f"{outcome.line:>5}  {right:<{width}} {got}")
    return rows


def _differing_fields(shown: Any, obs: Any, fields: tuple[str, ...]) -> list[str]:
    """The compared summary fields where the client differs from the reading shown, two
    lines each (``≠`` marking the expected value); none when the verdicts differ (the
    verdict is then the finding) or the stream is rejected (its fields are not compared)."""
    from stella_conform.conformance.report.excerpt import field_differences

    if not fields or obs.summary is None or obs.verdict != "accept":
        return []
    if shown.expected_verdict != "accept":
        return []
    out: list[str] = []
    for name in fields:
        lines = field_differences(shown.reading(), obs.summary, [name])
        if not lines[0].startswith("  ") or "client did not report it" in lines[0]:
            out += lines
    return out


def _expected_verdicts(case: Any) -> str:
    """The default reading's verdict, then each other conforming reading's (no reasons:
    the line table above shows them)."""
    expected = case.expected
    want = "accept" if expected.verdict == "accept" else f"reject at line {expected.rejected_line}"
    others = [
        ("accept" if a.summary.verdict == "accept" else f"reject at line {a.summary.rejected_line}")
        + f" (reading {a.reading})"
        for a in case.alternatives
    ]
    return " or ".join([want, *others])


@contextlib.contextmanager
def _in_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _inprocess_client(parser_spec: str, reject_specs: tuple[str, ...]) -> Any:
    """A client for an in-process parser named on the command line."""
    from stella_conform.conformance.clients.inprocess import (
        DEFAULT_REJECTS,
        Parser,
        load_spec,
        wants_report,
    )
    from stella_conform.conformance.clients.runner import Client

    read = load_spec(parser_spec)
    if not callable(read):
        raise SetupError(f"--parser {parser_spec}: not a function")
    rejects = tuple(load_spec(spec) for spec in reject_specs) or DEFAULT_REJECTS
    try:
        parser = Parser(read, rejects)
    except TypeError as exc:
        raise SetupError(f"--reject: {exc}") from None
    return Client(argv=(), mode="report" if wants_report(read) else "exit", function=parser)


def _replay_as_check(
    case: Path, data: bytes, check_id: str | None, client: Any, stella: Any, claims: Any
) -> None:
    """Replay a case (``data``: the case file's bytes, read once) through one check's
    runner and judge, as ``run`` grades it under the client's claims (``stella``: the
    vocabulary of the stella, before the claims narrow it): a claim the client cannot meet
    fails the check whatever the case, saying why, and the case is judged as if the client
    knew the types it lacks (``Claims.unmet``); exits."""
    import json as json_

    from stella_conform.conformance.checks import BY_ID, Context, judge
    from stella_conform.conformance.report.excerpt import (
        compared_fields,
        decisive_lines,
        field_differences,
        other_reading,
        show_stream,
    )
    from stella_conform.conformance.suite import CaseRunner, load_case
    from stella_conform.conformance.suite.travel import portable_path
    from stella_conform.options.suite import suite_config

    if check_id is None:
        raise SetupError(f"{case.name}: say which check judges it with --check ID")
    check = BY_ID.get(check_id)
    if check is None:
        raise SetupError(f"unknown check {check_id!r} (see: stella-conform checks)")
    unmet = claims.unmet(check, claims.vocabulary(stella), client.mode)
    if unmet is not None:
        claims = claims.knowing(unmet[1])
    vocab = claims.vocabulary(stella)
    graded = load_case(case, vocab, data=data)  # the bytes read once, not the file again
    graded.reads = claims.reads
    if graded.kind != check.input:
        raise SetupError(f"{case.name} is a {graded.kind} case; {check.id} grades {check.input}s")
    if not check.grades_in(client.mode):
        raise SetupError(f"{check.id} {check.skip_reason(client.mode)}")
    runner = CaseRunner(suite_config(client, claims=claims), check)
    try:
        obs = runner.run(graded)
    finally:
        runner.close()
    ctx = Context(computes=claims.computes, summary_only=claims.summary_only)
    verdict = judge(check, graded, obs, ctx)
    if unmet is not None and verdict.verdict not in ("crash", "error"):  # as run concludes
        said = f"{unmet[0]}; {verdict.message}" if verdict.message else unmet[0]
        verdict = dataclasses.replace(verdict, verdict="fail", message=said)
    keep = decisive_lines(graded, obs, verdict.message)
    echo = say
    echo(f"{check.id}: {check.name}")
    echo(f"case:     {portable_path(case)}")
    echo(_stream_header(graded.input_kind.noun, len(graded.stream), keep, "the check"))
    echo(show_stream(graded.stream, keep=keep))
    echo(f"client:   {obs.describe()}")
    if obs.ok:
        # every conforming reading of the case, by label ("" the default); the table is of
        # the one the judgment was made under, the others follow it (a client that passed
        # by another reading is shown that reading's values, not the default's)
        views = {"": graded, **{a.reading: graded.under(a) for a in graded.alternatives}}
        shown = views.get(verdict.reading, graded)
        if len(views) == 1:
            echo("reading, field by field (expected against the client's):")
        else:
            which = (
                "the one the client took"
                if verdict.verdict == "pass"
                else ("the one the judgment is about")
            )
            echo(
                f"reading, field by field (expected under {_reading_name(verdict.reading)}, "
                f"{which}, against the client's):"
            )
        if obs.summary is not None:
            told, names = obs.summary, compared_fields(graded, check.fields)
        else:  # exit mode: the exit status is the whole answer
            told, names = _exit_reading(obs), ["verdict"]
        for line in field_differences(shown.reading(), told, names):
            echo(line)
        for label, view in views.items():
            if label != verdict.reading:
                differs = other_reading(view.reading(), shown.reading(), names)
                echo(
                    f"also conforming, {_reading_name(label)}: "
                    + ("; ".join(differs) or "the same on these fields")
                )
        if obs.summary is None:
            echo(
                f"  (in {client.mode} mode the exit status tells the verdict only; "
                "--mode report shows the rest of its reading)"
            )
        if obs.summary is not None:
            echo(f"summary:  {clip(json_.dumps(obs.summary, ensure_ascii=False), 2000)}")
    if obs.invocations:
        echo(f"invoked:  {json_.dumps([i.get('argv') for i in obs.invocations])}")
    _echo_stderr(obs)
    echo(f"judgment: {verdict.verdict}" + (f": {verdict.message}" if verdict.message else ""))
    sys.exit(FAILED if verdict.verdict in ("fail", "crash", "error") else PASSED)


def _reading_name(label: str) -> str:
    return f"reading {label}" if label else "the default reading"


def _stream_header(what: str, size: int, keep: Any, decides: str) -> str:
    """``stream (216 bytes; ▶ marks the lines that decide it):``, the marks promised only
    when some line is marked (a document decided as a whole has none)."""
    if keep:
        return f"{what} ({size} bytes; ▶ marks the lines that decide {decides}):"
    return f"{what} ({size} bytes):"


def _exit_reading(obs: Any) -> dict[str, Any]:
    """What an exit status tells of a reading: the verdict, nothing else."""
    return {"verdict": obs.verdict}


def _echo_stderr(obs: Any) -> None:
    """The end of the client's stderr, whole (the runner keeps it bounded)."""
    tail = obs.stderr_tail.strip("\n")
    if tail.strip():
        say("client stderr (its end):")
        for line in tail.splitlines():
            say(f"  {line}")
