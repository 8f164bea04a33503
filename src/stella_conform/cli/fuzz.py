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
    write_not_graded,
)
from stella_conform.cli.options import ConfiguredCommand, model_option, model_options
from stella_conform.cli.outputs import grading_session, report_files
from stella_conform.conformance.report.events import Session
from stella_conform.conformance.report.model import Report
from stella_conform.errors import SetupError


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
    from stella_conform.conformance.fuzz import FuzzConfig, parse_duration
    from stella_conform.conformance.fuzz.feedback import feedback_for
    from stella_conform.conformance.report.events import RunStarted
    from stella_conform.conformance.report.progress import FuzzProgress
    from stella_conform.conformance.store.database import warm
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
    _preflight(checks, suite, vocab, outputs)
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
    progress = FuzzProgress(click.echo, tty, every=1.0 if (tty or verbose) else 10.0)
    session = grading_session(progress, report_files(**outputs), color=color, verbose=verbose)
    session.emit(RunStarted(_headline(checks, client, mode_reason, duration, max_cases, feedback)))
    report = _fuzz(session, checks, config, feedback, vocab.ident, known)
    sys.exit(report.exit_code)


def _preflight(checks: Any, suite: Any, vocab: Any, outputs: dict[str, Any]) -> None:
    """A client that cannot answer a trivially valid stream is not fuzzed: every report
    asked for says why."""
    from stella_conform.conformance.suite import preflight

    probe = preflight(checks, suite)
    if probe is not None and probe.cannot_start:
        write_not_graded(suite.client, vocab, probe.message(), **outputs, config=suite)
        raise SetupError(probe.message())


def _headline(
    checks: Any,
    client: Any,
    mode_reason: str | None,
    duration: str | None,
    max_cases: int | None,
    feedback: Any,
) -> str:
    """What is fuzzed, in which mode, for how long, and with what feedback from the client."""
    from stella_conform.conformance.fuzz.feedback import timeout_note

    how = f" (auto: {mode_reason})" if mode_reason else ""
    return (
        f"fuzzing {len(checks)} check(s) in {client.mode} mode{how} {_until(duration, max_cases)}; "
        f"feedback: {feedback.kind if feedback.kind != 'none' else 'none (blind)'}"
        + (f"; {note}" if (note := timeout_note(client, feedback)) else "")
    )


def _fuzz(
    session: Session,
    checks: Any,
    config: Any,
    feedback: Any,
    vocabulary: str,
    known: dict[str, str],
) -> Report:
    """Fuzz until a bound is reached, the session told how it goes; the report, which the
    session has shown and written (a stop signal: what was reported before it, then exit
    128 + N)."""
    from stella_conform import stopping
    from stella_conform.conformance.fuzz import Fuzzer, FuzzReport, Progress
    from stella_conform.conformance.report.events import Fuzzing, RunFinished, RunStopped

    def progress(p: Progress) -> None:
        failed = tuple(sorted({f.check for f in p.failures}))
        seen = (p.seconds, p.cases, p.rate, p.features, p.new_features, len(p.failures))
        session.emit(Fuzzing(*seen, failed))

    def report(outcome: Any, **stop: Any) -> FuzzReport:
        return FuzzReport(config.suite, outcome.results, vocabulary, known, fuzz=outcome, **stop)

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
            session.emit(RunStopped(report(partial, incomplete=why, stopped=stop.exit_code), why))
        stopping.leave(stop.exit_code)
    finally:
        feedback.close()
    finished = report(outcome)
    session.emit(RunFinished(finished))
    return finished


auto_mode_default(fuzz)  # persistent for an adapter that speaks it: what fuzzing needs


def _until(duration: str | None, max_cases: int | None) -> str:
    """How long the session goes on, as its first line says: the time, the cases, both
    (whichever comes first), or neither (until Ctrl-C, which ends any of them)."""
    bounds = [duration] if duration is not None else []
    if max_cases is not None:
        bounds.append(f"{max_cases:,} case{'' if max_cases == 1 else 's'}")
    return f"for {' or '.join(bounds)}" if bounds else "until Ctrl-C"
