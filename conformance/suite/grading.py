"""The suite loop: one check graded (its fixtures, then its generated phase), and every
check of a run, inline or in ``-j`` workers."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator, Sequence

from stella_conform import stopping
from stella_conform.conformance.checks import Check, Context, Judgment, combine, judge
from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.report.events import Event
from stella_conform.conformance.suite.cases import not_drawable
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.failures import (
    MESSAGE_CAP,
    bound_stopped,
    case_failure,
    claim_dispute,
    expected_computed,
    keep_bounded,
    smallest_first,
    tracking_written,
)
from stella_conform.conformance.suite.fixtures import claimed, fixture_case, fixture_path
from stella_conform.conformance.suite.generated import generated_judgments
from stella_conform.conformance.suite.model import FAILURES_KEPT, CheckResult, OnCase
from stella_conform.conformance.suite.pacing import Pace, stopped_judgment
from stella_conform.conformance.suite.replay import replay_command
from stella_conform.conformance.suite.sessions import CaseRunner
from stella_conform.conformance.suite.travel import fixture_name
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.safe_text import clip, no_surrogates
from stella_conform.schemas.vocabulary import Vocabulary


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Keep the objects alive before a check out of the garbage collector's full passes.

    A check allocates fast (every example's draws, events and decoded lines), so the
    collector runs its full pass, over every object of the process (the imports, the
    vocabulary, Hypothesis's strategies and caches), about twice per check, and each
    pass is costly. Frozen, those objects are skipped until the check ends,
    when they go back to the collector (nothing stays uncollectable). A caller that froze
    the heap itself keeps its own freeze.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        # The check's own garbage (Hypothesis's examples and their cycles) is collected
        # while the heap is still frozen, so the pass visits only what the check made:
        # unfrozen, it would join the oldest generation, whose full passes are rare, and
        # a run would keep every check's garbage (about 8,000 objects a check).
        gc.collect()
        gc.unfreeze()


#: Why an in-process parser read as ``read(lines)`` skips the checks of line observations
#: (it has no mode to change: its signature decides).
IN_PROCESS_SKIP = (
    "needs line observations: the in-process parser takes no report argument "
    "(read(lines, report) reports each line; docs/pytest-plugin.md)"
)


def run_check(check: Check, config: SuiteConfig, on_case: OnCase | None = None) -> CheckResult:
    """Grade one check (called in a worker process, or inline for ``-j 1``); ``on_case`` is
    told each case's verdict as it is judged.

    A stop (Ctrl-C, SIGTERM) mid-check bounds what the check had saved as a finished one
    does (:func:`~stella_conform.conformance.suite.failures.keep_bounded`), inline or in a
    worker: its report lists no such check, but the folder, uploaded whatever happened, must
    not keep every large case it wrote."""
    result = CheckResult(check.id, check.name, check.rule, check.tier, "skip", "")
    with tracking_written() as written:
        try:
            with _heap_frozen(), stopping.on_worker_stop(lambda: bound_stopped(result, written)):
                return _run_check(check, config, result, on_case)
        except stopping.Stopped:
            bound_stopped(result, written)
            raise


def _run_check(
    check: Check, config: SuiteConfig, result: CheckResult, on_case: OnCase | None
) -> CheckResult:
    started = time.monotonic()
    vocab = config.vocabulary()
    if not check.grades_in(config.client.mode):
        result.message = (
            IN_PROCESS_SKIP
            if config.client.function is not None
            else check.skip_reason(config.client.mode)
        )
        return result
    unmet = config.claims.unmet(check, vocab, config.client.mode)
    if unmet is not None:
        # not a skip: the client computes what it cannot know. Graded as if it knew the
        # types, so the failure comes with the cases it gets wrong (and replays as such).
        config = config.with_claims(config.claims.knowing(unmet[1]))
        vocab = config.vocabulary()
    not_claimed = config.claims.skip_reason(check, vocab)
    if not_claimed is not None:
        result.message = not_claimed
        return result
    if config.client.function is not None and not check.kind.in_process:
        result.message = f"an in-process client cannot be graded on the {check.profile} profile"
        return result
    pace = Pace(config)
    if pace.out_of_time():
        result.outcome = "error"
        result.cut_short = True
        result.message = (
            f"not graded: the {config.budget_option} of {config.time_budget:g} s ran out "
            "before it started"
        )
        return result
    runner = CaseRunner(config, check)
    judgments: list[Judgment] = []
    try:
        claims = config.claims
        ctx = Context(computes=claims.computes, summary_only=claims.summary_only)
        told = on_case or _untold
        stopped = _grade_fixtures(check, config, vocab, runner, ctx, result, pace, judgments, told)
        if not stopped and (check.mutations or check.valid_runs) and config.examples > 0:
            judgments.extend(
                generated_judgments(check, config, vocab, runner, ctx, result, pace, told)
            )
    finally:
        runner.close()
    unmet_said = None if unmet is None else unmet[0]
    _conclude(check, vocab, result, judgments, pace, unmet_said, config.claims)
    result.seconds = time.monotonic() - started
    result.cut_short = pace.ran_out
    return result


def _untold(verdict: str) -> None:
    """No one listens for cases."""


def _grade_fixtures(
    check: Check,
    config: SuiteConfig,
    vocab: Vocabulary,
    runner: CaseRunner,
    ctx: Context,
    result: CheckResult,
    pace: Pace,
    judgments: list[Judgment],
    on_case: OnCase,
) -> bool:
    """The check's curated fixtures (after a quiet check's baseline), each judgment added
    to ``judgments`` and each failure to ``result``; whether the check stopped (a client
    that never answers, the time budget)."""
    claims = config.claims
    fixtures_dir = config.fixtures_dir or bundled_fixtures_dir()
    if check.judge == "quiet":
        baseline = runner.run(fixture_case(check, "minimal_run", vocab, fixtures_dir))
        ctx.baseline_stderr_lines = baseline.stderr_lines
        stop = pace.stop_message(baseline)
        if stop is not None:
            judgments.append(stopped_judgment(baseline, stop))
            return True
    for name in check.fixtures_for(bool(vocab.learnt)):
        if config.fixtures_per_check is not None and result.cases >= config.fixtures_per_check:
            break
        if pace.out_of_time():
            judgments.append(Judgment("error", pace.budget_message()))
            return True
        case = fixture_case(check, name, vocab, fixtures_dir, claims)
        if not claimed(case, claims):
            continue
        obs = runner.run(case)
        j = judge(check, case, obs, ctx)
        stop = pace.stop_message(obs)
        if stop is not None:
            j = stopped_judgment(obs, stop)
        on_case(j.verdict)
        judgments.append(j)
        result.cases += 1
        if j.verdict in ("fail", "crash", "error"):
            result.failed_cases += 1
        if j.verdict in ("fail", "crash", "error") and (
            len(result.failures) < FAILURES_KEPT or stop
        ):
            failure = case_failure(check, case, j, obs)
            path = fixture_path(check, name, fixtures_dir)
            failure.saved = fixture_name(path) or str(path)  # fixture:NAME, where bundled
            failure.replay = replay_command(failure.saved, config.client, check, config)
            result.failures.insert(0 if stop else len(result.failures), failure)
        if stop is not None:
            return True
    return False


def _conclude(
    check: Check,
    vocab: Vocabulary,
    result: CheckResult,
    judgments: list[Judgment],
    pace: Pace,
    unmet: str | None,
    claims: Claims,
) -> None:
    """The check's outcome and message from its judgments, its readings counted, and its
    failures listed (each case once, smallest first, the one shown first chosen for the
    client's ``claims``: :func:`~stella_conform.conformance.suite.failures.claim_dispute`)
    and bounded, each failure's expected side limited to what the client computes.
    ``unmet``: why the client's claims fail the check whatever its cases say."""
    result.outcome, result.message = combine(check, judgments)
    if not judgments and not_drawable(check, vocab):
        result.message = not_drawable(check, vocab) or ""
    if unmet is not None and result.outcome not in ("crash", "error"):  # whatever the cases say
        result.outcome = check.failing_outcome
        result.message = unmet + (f"; {result.message}" if result.failures else "")
    for j in judgments:
        for point, reading in j.readings.items():
            label = f"{point}={reading}"
            result.readings[label] = result.readings.get(label, 0) + 1
    result.message = clip(no_surrogates(result.message), MESSAGE_CAP)
    kept = len(result.failures)
    disputed = claim_dispute(check, claims, vocab)
    result.failures = smallest_first(result.failures, result.outcome, disputed)
    for failure in result.failures:
        failure.expected = expected_computed(failure.expected, claims.computes)
    result.failed_cases -= kept - len(result.failures)  # the same case twice is one
    keep_bounded(result.failures)
    if result.outcome in ("crash", "error") and pace.reason is not None:
        result.message = clip(no_surrogates(pace.reason), MESSAGE_CAP)
    elif result.outcome in ("fail", "warn", "crash", "error") and result.failures:
        # the smallest case, shown first (after the claim that makes it a failure, if any)
        result.message = (f"{unmet}; " if unmet is not None else "") + result.failures[0].message


def grading_order(checks: Sequence[Check]) -> list[Check]:
    """The checks in the order a run grades them: the quiet ones first, the others as given.

    A quiet check (``R3.no-loud-warning``) wants a client process no earlier check has
    made write anything (:class:`~stella_conform.conformance.suite.sessions.SharedSession`);
    graded first, it gets the run's first process fresh, and the checks after it go on
    sharing that one: one client start a run instead of two.  Its verdict is the same either
    way.  Results and reports keep the catalogue order.
    """
    return sorted(checks, key=lambda check: check.judge != "quiet")


def run_suite(
    checks: Sequence[Check],
    config: SuiteConfig,
    *,
    jobs: int = 1,
    tell: Callable[[Event], None] | None = None,
) -> list[CheckResult]:
    """Grade every check, telling each step to ``tell``
    (:class:`~stella_conform.conformance.suite.tasks.Grading`); results in catalogue order
    (graded in :func:`grading_order`).  A stop raises with what was graded before it."""
    from stella_conform.conformance.suite.tasks import Grading, Task

    order = grading_order(checks)
    grading = Grading([Task(check, config) for check in order], tell)
    try:
        grading.run(jobs)
    except stopping.Stopped as stop:
        graded = {order[i].id: result for i, result in grading.results.items()}
        stop.partial = [graded[c.id] for c in checks if c.id in graded]
        raise
    graded = {order[i].id: result for i, result in grading.results.items()}
    return [graded[c.id] for c in checks]
