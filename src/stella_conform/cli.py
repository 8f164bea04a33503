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


# ---------------------------------------------------------------------- grading

MODE_CHOICE = click.Choice(["exit", "report", "persistent"])


def client_options(func: F) -> F:
    func = click.option(
        "--mode",
        type=MODE_CHOICE,
        default="exit",
        show_default=True,
        help="exit: exit status only (any client); report/persistent: the "
        "adapter protocol (docs/adapter-protocol.md).",
    )(func)
    func = click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=10.0,
        show_default=True,
        help="Seconds a client may take for one case.",
    )(func)
    func = click.option(
        "--line-timeout",
        type=click.FloatRange(min=0.05),
        default=5.0,
        show_default=True,
        help="Report mode: seconds to acknowledge one line (lockstep).",
    )(func)
    return func


def make_client(command: tuple[str, ...], mode: str, timeout: float, line_timeout: float) -> Any:
    from stella_conform.conformance.runner import Client, resolve_client

    argv = resolve_client(command)
    return Client(argv=argv, mode=mode, timeout=timeout, line_timeout=line_timeout)  # type: ignore[arg-type]


def parse_shard(spec: str) -> tuple[int, int]:
    """``I/N`` (1-based) as numbers; :class:`SetupError` when malformed."""
    try:
        index_text, total_text = spec.split("/")
        index, total = int(index_text), int(total_text)
    except ValueError:
        raise SetupError(f"--shard must be I/N, e.g. 1/3 (got {spec!r})") from None
    if total < 1 or not 1 <= index <= total:
        raise SetupError(f"--shard {spec}: I must be between 1 and N")
    return index, total


def shard_checks(checks: list[Any], spec: str) -> list[Any]:
    """Checks of shard I of N (1-based): every N-th, starting at the I-th, in catalogue order."""
    index, total = parse_shard(spec)
    return [c for position, c in enumerate(checks) if position % total == index - 1]


def _default_jobs() -> int:
    import os

    return max(1, min(4, os.cpu_count() or 1))


@main.command()
@client_options
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    default=("reader",),
    show_default=True,
    help="Check profile to grade (repeatable).",
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=25,
    show_default=True,
    help="Generated cases per check (0: fixtures only).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=_default_jobs,
    show_default="CPUs, at most 4",
    help="Checks graded in parallel.",
)
@click.option("--only", multiple=True, metavar="GLOB", help="Only checks matching (repeatable).")
@click.option("--skip", multiple=True, metavar="GLOB", help="Skip checks matching (repeatable).")
@click.option(
    "--known-failures",
    type=click.Path(path_type=Path),
    default=None,
    help='TOML file: [known-failures] "CHECK-ID" = "reason".',
)
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None)
@click.option("--junit-xml", "junit_path", type=click.Path(path_type=Path), default=None)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Markdown summary (e.g. $GITHUB_STEP_SUMMARY).",
)
@click.option(
    "--failures-dir",
    type=click.Path(path_type=Path),
    default=Path(".stella-conform/failures"),
    show_default=True,
)
@click.option(
    "--no-database", is_flag=True, help="Do not read or write the Hypothesis example database."
)
@click.option(
    "--max-shrinks",
    type=click.IntRange(min=0),
    default=150,
    show_default=True,
    help="Client runs a check may spend shrinking its first failing generated case "
    "(0: report the case as found).",
)
@click.option(
    "--shard",
    default=None,
    metavar="I/N",
    help="Grade only shard I of N (checks split deterministically; merge the JSON "
    "reports with 'stella-conform report merge').",
)
@click.option("--verbose", "-v", is_flag=True)
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
    max_shrinks: int,
    shard: str | None,
    verbose: bool,
    wire_schema: Path | None,
) -> None:
    """Grade a client: stella-conform run [OPTIONS] -- CMD [ARGS...]

    Exit 0 when every MUST check passes (or is a listed known failure), 1 when a check
    fails or errors, 2 for usage and set-up errors.
    """
    from stella_conform.conformance.checks import PROFILES, select, unmatched_globs
    from stella_conform.conformance.report import (
        Report,
        check_writable,
        load_known_failures,
        write_outputs,
    )
    from stella_conform.conformance.suite import SuiteConfig, run_suite

    unknown_profiles = [p for p in profiles if p not in PROFILES]
    if unknown_profiles:
        raise SetupError(f"unknown profile {unknown_profiles[0]!r} (known: {', '.join(PROFILES)})")
    bad = unmatched_globs([*only, *skip])
    if bad:
        raise SetupError(
            f"--only/--skip {bad[0]!r} matches no check id (see stella-conform checks)"
        )
    known = load_known_failures(known_failures) if known_failures else {}
    check_writable([json_path, junit_path, markdown_path])
    client = make_client(command, mode, timeout, line_timeout)
    vocab = load_vocabulary(wire_schema)
    checks = select(profiles, only, skip)
    if shard is not None:
        checks = shard_checks(checks, shard)
    if not checks:
        raise SetupError("no checks selected")
    config = SuiteConfig(
        client=client,
        examples=examples,
        seed=seed,
        failures_dir=failures_dir,
        database_dir=None if no_database else Path(".stella-conform/hypothesis"),
        wire_schema=str(wire_schema) if wire_schema else None,
        shrink_budget=max_shrinks,
    )
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, result: Any) -> None:
        if tty:
            click.echo(
                f"\r\033[K[{done}/{total}] {result.id}: {result.outcome}",
                err=True,
                nl=done == total,
            )
        elif verbose:
            click.echo(f"[{done}/{total}] {result.id}: {result.outcome}", err=True)

    if tty:
        click.echo(
            f"grading {len(checks)} check(s) in {mode} mode with {jobs} worker(s)...", err=True
        )
    results = run_suite(checks, config, jobs=jobs, progress=progress)
    report = Report(config, results, vocab.ident, known, shard=shard)
    write_outputs(report, json_path=json_path, junit_path=junit_path, markdown_path=markdown_path)
    click.echo(report.terminal(verbose))
    sys.exit(report.exit_code)


@main.command()
@client_options
@wire_schema_option
@click.option(
    "--check",
    "check_id",
    metavar="ID",
    help="Judge the case as this check does (needed for dashboard, recorder, envelope and "
    "wrapper cases; the report's replay command includes it).",
)
@click.argument("case", type=click.Path(path_type=Path))
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def replay(
    case: Path,
    command: tuple[str, ...],
    mode: str,
    timeout: float,
    line_timeout: float,
    wire_schema: Path | None,
    check_id: str | None,
) -> None:
    """Re-run one saved case: stella-conform replay CASE -- CMD [ARGS...]

    Shows what the client did against what a correct client does. Exit 0 when the
    client's verdict is right, 1 when not.
    """
    from stella_conform.conformance.grader import GradedCase
    from stella_conform.conformance.report import show_stream
    from stella_conform.conformance.runner import run_once

    if not case.is_file():
        raise SetupError(f"no such case file: {case}")
    client = make_client(command, mode, timeout, line_timeout)
    vocab = load_vocabulary(wire_schema)
    if check_id is not None or case.suffix == ".json":
        _replay_as_check(case, check_id, client, vocab)
    graded = GradedCase(case.name, case.read_bytes(), "saved", vocab=vocab)
    obs = run_once(client, graded.stream)
    click.echo(f"stream ({len(graded.stream)} bytes):")
    click.echo(show_stream(graded.stream))
    click.echo("")
    click.echo(f"{'line':>5}  {'correct client':<28} client")
    for outcome in graded.outcomes:
        seen = obs.lines.get(outcome.line)
        right = outcome.kind.value + (f" {outcome.tag}" if outcome.tag else "")
        got = (
            (seen["outcome"] + (f" {seen.get('type')}" if seen.get("type") else ""))
            if seen
            else ("-" if mode == "exit" else "(no observation)")
        )
        click.echo(f"{outcome.line:>5}  {right:<28} {got}")
    expected = graded.expected
    want = (
        "accept" if expected.verdict == "accept" else (f"reject at line {expected.rejected_line}")
    )
    click.echo(f"\nexpected: {want}")
    click.echo(f"client:   {obs.describe()}")
    if obs.stderr_tail.strip():
        click.echo(f"client stderr (tail): {obs.stderr_tail.strip()[-400:]}")
    sys.exit(0 if obs.ok and obs.verdict == expected.verdict else 1)


def _replay_as_check(case: Path, check_id: str | None, client: Any, vocab: Any) -> None:
    """Replay a case through one check's runner and judge; exits."""
    import json as json_

    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.grader import Context, expected_text, judge
    from stella_conform.conformance.suite import CaseRunner, SuiteConfig, load_case

    if check_id is None:
        raise SetupError(f"{case.name}: say which check judges it with --check ID")
    check = BY_ID.get(check_id)
    if check is None:
        raise SetupError(f"unknown check {check_id!r} (see: stella-conform checks)")
    graded = load_case(case, vocab)
    if graded.kind != check.input:
        raise SetupError(f"{case.name} is a {graded.kind} case; {check.id} grades {check.input}s")
    if not check.grades_in(client.mode):
        raise SetupError(f"{check.id} {check.skip_reason(client.mode)}")
    runner = CaseRunner(SuiteConfig(client), check)
    try:
        obs = runner.run(graded)
    finally:
        runner.close()
    verdict = judge(check, graded, obs, Context())
    click.echo(f"{check.id}: {check.name}")
    click.echo(f"case:     {case}")
    click.echo(f"expected: {json_.dumps(expected_text(graded), ensure_ascii=False)}")
    click.echo(f"client:   {obs.describe()}")
    if obs.summary is not None:
        click.echo(f"summary:  {json_.dumps(obs.summary, ensure_ascii=False)[:400]}")
    if obs.invocations:
        click.echo(f"invoked:  {json_.dumps([i.get('argv') for i in obs.invocations])}")
    if obs.stderr_tail.strip():
        click.echo(f"client stderr (tail): {obs.stderr_tail.strip()[-400:]}")
    click.echo(f"judgment: {verdict.verdict}" + (f": {verdict.message}" if verdict.message else ""))
    sys.exit(1 if verdict.verdict in ("fail", "error") else 0)


@main.command()
@client_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def smoke(command: tuple[str, ...], mode: str, timeout: float, line_timeout: float) -> None:
    """Check the adapter itself before grading: stella-conform smoke -- CMD [ARGS...]

    Tells "the adapter is broken" apart from "the client is non-conformant".
    """
    from stella_conform.conformance.runner import run_once
    from stella_conform.corpus import bundled_fixtures_dir

    client = make_client(command, mode, timeout, line_timeout)
    fixtures = bundled_fixtures_dir()
    valid = run_once(client, (fixtures / "minimal_run.jsonl").read_bytes())
    corrupt = run_once(client, (fixtures / "bad_body_missing_field.jsonl").read_bytes())
    steps = [
        (
            "answers at all (no crash, no timeout)",
            valid.status not in ("crash", "timeout"),
            valid.describe(),
        ),
    ]
    if mode != "exit":
        hello = valid.hello or {}
        name = (hello.get("client") or {}).get("name", "?")
        steps.append(
            (
                "speaks valid protocol (hello, observations, summary)",
                valid.status == "ok",
                f"hello from {name!r}" if valid.ok else valid.describe(),
            )
        )
    steps.append(
        (
            "accepts a trivially valid stream",
            valid.ok and valid.verdict == "accept",
            valid.describe(),
        )
    )
    steps.append(
        (
            "rejects a trivially corrupt stream",
            corrupt.ok and corrupt.verdict == "reject",
            corrupt.describe(),
        )
    )
    for label, ok, detail in steps:
        click.echo(f"{'ok  ' if ok else 'FAIL'} {label}: {detail}")
    failed = [s for s in steps if not s[1]]
    if failed:
        click.echo("the adapter is broken: fix it before grading the client", err=True)
    sys.exit(1 if failed else 0)


@main.command("checks")
@click.option("--json", "as_json", is_flag=True)
def list_checks(as_json: bool) -> None:
    """List every check: id, tier, modes that can grade it, and what it asks."""
    from stella_conform.conformance.checks import CATALOGUE

    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": c.id,
                        "name": c.name,
                        "rule": c.rule,
                        "profile": c.profile,
                        "tier": c.tier,
                        "modes": sorted(c.modes),
                        "fixtures": list(c.fixtures),
                        "mutations": list(c.mutations),
                        "why": c.why,
                    }
                    for c in CATALOGUE
                ],
                indent=2,
            )
        )
        return
    for c in CATALOGUE:
        modes = "all modes" if len(c.modes) == 3 else "/".join(sorted(c.modes))
        click.echo(f"{c.id:<32} {c.tier:<6} {modes:<18} {c.name}")


@main.group()
def trace() -> None:
    """The trace journal (contextgraph-trace): check a journal's invariants."""


@trace.command("check")
@click.argument("journal", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def trace_check(journal: Path, as_json: bool) -> None:
    """Run every trace check over JOURNAL (a file, or - for stdin).

    Exit 0 when every check passes (or has nothing to see), 1 when a check fails,
    2 when the journal cannot be read (a corrupt line that is not the last, a
    recognized event whose body does not fit) or does not exist.
    """
    from stella_conform.conformance.trace import grade_journal

    if str(journal) == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = journal.read_bytes()
        except FileNotFoundError:
            raise SetupError(f"journal not found: {journal}") from None
        except OSError as exc:
            raise SetupError(f"cannot read journal {journal}: {exc.strerror or exc}") from None
    report = grade_journal(data)
    if as_json:
        click.echo(json.dumps(report.to_json(str(journal)), indent=2, ensure_ascii=False))
        sys.exit(report.exit_code)
    reading = report.reading
    if not report.readable:
        click.echo(
            f"stella-conform: {journal}: unreadable at line {reading['rejected_line']}: "
            f"{reading['reason']}",
            err=True,
        )
        sys.exit(2)
    unknown = reading["unrecognized_events"]
    kinds = (
        f" ({', '.join(reading['unrecognized_types'])})" if reading["unrecognized_types"] else ""
    )
    torn = ", a torn final line dropped" if reading["torn_final_line"] else ""
    click.echo(
        f"{journal}: {reading['known_events']} recognized event(s), {unknown} unrecognized"
        f"{kinds}{torn}"
    )
    width = max(len(r.id) for r in report.results)
    for result in report.results:
        first = result.evidence[0] if result.evidence else None
        where = f"seq {first.seq}: " if first and first.seq is not None else ""
        detail = f"{where}{first.message}" if first else result.name
        click.echo(f"{result.outcome.upper():<5} {result.id:<{width}}  {detail}")
        for more in result.evidence[1:4]:
            at = f"seq {more.seq}: " if more.seq is not None else ""
            click.echo(f"{'':<5} {'':<{width}}  {at}{more.message}")
        if len(result.evidence) > 4:
            click.echo(f"{'':<5} {'':<{width}}  ... {len(result.evidence) - 4} more")
    facts = [
        f"{key.replace('_', ' ')}: "
        + (", ".join(map(str, value)) if isinstance(value, list) else str(value))
        for r in report.results
        for key, value in r.facts.items()
        if key != "crashed" and value
    ]
    for fact in facts:
        click.echo(f"fact: {fact}")
    failed = sum(1 for r in report.results if r.outcome == "fail")
    click.echo(f"\n{failed} check(s) failed" if failed else "\nevery check passes")
    sys.exit(report.exit_code)


@main.group()
def report() -> None:
    """Merge shard reports, or diff two reports (for a pull-request comment)."""


@report.command("merge")
@click.option(
    "--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path),
    help="Matrix shards: also write the merged matrix as Markdown.",
)  # fmt: skip
@click.option(
    "--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
    help="Matrix shards: also write the merged matrix as a self-contained HTML page.",
)  # fmt: skip
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
def report_merge(
    output: Path, shards: tuple[Path, ...], markdown_path: Path | None, html_path: Path | None
) -> None:
    """Merge the JSON reports of --shard runs (of run or matrix) into OUTPUT.

    Exit status is the whole run's: 0 when nothing blocking failed, 1 otherwise.
    """
    from stella_conform.conformance.compare import load_report, merge
    from stella_conform.conformance.matrix import (
        is_matrix,
        load_matrix,
        merge_matrices,
        summary_counts,
    )
    from stella_conform.conformance.report import check_writable

    check_writable([output, markdown_path, html_path])
    from stella_conform.errors import read_json_file

    first = read_json_file(shards[0], "report")
    if is_matrix(first):
        merged = merge_matrices([load_matrix(p) for p in shards])
        counts_map = summary_counts(merged)
        _write_matrix(merged, output, markdown_path, html_path)
    else:
        if markdown_path or html_path:
            raise SetupError("--markdown and --html apply to matrix reports only")
        merged = merge([load_report(p) for p in shards])
        counts_map = merged["summary"]
        from stella_conform.conformance.report import write_rendered

        write_rendered([(output, lambda: _json_text(merged))])
    counts = ", ".join(f"{n} {o}" for o, n in counts_map.items() if n)
    click.echo(f"merged {len(shards)} report(s) into {output}: {counts}")
    sys.exit(merged["exit_code"])


def _write_matrix(
    doc: dict[str, Any], json_path: Path, markdown_path: Path | None, html_path: Path | None
) -> None:
    from stella_conform.conformance.matrix import to_html, to_markdown
    from stella_conform.conformance.report import write_rendered

    write_rendered(
        [
            (json_path, lambda: _json_text(doc)),
            (markdown_path, lambda: to_markdown(doc)),
            (html_path, lambda: to_html(doc)),
        ]
    )


def _json_text(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@main.command()
@click.argument("config_path", metavar="CONFIG.toml", type=click.Path(path_type=Path))
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
    default=Path("matrix-report"), show_default=True,
    help="Directory for matrix.json, matrix.md and matrix.html.",
)  # fmt: skip
@click.option("--shard", metavar="I/N", help="Grade only shard I of N of the (cell, check) tasks.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Parallel workers (config: jobs).")
@click.option("--examples", type=click.IntRange(min=0), help="Generated cases per check.")
@click.option("--seed", type=int, help="Seed (config: seed).")
@click.option("-v", "--verbose", is_flag=True, help="One line per graded check.")
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
    from stella_conform.conformance.matrix import cell_text, load_config, run_matrix

    config = load_config(config_path)
    if jobs is not None:
        config.jobs = jobs
    if examples is not None:
        config.examples = examples
    if seed is not None:
        config.seed = seed
    parsed = parse_shard(shard) if shard else None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SetupError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    paths = [out_dir / "matrix.json", out_dir / "matrix.md", out_dir / "matrix.html"]
    from stella_conform.conformance.report import check_writable

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
    doc = run_matrix(config, shard=parsed, progress=progress)
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


@report.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def report_diff(old: Path, new: Path, as_json: bool) -> None:
    """What newly fails, newly passes or changed outcome from OLD to NEW (Markdown).

    Exit 1 when a check newly fails (a regression), else 0.
    """
    from stella_conform.conformance.compare import diff, diff_markdown, load_report

    result = diff(load_report(old), load_report(new))
    click.echo(json.dumps(result, indent=2) if as_json else diff_markdown(result))
    sys.exit(1 if result["newly_failing"] else 0)
