"""Grading a client: ``run``."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
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
    cap_jobs,
    claim_options,
    color_option,
    parse_shard,
    report_options,
    shard_checks,
    told_on_the_command_line,
    use_color,
    write_not_graded,
)
from stella_conform.cli.options import ConfiguredCommand, model_option, model_options
from stella_conform.cli.outputs import grading_session, report_files
from stella_conform.conformance.report.events import Session
from stella_conform.conformance.report.model import Report
from stella_conform.errors import SetupError


@click.command(cls=ConfiguredCommand)
@client_options
@model_option("profiles")
@claim_options
@model_options("examples", "seed", "jobs", "only", "skip")
@report_options
@model_option("no_database")
@database_option
@seed_corpus_option
@artifact_option
@model_options("case_cache", "no_case_cache", "max_shrinks", "shard", "time_budget")
@color_option
@model_option("verbose")
@wire_schema_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(
    command: tuple[str, ...],
    mode: str,
    timeout: float,
    line_timeout: float,
    profiles: tuple[str, ...],
    examples: int,
    seed: int,
    jobs: int,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    known_failures: Path | None,
    json_path: Path | None,
    junit_path: Path | None,
    markdown_path: Path | None,
    failures_dir: Path,
    no_database: bool,
    case_cache: Path,
    no_case_cache: bool,
    databases: tuple[str, ...],
    seed_corpus: tuple[Path, ...],
    github_artifact: str | None,
    max_shrinks: int,
    shard: str | None,
    time_budget: float | None,
    color: str,
    verbose: bool,
    wire_schema: Path | None,
    knows: str | None,
    reads: str | None,
    computes: str | None,
    summary_only: bool | None,
) -> None:
    """Grade a client: stella-conform run [OPTIONS] -- CMD [ARGS...]

    Exit 0 when every MUST check passes (or is a listed known failure), 1 when a check
    fails or errors, 2 for usage and set-up errors.
    """
    from stella_conform import stopping
    from stella_conform.conformance.report.events import RunStarted
    from stella_conform.conformance.report.progress import CheckProgress
    from stella_conform.conformance.store.database import warm
    from stella_conform.options.suite import suite_config
    from stella_conform.safe_files import pin_dir

    if shard is not None:
        parse_shard(shard)  # a malformed --shard is a usage error before the client starts
    jobs = cap_jobs(jobs)
    # every value given is checked before any client starts (the auto probe included)
    told = told_on_the_command_line()
    vocab, known, database = told.vocab, told.known, told.database
    client = make_client(command, mode, timeout, line_timeout)
    pin_dir(failures_dir)  # before any client runs: saved cases go there or nowhere
    stopping.install()  # SIGTERM, SIGHUP, SIGINT: clients killed, partial report, 128 + N
    outputs = {"json_path": json_path, "junit_path": junit_path, "markdown_path": markdown_path}
    client, hello, mode_reason = _settle_mode(client, mode, vocab, outputs)
    claims = told.claims(hello)
    checks = told.checks(hello)
    if shard is not None:
        checks = shard_checks(checks, shard)
    if not checks:
        raise SetupError("no checks selected")
    warm(database)  # an artifact is downloaded once, before workers fork
    started = time.monotonic()
    config = suite_config(
        client,
        click.get_current_context().params,
        claims=claims,
        started=started,
        database_dir=None,
        database=database,
        mode_reason=mode_reason,
    )
    # the same recordings as the fuzz session: what it found on them replays as found
    config = replace(config, recordings=load_seed_corpus(seed_corpus, config.vocabulary()))
    progress = CheckProgress(
        click.echo, tty=sys.stderr.isatty(), color=use_color(color, sys.stderr)
    )
    # a stopped run's report is printed without colour
    files = report_files(**outputs)
    session = grading_session(progress, files, color=color, verbose=verbose, stopped_color=False)
    how = f" (auto: {mode_reason})" if mode_reason else ""
    session.emit(
        RunStarted(
            f"grading {len(checks)} check(s) in {client.mode} mode{how} with {jobs} worker(s)..."
        )
    )
    _preflight(checks, config, vocab, outputs)
    report = _grade(session, checks, config, jobs, vocab.ident, known, shard)
    sys.exit(report.exit_code)


def _settle_mode(client: Any, mode: str, vocab: Any, outputs: dict[str, Any]) -> Any:
    """The client and the mode it is graded in (``--mode auto`` asks it); a client that
    refuses the mode has every report asked for say so."""
    from stella_conform import stopping
    from stella_conform.conformance.clients.automode import settle_mode

    try:
        return settle_mode(client, mode)
    except stopping.Stopped as stop:
        stopping.leave(stop.exit_code)
    except SetupError as exc:  # the client refuses the mode: the reports say so too
        write_not_graded(client, vocab, str(exc), **outputs)
        raise


def _preflight(checks: Any, config: Any, vocab: Any, outputs: dict[str, Any]) -> None:
    """One trivially valid stream before grading: a client that cannot answer it is not
    graded (every report asked for says why); one that hangs on it is warned of."""
    from stella_conform import stopping
    from stella_conform.conformance.suite import preflight
    from stella_conform.safe_text import for_terminal

    try:
        probe = preflight(checks, config)
    except stopping.Stopped as stop:  # nothing graded yet: the clients are already gone
        stopping.leave(stop.exit_code)
    if probe is not None and probe.cannot_start:
        # every report asked for is written, with the reason in it: a CI step that
        # uploads the report finds one (it found nothing)
        write_not_graded(config.client, vocab, probe.message(), **outputs, config=config)
        raise SetupError(probe.message())
    if probe is not None:
        click.echo(for_terminal(probe.message()), err=True)


def _grade(
    session: Session,
    checks: Any,
    config: Any,
    jobs: int,
    vocabulary: str,
    known: dict[str, str],
    shard: str | None,
) -> Report:
    """Grade the checks, each step an event; the report, which the session has shown
    and written (a stop signal: what was graded before it, then exit 128 + N)."""
    from stella_conform import stopping
    from stella_conform.conformance.report.events import RunFinished, RunStopped
    from stella_conform.conformance.suite import CheckResult, run_suite

    try:
        results = run_suite(checks, config, jobs=jobs, tell=session.emit)
    except stopping.Stopped as stop:
        graded = [r for r in stop.partial if isinstance(r, CheckResult)]
        why = f"{stop.why} after {len(graded)} of {len(checks)} check(s)"
        stopped = Report(
            config, graded, vocabulary, known, shard=shard, incomplete=why, stopped=stop.exit_code
        )
        session.emit(RunStopped(stopped, why))
        stopping.leave_after(stop, why)
    report = Report(config, results, vocabulary, known, shard=shard)
    session.emit(RunFinished(report))
    return report


auto_mode_default(run)
