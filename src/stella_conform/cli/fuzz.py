"""Fuzzing a client for as long as it is given: ``fuzz``."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from stella_conform.cli.client import (
    auto_mode_default,
    client_options,
    make_client,
    wire_schema_option,
)
from stella_conform.cli.databases import (
    artifact_option,
    database_option,
    load_seed_corpus,
    seed_corpus_option,
)
from stella_conform.cli.grading import (
    claim_options,
    color_option,
    report_options,
    told_on_the_command_line,
    use_color,
    write_not_graded,
)
from stella_conform.cli.options import ConfiguredCommand, model_option, model_options
from stella_conform.errors import SetupError


def _clock(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:02d}:{rest % 60:02d}"


@click.command(cls=ConfiguredCommand)
@client_options
@model_option("duration")
@model_option(
    "profiles",
    help="Check profile to fuzz (repeatable); dashboard and recorder add to reader. "
    "Default: the profiles the adapter's hello claims, else reader.",
)
@claim_options
@model_options("only", "skip", "seed", "stop_on_first", "max_failures", "max_cases", "no_feedback")
@database_option
@seed_corpus_option
@model_option("no_database", help="Neither read nor write the example database.")
@artifact_option
@report_options
@model_option(
    "max_shrinks",
    help="Client runs the final report may spend shrinking each failing check's case.",
)
@model_option("verbose", help="A progress line every second.")
@color_option
@wire_schema_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def fuzz(
    command: tuple[str, ...],
    mode: str,
    timeout: float,
    line_timeout: float,
    duration: str | None,
    profiles: tuple[str, ...],
    only: tuple[str, ...],
    skip: tuple[str, ...],
    seed: int,
    stop_on_first: bool,
    max_failures: int | None,
    max_cases: int | None,
    no_feedback: bool,
    databases: tuple[str, ...],
    seed_corpus: tuple[Path, ...],
    no_database: bool,
    github_artifact: str | None,
    known_failures: Path | None,
    json_path: Path | None,
    junit_path: Path | None,
    markdown_path: Path | None,
    failures_dir: Path,
    max_shrinks: int,
    verbose: bool,
    color: str,
    wire_schema: Path | None,
    knows: str | None,
    reads: str | None,
    computes: str | None,
    summary_only: bool | None,
) -> None:
    """Fuzz a client: stella-conform fuzz [--for 5m] [OPTIONS] -- CMD [ARGS...]

    Draws cases for every selected check until the time is up (or Ctrl-C), mutating
    the inputs that reached new code in the client, then reports like run. Exit 0
    when no check failed, 1 when one did, 2 for usage and set-up errors.
    """
    import time

    from stella_conform import stopping
    from stella_conform.conformance.clients.automode import settle_mode
    from stella_conform.conformance.fuzz import FuzzConfig, Fuzzer, Progress, parse_duration
    from stella_conform.conformance.fuzz.feedback import feedback_for, timeout_note
    from stella_conform.conformance.store.database import warm
    from stella_conform.conformance.suite import preflight
    from stella_conform.options.suite import suite_config
    from stella_conform.safe_files import pin_dir

    try:
        seconds = parse_duration(duration) if duration is not None else float("inf")
    except ValueError as exc:
        raise SetupError(f"--for: {exc}") from None
    # every value given is checked before any client starts (the auto probe included)
    told = told_on_the_command_line()
    vocab, known, database = told.vocab, told.known, told.database
    client = make_client(command, mode, timeout, line_timeout)
    pin_dir(failures_dir)  # before any client runs: saved cases go there or nowhere
    stopping.install()  # SIGTERM, SIGHUP, a second Ctrl-C: clients killed, partial report
    started = time.monotonic()  # --for bounds the whole command, from here
    outputs = {"json_path": json_path, "junit_path": junit_path, "markdown_path": markdown_path}
    try:
        client, hello, mode_reason = settle_mode(client, mode)
    except SetupError as exc:  # the client refuses the mode: the reports say so too
        write_not_graded(client, vocab, str(exc), **outputs)
        raise
    mode = client.mode
    claims = told.claims(hello)
    checks = told.checks(hello)
    if not checks:
        raise SetupError("no checks selected")
    suite = suite_config(
        client,
        click.get_current_context().params,
        claims=claims,
        examples=1,
        database_dir=None,
        database=database,
        mode_reason=mode_reason,
    )
    suite = dataclasses.replace(suite, recordings=load_seed_corpus(seed_corpus, suite.vocabulary()))
    probe = preflight(checks, suite)
    if probe is not None and probe.cannot_start:  # every report asked for says why
        write_not_graded(suite.client, vocab, probe.message(), **outputs, config=suite)
        raise SetupError(probe.message())
    warm(database)  # an artifact is downloaded (with a timeout) before fuzzing starts
    config = FuzzConfig(
        suite,
        seconds,
        stop_on_first=stop_on_first,
        max_failures=max_failures,
        max_cases=max_cases,
        started=started,
    )
    feedback = feedback_for(client.argv, wanted=not no_feedback)
    tty = sys.stderr.isatty()
    every = 1.0 if (tty or verbose) else 10.0
    last = [0.0]

    def progress(p: Progress) -> None:
        if p.seconds - last[0] < every:
            return
        last[0] = p.seconds
        failed = sorted({f.check for f in p.failures})
        line = (
            f"[{_clock(p.seconds)}] {p.cases:,} cases ({p.rate:.0f}/s), "
            f"coverage {p.features:,} features (+{p.new_features}), "
            f"failures {len(p.failures)}" + (f" ({', '.join(failed)})" if failed else "")
        )
        if tty:
            click.echo(f"\r\033[K{line}", err=True, nl=False)
        else:
            click.echo(line, err=True)

    until = _until(duration, max_cases)
    how = f" (auto: {mode_reason})" if mode_reason else ""
    click.echo(
        f"fuzzing {len(checks)} check(s) in {mode} mode{how} {until}; "
        f"feedback: {feedback.kind if feedback.kind != 'none' else 'none (blind)'}"
        + (f"; {note}" if (note := timeout_note(client, feedback)) else ""),
        err=True,
    )
    out_color = use_color(color, sys.stdout)
    try:
        outcome = Fuzzer(checks, config, feedback, progress=progress).run()
    except stopping.Stopped as stop:
        feedback.close()
        partial: Any = stop.partial[0] if stop.partial else None
        if partial is not None:
            why = (
                f"stopped by {stop.name} after {partial.cases:,} fuzzed case(s); "
                f"{len(partial.results)} of {len(checks)} check(s) reported"
            )
            report = _report(suite, partial, vocab, known, incomplete=why, stopped=stop.exit_code)
            _write(report, json_path, junit_path, markdown_path)
            click.echo(report.terminal(verbose, color=out_color), color=out_color)
        stopping.leave(stop.exit_code)
    finally:
        feedback.close()
    if tty:
        click.echo("", err=True)
    report = _report(suite, outcome, vocab, known)
    _write(report, json_path, junit_path, markdown_path)
    click.echo(report.terminal(verbose, color=out_color), color=out_color)
    sys.exit(report.exit_code)


def _report(
    suite: Any,
    outcome: Any,
    vocab: Any,
    known: dict[str, str],
    incomplete: str | None = None,
    stopped: int | None = None,
) -> Any:
    from stella_conform.conformance.fuzz import FuzzReport

    return FuzzReport(
        suite,
        outcome.results,
        vocab.ident,
        known,
        fuzz=outcome,
        incomplete=incomplete,
        stopped=stopped,
    )


def _write(report: Any, json_path: Path | None, junit: Path | None, md: Path | None) -> None:
    from stella_conform.conformance.report.render import write_outputs

    write_outputs(report, json_path=json_path, junit_path=junit, markdown_path=md)


auto_mode_default(fuzz)  # persistent for an adapter that speaks it: what fuzzing needs


def _until(duration: str | None, max_cases: int | None) -> str:
    """How long the session goes on, as its first line says: the time, the cases, both
    (whichever comes first), or neither (until Ctrl-C, which ends any of them)."""
    bounds = [duration] if duration is not None else []
    if max_cases is not None:
        bounds.append(f"{max_cases:,} case{'' if max_cases == 1 else 's'}")
    return f"for {' or '.join(bounds)}" if bounds else "until Ctrl-C"
