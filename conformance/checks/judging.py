"""What every profile's judges share: the verdict, and the summary's fields against the oracle's.

A judge is a function of the case, the client's observation and the check's
:class:`Context`; these are its building blocks (and the two judges more than one
profile grades with: the verdict alone, and the summary's fields on accepted cases).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from stella_conform.conformance.checks.model import Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase, expected_verdict_text

#: A judge: one case, the client's observation of it, and what the check compares.
JudgeFn = Callable[[GradedCase, Observation, Context], Judgment]


def unanswered(obs: Observation) -> Judgment:
    """A case the client gave no verdict on: ``crash`` when it died (its own failure, on any
    rule: a crash on an unknown type breaks rule 3 as surely as a rejection does), else
    ``error`` (a hang, a protocol error: nothing to judge)."""
    if obs.status == "crash":
        detail = obs.detail.removeprefix("crashed: ")
        return Judgment("crash", f"client crash: {detail}")
    return Judgment("error", f"client {obs.describe()}")


def summary_key(name: str) -> str:
    return "texts" if name == "texts-unordered" else name


def verdict_ok(case: GradedCase, obs: Observation) -> bool:
    return obs.verdict == case.expected.verdict


def wrong_verdict(expected: str, obs: Observation) -> Judgment:
    """A fail for the client's verdict: what was expected, then what the client said, in
    its own words (signed without them)."""
    return Judgment(
        "fail",
        f"{expected}; client: {obs.describe()}",
        signature=f"{expected}; client: {obs.describe(own_words=False)}",
    )


def verdict_judge(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if verdict_ok(case, obs):
        return Judgment("pass")
    return wrong_verdict(f"expected {expected_verdict_text(case)}", obs)


def _normal(name: str, value: Any) -> Any:
    """Compare readings as values, not spellings: unordered sets sorted, absent scopes empty."""
    if name == "unrecognized_types" and isinstance(value, list):
        return sorted(str(v) for v in value)
    if name == "texts-unordered" and isinstance(value, list):
        return sorted(str(v) for v in value)
    if name == "stages" and isinstance(value, dict):
        return {scope: list(value.get(scope) or []) for scope in ("turn", "run")}
    return value


def field_problems(
    want: dict[str, Any], summary: dict[str, Any], fields: Sequence[str]
) -> list[str]:
    problems = []
    for name in fields:
        key = "texts" if name == "texts-unordered" else name
        if key not in summary:
            problems.append(f"the summary has no {key!r}")
            continue
        expected, got = _normal(name, want.get(key)), _normal(name, summary[key])
        if expected != got:
            problems.append(f"{key}: expected {json.dumps(expected)}, client {json.dumps(got)}")
    return problems


def reading_judge(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client's summary agrees with the oracle on the check's fields (accepted cases)."""
    if obs.verdict != case.expected_verdict or case.expected_verdict != "accept":
        return Judgment("n/a")
    problems = field_problems(case.reading(), obs.summary or {}, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def verdict_then_fields(
    want: str, why: str, reading: dict[str, Any], obs: Observation, ctx: Context
) -> Judgment:
    """The verdict on a whole document, then (when the client reports) the check's fields."""
    if obs.verdict != want:
        return wrong_verdict(f"expected {want}{why}", obs)
    if want != "accept" or obs.summary is None or not ctx.fields:
        return Judgment("pass")
    problems = field_problems(reading, obs.summary, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")
