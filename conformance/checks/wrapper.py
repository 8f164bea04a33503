"""The wrapper profile: a program that launches stella and reads how it ended, and the judges.

The fake stella plays a scenario (an exit status, a reason, a run killed mid-line)
and logs how it was invoked; the judges compare the wrapper's verdict and outcome
with :func:`expected_outcome`'s, and its command line with stella's parser.
"""

from __future__ import annotations

from stella_conform.conformance.checks.judging import JudgeFn, wrong_verdict
from stella_conform.conformance.checks.model import LAUNCHED, Check, Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase

WRAPPER: tuple[Check, ...] = (
    Check(
        "W.exit-codes-mapped",
        "maps stella's exit status: 0 done, 3 stopped on purpose, 130 cancelled, 143 killed",
        "exit-codes",
        "wrapper-outcome",
        fixtures=(
            "exit_0_completed",
            "exit_1_failed",
            "exit_3_spend_limit",
            "exit_130_cancelled",
            "exit_143_terminated",
            "preflight_no_api_key",
        ),
        mutations=("ending",),
        profile="wrapper",
        modes=LAUNCHED,
        why="0 verified; 3 stopped on purpose, read the reason before retrying; 130 cancelled "
        "by the operator; 143 the runner killed us; anything else failed.",
    ),
    Check(
        "W.stopped-reason-read",
        "reads reason when stella stopped on purpose",
        "exit-codes",
        "wrapper-reason",
        fixtures=("exit_3_spend_limit", "exit_3_deadline"),
        mutations=("stopped",),
        profile="wrapper",
        modes=frozenset({"report"}),
        why="The summary comes back with status aborted, and reason names the cap that stopped it.",
    ),
    Check(
        "W.killed-run-survived",
        "survives a run killed in the middle of a line",
        "R6",
        "wrapper-outcome",
        fixtures=("killed_mid_line_143", "cancelled_mid_line_130"),
        mutations=("killed-mid-line",),
        profile="wrapper",
        modes=LAUNCHED,
        why="A process killed mid-write leaves a partial line; everything before it is valid.",
    ),
    Check(
        "W.output-format-placement",
        "puts --output-format after run or fleet, or uses STELLA_OUTPUT_FORMAT",
        "output-format",
        "wrapper-invocation",
        fixtures=("exit_0_completed",),
        mutations=("ending",),
        profile="wrapper",
        modes=LAUNCHED,
        why="--output-format goes after the subcommand; it is not a global flag, and anywhere "
        "else it is a parse error.",
    ),
)


def _invocation_problem(obs: Observation) -> str | None:
    if not obs.invocations:
        return "the client never launched stella"
    errors = [i.get("parse_error") for i in obs.invocations if i.get("parse_error")]
    return f"stella refused the command line: {errors[0]}" if errors else None


def _wrapper_outcome(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _invocation_problem(obs):
        return Judgment("n/a")  # W.output-format-placement says why
    want = case.wrapper
    code = case.scenario.get("exit", 0)
    if obs.verdict != want["verdict"]:
        exit_ = 0 if want["verdict"] == "accept" else 1
        return wrong_verdict(
            f"stella exited {code} ({want['outcome']}): the wrapper should exit {exit_}", obs
        )
    if obs.summary is not None and obs.summary.get("outcome") != want["outcome"]:
        return Judgment(
            "fail",
            f"stella exited {code}: expected outcome {want['outcome']!r}, "
            f"client {obs.summary.get('outcome')!r}",
        )
    return Judgment("pass")


def _wrapper_reason(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _invocation_problem(obs) or obs.summary is None:
        return Judgment("n/a")
    if not any(i.get("output_format") == "json" for i in obs.invocations):
        return Judgment("n/a")  # the reason is in the json envelope; the client chose another
    want = case.wrapper["reason"]
    got = obs.summary.get("reason")
    if got != want:
        return Judgment("fail", f"stopped on purpose because {want!r}; client read {got!r}")
    return Judgment("pass")


def _wrapper_invocation(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    problem = _invocation_problem(obs)
    return Judgment("fail", problem) if problem else Judgment("pass")


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    "wrapper-outcome": _wrapper_outcome,
    "wrapper-reason": _wrapper_reason,
    "wrapper-invocation": _wrapper_invocation,
}
