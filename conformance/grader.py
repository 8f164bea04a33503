"""Observed against expected, per check.

The expected side is always the reference decoder's reading of the case's
bytes (or a fixture's expectation file, which the decoder is tested to agree
with).  A judge answers ``pass``, ``fail`` with what differed, ``n/a`` (this
case says nothing about the check, usually because another check already
failed it), or ``error`` (the client crashed, hung or broke the protocol:
not a verdict on any rule).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from stella_conform.conformance.checks import Check
from stella_conform.conformance.runner import Observation
from stella_conform.decoder import Kind, LineOutcome, RunSummary, decode_all
from stella_conform.schemas.vocabulary import Vocabulary

Verdict = Literal["pass", "fail", "n/a", "error"]


@dataclass
class GradedCase:
    """A case as the grader sees it: bytes, where it came from, and the oracle's reading."""

    name: str
    stream: bytes
    source: str  # "fixture" or "generated"
    mutations: tuple[str, ...] = ()
    also_conforming: tuple[str, ...] = ()
    vocab: Vocabulary | None = field(default=None, repr=False)

    @cached_property
    def _decoded(self) -> tuple[list[LineOutcome], RunSummary]:
        decoded = decode_all(self.stream, self.vocab)
        return decoded.outcomes, decoded.summary

    @property
    def expected(self) -> RunSummary:
        return self._decoded[1]

    @property
    def outcomes(self) -> list[LineOutcome]:
        return self._decoded[0]


@dataclass
class Judgment:
    verdict: Verdict
    message: str = ""


@dataclass
class Context:
    """Facts about the client measured once per check (e.g. its usual stderr)."""

    baseline_stderr_lines: int = 0


def judge(check: Check, case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not obs.ok and check.judge != "lockstep":
        return Judgment("error", f"client {obs.describe()}")
    return JUDGES[check.judge](case, obs, ctx)


def _verdict_ok(case: GradedCase, obs: Observation) -> bool:
    expected = case.expected.verdict
    return obs.verdict == expected or obs.verdict in case.also_conforming


def _expected_verdict(case: GradedCase) -> str:
    exp = case.expected
    if exp.verdict == "reject":
        return f"reject at line {exp.rejected_line} ({exp.reason})"
    return "accept"


def _verdict(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _verdict_ok(case, obs):
        return Judgment("pass")
    return Judgment("fail", f"expected {_expected_verdict(case)}; client: {obs.describe()}")


def _lockstep(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if obs.stalled_at is not None:
        return Judgment(
            "fail",
            f"no observation for line {obs.stalled_at} within the line timeout after it was "
            "written: the client reads ahead or buffers the whole stream",
        )
    if not obs.ok:
        return Judgment("error", f"client {obs.describe()}")
    return Judgment("pass")


def _count(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    if "unrecognized_events" not in summary:
        return Judgment("fail", "the summary has no unrecognized_events count")
    want, got = case.expected.unrecognized_events, summary["unrecognized_events"]
    if got != want:
        return Judgment("fail", f"expected {want} unrecognized event(s); client counted {got}")
    return Judgment("pass")


def _line_disagreements(case: GradedCase, obs: Observation, *, unknown_only: bool) -> list[str]:
    problems = []
    for outcome in case.outcomes:
        if outcome.kind in (Kind.BLANK, Kind.TORN, Kind.REJECT):
            continue
        if unknown_only and outcome.kind is not Kind.UNKNOWN:
            continue
        seen = obs.lines.get(outcome.line)
        if seen is None:
            problems.append(f"line {outcome.line}: no observation")
            continue
        if seen["outcome"] != outcome.kind.value:
            tag = f" {outcome.tag!r}" if outcome.tag is not None else ""
            got_type = f" as {seen.get('type')!r}" if seen.get("type") else ""
            problems.append(
                f"line {outcome.line}:{tag} is {outcome.kind.value}; client read it "
                f"{seen['outcome']}{got_type}"
            )
        elif outcome.kind is Kind.KNOWN and seen.get("type") not in (None, outcome.tag):
            problems.append(
                f"line {outcome.line}: type {outcome.tag!r}; client read it as {seen['type']!r}"
            )
    return problems


def _no_guessing(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    problems = _line_disagreements(case, obs, unknown_only=True)
    summary = obs.summary or {}
    if "final_text" in summary and summary["final_text"] != case.expected.final_text:
        problems.append(
            f"final text {json.dumps(summary['final_text'])}, expected "
            f"{json.dumps(case.expected.final_text)}"
        )
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _dispatch(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    problems = _line_disagreements(case, obs, unknown_only=False)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _quiet(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.unrecognized_events == 0:
        return Judgment("n/a")
    extra = obs.stderr_lines - ctx.baseline_stderr_lines
    if extra >= 1:
        return Judgment(
            "fail",
            f"{obs.stderr_lines} stderr line(s) for {case.expected.unrecognized_events} "
            f"unrecognized event(s), against {ctx.baseline_stderr_lines} on a run without "
            f"any: {obs.stderr_tail.strip()[:160]!r}",
        )
    return Judgment("pass")


def _rejected_line(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if case.expected.verdict != "reject" or obs.verdict != "reject":
        return Judgment("n/a")
    want, got = case.expected.rejected_line, obs.rejected_line
    if got != want:
        named = f"line {got}" if got is not None else "no line"
        return Judgment("fail", f"rejected {named}; the bad line is {want}")
    return Judgment("pass")


def _last_line_kept(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    real = [o for o in case.outcomes if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    if not real:
        return Judgment("n/a")
    last = real[-1]
    seen = obs.lines.get(last.line)
    if seen is None or seen["outcome"] != last.kind.value:
        got = seen["outcome"] if seen else "nothing"
        return Judgment(
            "fail",
            f"line {last.line} (complete, no trailing newline) is {last.kind.value}; client: {got}",
        )
    return Judgment("pass")


JUDGES: dict[str, Callable[[GradedCase, Observation, Context], Judgment]] = {
    "verdict": _verdict,
    "lockstep": _lockstep,
    "count": _count,
    "no-guessing": _no_guessing,
    "dispatch": _dispatch,
    "quiet": _quiet,
    "rejected-line": _rejected_line,
    "last-line-kept": _last_line_kept,
}


def combine(check: Check, judgments: Sequence[Judgment]) -> tuple[str, str]:
    """One outcome for a check from its per-case judgments."""
    fails = [j for j in judgments if j.verdict == "fail"]
    errors = [j for j in judgments if j.verdict == "error"]
    graded = [j for j in judgments if j.verdict in ("pass", "fail")]
    if fails:
        return check.failing_outcome, fails[0].message
    if errors:
        return "error", errors[0].message
    if not graded:
        return "skip", "no case graded this check (each depends on a verdict another check failed)"
    return "pass", f"{len(graded)} case(s)"


def expected_text(summary: RunSummary) -> dict[str, Any]:
    """The parts of the oracle's reading worth printing next to a failure."""
    s = summary.to_json()
    keys = ("verdict", "rejected_line", "unrecognized_events", "final_text", "terminator")
    return {k: s[k] for k in keys}
