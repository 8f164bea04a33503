"""Grade one client on a set of checks: fixtures first, then generated cases.

Each check runs its curated fixtures, then a Hypothesis property over
generated cases that carry only that check's mutations.  A failing generated
case is shrunk by Hypothesis (within a budget of client runs, since every
shrink step starts the client again), saved in the fixture format, and
reported with the command that replays it.  Checks run in parallel worker
processes with ``-j``; each check's cases are drawn from its own seed, so
results do not depend on ``-j``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import warnings
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import Check
from stella_conform.conformance.grader import (
    Context,
    GradedCase,
    Judgment,
    combine,
    expected_text,
    judge,
)
from stella_conform.conformance.protocol import COMMAND_ENV
from stella_conform.conformance.runner import (
    LINES,
    Client,
    Feed,
    Observation,
    PersistentSession,
    run_once,
)
from stella_conform.conformance.wrapper import staged
from stella_conform.corpus import (
    SCENARIO_SUFFIX,
    TraceFixture,
    bundled_fixtures_dir,
    expectation_from,
    read_envelope_fixture,
    read_jsonl_fixture,
    read_scenario,
    write_envelope_fixture,
    write_fixture,
    write_scenario,
    write_trace_fixture,
)
from stella_conform.generators.cases import Case, cases
from stella_conform.generators.envelopes import EnvelopeCase, envelope_cases
from stella_conform.generators.journals import JournalCase, journal_cases
from stella_conform.generators.scenarios import ScenarioCase, scenario_cases
from stella_conform.safe_text import clip, json_safe, no_surrogates
from stella_conform.schemas.vocabulary import Vocabulary

#: The longest failure message a report keeps (the rest is cut, and says so).
MESSAGE_CAP = 2000

#: Client runs a shrink may spend after the first failure of a check.
SHRINK_BUDGET = 150


@dataclass
class CaseFailure:
    """One failing case, as reported."""

    case: str
    source: str
    message: str
    expected: dict[str, Any]
    observed: dict[str, Any]
    saved: str | None = None
    replay: str | None = None
    mutations: tuple[str, ...] = ()
    stream: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "stream"}
        out["mutations"] = list(self.mutations)
        return out


@dataclass
class CheckResult:
    id: str
    name: str
    rule: str
    tier: str
    outcome: str
    message: str
    cases: int = 0
    failures: list[CaseFailure] = field(default_factory=list)
    known_failure: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "rule": self.rule,
            "tier": self.tier,
            "outcome": self.outcome,
            "message": self.message,
            "cases": self.cases,
            "known_failure": self.known_failure,
            "seconds": round(self.seconds, 3),
            "failures": [f.to_json() for f in self.failures],
        }


@dataclass(frozen=True)
class SuiteConfig:
    client: Client
    examples: int = 25
    seed: int = 0
    failures_dir: Path = Path(".stella-conform/failures")
    database_dir: Path | None = Path(".stella-conform/hypothesis")
    wire_schema: str | None = None
    fixtures_dir: Path | None = None
    #: Client runs a check may spend shrinking after its first generated failure.
    shrink_budget: int = SHRINK_BUDGET
    #: An example database to use instead of ``database_dir`` (the pytest plugin passes
    #: Hypothesis's configured one, e.g. a GitHub-artifact database shared by CI).
    database: Any = None

    def vocabulary(self) -> Vocabulary:
        """The vocabulary as this client sees it: the stella's, narrowed to what it knows."""
        return Vocabulary.load(self.wire_schema)


def check_seed(seed: int, check_id: str) -> int:
    """A per-check seed, stable across runs and independent of ``-j``."""
    return seed * 1_000_003 + zlib.crc32(check_id.encode())


def replay_command(path: str, client: Client, check: Check | None = None) -> str | None:
    """The command that re-runs one saved case; ``None`` when it cannot be written.

    An in-process parser is named by module and function (``--parser``), with the
    exception types that mean reject; one that cannot be imported again (a lambda,
    a function defined inside a test) has no replay command.
    """
    parts = ["stella-conform", "replay", path]
    if check is not None and check.profile != "reader":
        parts += ["--check", check.id]
    if client.function is None:
        parts += ["--mode", client.mode]
        if client.reject_exit_codes != frozenset({1}):
            parts += ["--reject-exit-codes", ",".join(map(str, sorted(client.reject_exit_codes)))]
        if not client.detect_crashes:
            parts.append("--no-crash-detection")
        return shlex.join([*parts, "--", *client.argv])
    from stella_conform.conformance.inprocess import replay_args

    found = replay_args(client.function)
    if found is None:
        return None
    args, pythonpath = found
    prefix = f"PYTHONPATH={shlex.quote(str(pythonpath))} " if pythonpath else ""
    return prefix + shlex.join([*parts, *args])


class CaseRunner:
    """Runs cases for one check in one worker, reusing a persistent client if asked."""

    def __init__(self, config: SuiteConfig, check: Check) -> None:
        self.config = config
        self.check = check
        persistent = config.client.mode == "persistent" and config.client.function is None
        self.session = PersistentSession(config.client) if persistent else None
        self.calls = 0

    def run(self, case: GradedCase) -> Observation:
        self.calls += 1
        client = self.config.client
        if case.kind == "scenario":
            with staged(case.scenario, case.stream, base_env=client.environment()) as stage:
                obs = run_once(client, b"", Feed("none", stage.env))
                try:
                    obs.invocations = stage.invocations()
                except OSError as exc:  # a FIFO, device or link planted as the log
                    if obs.ok:
                        obs.status = "crash"
                        obs.detail = f"the fake stella's invocation log: {getattr(exc, 'why', exc)}"
            return obs
        if case.kind == "envelope":
            feed = Feed("document", {COMMAND_ENV: case.command})
        elif case.kind == "journal":
            feed = Feed("document")
        elif self.check.profile == "recorder":
            feed = Feed(record=True)
        else:
            feed = LINES
        if self.session is not None:
            return self.session.run(case.stream, feed)
        return run_once(client, case.stream, feed)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


def fixture_path(check: Check, name: str, directory: Path) -> Path:
    """Where a check's named fixture lives: streams at the top, the others in subfolders."""
    if check.input == "envelope":
        return directory / "envelopes" / f"{name}.json"
    if check.input == "scenario":
        return directory / "scenarios" / f"{name}{SCENARIO_SUFFIX}"
    if check.input == "journal":
        return directory / "trace" / f"{name}.jsonl"
    return directory / f"{name}.jsonl"


def load_case(path: Path, vocab: Vocabulary | None = None) -> GradedCase:
    """A fixture file of any kind (stream, envelope, scenario) as a case, validated."""
    if path.name.endswith(SCENARIO_SUFFIX):
        scenario = read_scenario(path)
        name = scenario.name
        return GradedCase(
            name, scenario.stream, "fixture", vocab=vocab, kind="scenario",
            scenario=dict(scenario.scenario),
        )  # fmt: skip
    if path.suffix == ".json":
        envelope = read_envelope_fixture(path)
        return GradedCase(
            envelope.name, envelope.data, "fixture", vocab=vocab, kind="envelope",
            command=envelope.command,
        )  # fmt: skip
    fixture = read_jsonl_fixture(path)  # validates the expectation too
    if isinstance(fixture, TraceFixture):
        return GradedCase(fixture.name, fixture.data, "fixture", vocab=vocab, kind="journal")
    also = tuple(fixture.expect.get("also_conforming", ()))
    return GradedCase(fixture.name, fixture.stream, "fixture", also_conforming=also, vocab=vocab)


def _fixture_case(check: Check, name: str, vocab: Vocabulary, directory: Path) -> GradedCase:
    return load_case(fixture_path(check, name, directory), vocab)


def _save(config: SuiteConfig, check: Check, case: GradedCase) -> tuple[str, str | None]:
    digest = hashlib.sha256(case.stream + case.command.encode() + repr(case.scenario).encode())
    name = f"{check.id}-{digest.hexdigest()[:10]}"
    directory = config.failures_dir
    description = f"counterexample for {check.id} ({check.name})"
    if case.kind == "envelope":
        reading = case.envelope.to_json()
        expect = {"description": description, "command": case.command, **reading}
        path = str(write_envelope_fixture(directory, name, case.stream, expect))
    elif case.kind == "scenario":
        scenario = {"description": description, **case.scenario, "expect": case.wrapper}
        path = str(write_scenario(directory, name, scenario, case.stream))
    elif case.kind == "journal":
        path = str(write_trace_fixture(directory, name, case.stream, description))
    else:
        expect = expectation_from(
            case.expected,
            rules=[check.rule],
            mutations=case.mutations,
            description=description,
            seed=config.seed,
        )
        write_fixture(directory, name, case.stream, expect)
        path = str(directory / f"{name}.jsonl")
    return path, replay_command(path, config.client, check)


def _failure(case: GradedCase, j: Judgment, obs: Observation) -> CaseFailure:
    # What the client wrote is kept only within limits: a 4 MB preview or a summary nested
    # a thousand deep would otherwise be copied into every report (docs/reliability.md).
    return CaseFailure(
        case=case.name,
        source=case.source,
        message=clip(no_surrogates(j.message), MESSAGE_CAP),
        expected=expected_text(case),
        observed=json_safe(obs.to_json()),
        mutations=case.mutations,
        stream=case.stream if len(case.stream) <= 4096 else None,
    )


def run_check(check: Check, config: SuiteConfig) -> CheckResult:
    """Grade one check (called in a worker process, or inline for ``-j 1``)."""
    import time

    started = time.monotonic()
    vocab = config.vocabulary()
    result = CheckResult(check.id, check.name, check.rule, check.tier, "skip", "")
    if not check.grades_in(config.client.mode):
        result.message = check.skip_reason(config.client.mode)
        return result
    if config.client.function is not None and check.input != "stream":
        result.message = f"an in-process client cannot be graded on the {check.profile} profile"
        return result
    runner = CaseRunner(config, check)
    judgments: list[Judgment] = []
    try:
        ctx = Context()
        fixtures_dir = config.fixtures_dir or bundled_fixtures_dir()
        if check.judge == "quiet":
            baseline = runner.run(_fixture_case(check, "minimal_run", vocab, fixtures_dir))
            ctx.baseline_stderr_lines = baseline.stderr_lines
        for name in check.fixtures:
            case = _fixture_case(check, name, vocab, fixtures_dir)
            obs = runner.run(case)
            j = judge(check, case, obs, ctx)
            judgments.append(j)
            result.cases += 1
            if j.verdict in ("fail", "error") and len(result.failures) < 5:
                failure = _failure(case, j, obs)
                failure.saved = str(fixture_path(check, name, fixtures_dir))
                failure.replay = replay_command(failure.saved, config.client, check)
                result.failures.append(failure)
        if (check.mutations or check.valid_runs) and config.examples > 0:
            judgments.extend(_generated(check, config, vocab, runner, ctx, result))
    finally:
        runner.close()
    result.outcome, result.message = combine(check, judgments)
    result.message = clip(no_surrogates(result.message), MESSAGE_CAP)
    if result.outcome in ("fail", "warn", "error") and result.failures:
        result.message = result.failures[0].message  # the shrunk case, shown first
    result.seconds = time.monotonic() - started
    return result


class _CheckFailed(AssertionError):
    pass


def _generated(
    check: Check,
    config: SuiteConfig,
    vocab: Vocabulary,
    runner: CaseRunner,
    ctx: Context,
    result: CheckResult,
) -> list[Judgment]:
    strategy: SearchStrategy[Case | EnvelopeCase | ScenarioCase | JournalCase]
    if check.input == "envelope":
        strategy = envelope_cases(vocab, variants=check.mutations)
    elif check.input == "scenario":
        strategy = scenario_cases(vocab, kinds=check.mutations)
    elif check.input == "journal":
        strategy = journal_cases(variants=check.mutations)
    elif check.mutations and check.valid_runs:
        strategy = cases(vocab, mutations=check.mutations, min_mutations=0, max_mutations=2)
    elif check.mutations:
        strategy = cases(vocab, mutations=check.mutations, min_mutations=1, max_mutations=2)
    else:
        strategy = cases(vocab, max_mutations=0)
    judgments: list[Judgment] = []
    last_failure: list[tuple[GradedCase, Judgment, Observation]] = []
    budget = {"after_first_failure": 0}

    def graded(case: Case | EnvelopeCase | ScenarioCase | JournalCase) -> GradedCase:
        if isinstance(case, EnvelopeCase):
            return GradedCase(
                "generated", case.data, "generated", (case.variant,), vocab=vocab,
                kind="envelope", command=case.command,
            )  # fmt: skip
        if isinstance(case, JournalCase):
            return GradedCase(
                "generated", case.data, "generated", (case.variant,), vocab=vocab, kind="journal"
            )
        if isinstance(case, ScenarioCase):
            return GradedCase(
                "generated", case.stream, "generated", (case.kind,), vocab=vocab,
                kind="scenario", scenario=dict(case.scenario),
            )  # fmt: skip
        return GradedCase("generated", case.stream, "generated", case.mutations, vocab=vocab)

    database: ExampleDatabase | None = config.database
    if database is None and config.database_dir is not None:
        database = DirectoryBasedExampleDatabase(str(config.database_dir))

    @hypothesis_seed(check_seed(config.seed, check.id))
    @settings(
        max_examples=config.examples,
        database=database,
        deadline=None,
        derandomize=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(strategy)
    def property_(case: Case | EnvelopeCase | ScenarioCase | JournalCase) -> None:
        if last_failure:
            budget["after_first_failure"] += 1
            if budget["after_first_failure"] > config.shrink_budget:
                # Out of shrink budget: every new candidate "passes", so Hypothesis settles
                # on the smallest failure found so far; that one still fails when replayed.
                best = min(last_failure, key=lambda f: (len(f[0].stream), f[0].stream))
                if graded(case).stream == best[0].stream:
                    last_failure.append(best)
                    raise _CheckFailed(best[1].message)
                return
        g = graded(case)
        obs = runner.run(g)
        j = judge(check, g, obs, ctx)
        if j.verdict in ("fail", "error"):
            last_failure.append((g, j, obs))
            raise _CheckFailed(j.message)
        judgments.append(j)

    # A stable database key per (check, client) so a failure replays first next run.
    fn = getattr(config.client.function, "read", config.client.function)  # inprocess.Parser
    who = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else shlex.join(config.client.argv)
    key = f"{check.id}|{who}|{config.client.mode}".encode()

    property_.hypothesis.inner_test._hypothesis_internal_add_digest = key  # type: ignore[attr-defined]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            property_()
    except _CheckFailed:
        pass
    except Flaky as exc:
        judgments.append(Judgment("error", f"the client is not deterministic: {exc}"))
        return judgments
    except HypothesisException as exc:
        judgments.append(Judgment("error", f"generation failed: {type(exc).__name__}: {exc}"))
        return judgments
    result.cases += config.examples
    if last_failure:
        case, j, obs = last_failure[-1]  # the last failure seen is the shrunk one
        judgments.append(j)
        failure = _failure(case, j, obs)
        failure.saved, failure.replay = _save(config, check, case)
        result.failures.insert(0, failure)
    return judgments


ProgressFn = Callable[[int, int, CheckResult], None]


def run_suite(
    checks: Sequence[Check],
    config: SuiteConfig,
    *,
    jobs: int = 1,
    progress: ProgressFn | None = None,
) -> list[CheckResult]:
    """Grade every check; results in catalogue order."""
    results: dict[str, CheckResult] = {}
    total = len(checks)
    if jobs <= 1 or total <= 1:
        for check in checks:
            results[check.id] = run_check(check, config)
            if progress:
                progress(len(results), total, results[check.id])
    else:
        import multiprocessing

        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = {pool.submit(run_check, check, config): check for check in checks}
            for future in as_completed(futures):
                check = futures[future]
                results[check.id] = future.result()
                if progress:
                    progress(len(results), total, results[check.id])
    return [results[c.id] for c in checks]
