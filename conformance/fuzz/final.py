"""The final pass: every check graded as ``run`` grades it, with what fuzzing found.

When fuzzing stops, each check is graded once more the way ``run`` grades it, with at
least one generated case: its fixtures, then the database, where a failure found while
fuzzing is replayed and shrunk (without a database, each is run again here on a client of
its own).  What fuzzing did for a check is then folded into its result (:func:`_merge`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence

from stella_conform.conformance.checks import Check, judge
from stella_conform.conformance.fuzz.arms import FAILURES_PER_CHECK, Arm, Found
from stella_conform.conformance.fuzz.schedule import FuzzConfig
from stella_conform.conformance.suite import (
    CaseRunner,
    CheckResult,
    SuiteConfig,
    keep_bounded,
    run_check,
    shared_sessions,
)


class FinalPass:
    """Grades every check after fuzzing, within what is left of the budget.

    ``suite``: the session's configuration (the client as the session ran it);
    ``replays``: whether fuzzed failures are to be run again here (no example database
    holds them); ``graded``: the checks graded so far (a stop signal reports them).
    """

    def __init__(
        self,
        config: FuzzConfig,
        suite: SuiteConfig,
        checks: Sequence[Check],
        *,
        replays: bool,
    ) -> None:
        self.config = config
        self.suite = suite
        self.checks = checks
        self.replays = replays
        self.graded: list[CheckResult] = []

    def run(self, deadline: float, arms: Sequence[Arm], now: float) -> str | None:
        """Every check graded as ``run`` grades it (fixtures, then the database, shrunk),
        within what is left of the budget; what it could not grade in full says so."""
        replay = dataclasses.replace(self.suite, examples=1)
        if not math.isinf(self.config.seconds):
            left = max(0.0, deadline - now)
            replay = dataclasses.replace(
                replay,
                deadline=time.monotonic() + left,
                time_budget=self.config.seconds,
                budget_option="--for",
            )
        by_id = {arm.check.id: arm for arm in arms}
        with shared_sessions():
            for check in self.checks:
                result = run_check(check, replay)
                arm = by_id.get(check.id)
                if arm is not None:
                    passed = result.outcome in ("pass", "skip")
                    again = self._replayed(arm, replay) if passed else None
                    _merge(result, arm, check, again, self.suite.client.env)
                self.graded.append(result)
        cut = sum(1 for r in self.graded if r.cut_short)
        if not cut:
            return None
        return (
            f"cut short by --for: {cut} of {len(self.checks)} check(s) not graded in full "
            "(give fuzz more time to grade them)"
        )

    def partial(self, arms: Sequence[Arm]) -> list[CheckResult]:
        """What a stopped command reports: the checks the final pass graded, and every
        other check that failed while fuzzing (its failures are saved and replayable)."""
        results = list(self.graded)
        done = {r.id for r in results}
        for arm in arms:
            if arm.check.id in done or not arm.failures:
                continue
            found = sorted(arm.failures.values(), key=lambda f: f.seconds)
            check = arm.check
            result = CheckResult(
                check.id, check.name, check.rule, check.tier, check.failing_outcome,
                f"failed while fuzzing (not replayed: the kit was stopped): {found[0].message}",
                cases=arm.cases, failures=[f.failure for f in found], failed_cases=len(found),
            )  # fmt: skip
            keep_bounded(result.failures)
            results.append(result)
        order = {c.id: i for i, c in enumerate(self.checks)}
        return sorted(results, key=lambda r: order.get(r.id, len(order)))

    def _replayed(self, arm: Arm, config: SuiteConfig) -> Found | str | None:
        """The first fuzzed failure that fails again when run once more on its own, or why
        none was run again (the budget ran out).

        ``run_check`` replays a session's failures from the example database; without one
        (``--no-database``) it never sees them, so each is run again here, within the final
        pass's budget (``config``), on a client process of its own (a persistent session
        shared with the final pass is restarted for it): a deterministic client fails them
        again, and only a failure that does not come back is one that depended on earlier
        cases or on time.
        """
        if not self.replays:
            return None
        for found in sorted(arm.failures.values(), key=lambda f: f.seconds):
            if found.case is None:
                continue
            if config.deadline is not None and time.monotonic() > config.deadline:
                return (
                    f"not replayed: the {config.budget_option} of {config.time_budget:g} s ran out"
                )
            runner = CaseRunner(config, arm.check)
            if runner.session is not None and not runner.owns_session:
                runner.session.pause()  # on its own: no earlier case in the process
            try:
                obs = runner.run(found.case)
            finally:
                if runner.session is not None and not runner.owns_session:
                    runner.session.pause()  # nor this one in the next check's
                runner.close()
            if judge(arm.check, found.case, obs, arm.ctx).verdict in ("fail", "crash", "error"):
                return found
        return None


def _outcome(check: Check, found: Sequence[Found]) -> str:
    """The outcome a check's fuzzed failures make, ranked as a run's cases are
    (:func:`~stella_conform.conformance.checks.model.combine`): a crash outranks a wrong
    answer, which outranks a case the kit could not judge."""
    verdicts = {f.failure.verdict for f in found}
    if "crash" in verdicts:
        return "crash"
    if "fail" in verdicts or not verdicts <= {"error"}:
        return check.failing_outcome
    return "error"


def _merge(
    result: CheckResult,
    arm: Arm,
    check: Check,
    replayed: Found | str | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Fold what fuzzing did for one check into its graded result.

    ``replayed``: a fuzzed failure that failed again on its own (the session had no example
    database for the final grading to replay it from), or why none was run again; ``env``:
    what the session set in the client's environment (its hash seed), said when a failure
    did not come back.
    """
    result.cases += arm.cases
    found = sorted(arm.failures.values(), key=lambda f: f.seconds)
    if not found:
        if result.outcome == "pass":
            result.message = f"{result.cases} case(s), {arm.cases} of them fuzzed"
        return
    crash = next((f for f in found if f.failure.verdict == "crash"), None)
    if result.outcome in ("pass", "skip"):
        first = replayed if isinstance(replayed, Found) else found[0]
        result.outcome = _outcome(check, [first, *found])
        if crash is not None and first.failure.verdict != "crash":
            result.message = f"crashed while fuzzing: {crash.message}"
            again = [replayed] if isinstance(replayed, Found) else []
            found = [crash, *again, *(f for f in found if f is not crash and f is not replayed)]
        elif isinstance(replayed, Found):
            result.message = f"found while fuzzing, and again when replayed: {replayed.message}"
            found = [replayed, *(f for f in found if f is not replayed)]
        elif replayed is not None:
            result.message = f"failed while fuzzing ({replayed}): {found[0].message}"
        else:
            same = "".join(f", replayed with {k}={v} as fuzzed" for k, v in (env or {}).items())
            result.message = (
                f"failed while fuzzing but not when replayed (the client may depend on "
                f"earlier cases or on time{same}): {found[0].message}"
            )
    elif crash is not None and result.outcome != "crash":
        # the final pass answered wrong (or could not judge), but the client died on a
        # case while fuzzing: a crash outranks a wrong answer, as for a run's cases
        result.outcome = "crash"
        result.message = f"crashed while fuzzing: {crash.message} (final pass: {result.message})"
        result.failures.insert(0, crash.failure)  # the case it died on, shown first
        result.failed_cases += 1
    elif result.cut_short and result.outcome == "error" and not result.failures:
        # not graded in full in the final pass, but fuzzing found a failure: that is its
        # outcome (the case is saved and replays), with the budget's words after it
        result.outcome = check.failing_outcome
        result.message = f"{found[0].message} (failed while fuzzing; {result.message})"
    shown = {f.saved for f in result.failures}
    for f in found:
        if f.failure.saved not in shown and len(result.failures) < FAILURES_PER_CHECK + 1:
            result.failures.append(f.failure)
            result.failed_cases += 1
    # every case fuzzing saved (the fuzz section lists those the check's failures leave
    # out): the smallest generated whole, any other over 256 KiB listed by size and sha256
    listed = {id(f) for f in result.failures}
    keep_bounded([*result.failures, *(f.failure for f in found if id(f.failure) not in listed)])
