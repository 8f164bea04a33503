"""The dispatch that picks a check's judge, under every conforming reading of the case.

Each profile's module names its judges (its ``JUDGES``); :data:`JUDGES` is all of them
(and any added with :func:`register_judge`), and :func:`judge` runs the one a check names
under the default reading and each registered alternative the case reaches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from stella_conform.conformance.checks import dashboard, envelope, reader, recorder, trace, wrapper
from stella_conform.conformance.checks.judging import (
    JudgeFn,
    summary_key,
    unanswered,
    verdict_judge,
)
from stella_conform.conformance.checks.model import Check, Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.oracle.decoder import RunSummary
from stella_conform.oracle.readings import Alternative

#: Every judge, by the name a check's ``judge`` gives: each profile module's ``JUDGES``.
JUDGES: dict[str, JudgeFn] = {
    **reader.JUDGES,
    **dashboard.JUDGES,
    **envelope.JUDGES,
    **recorder.JUDGES,
    **wrapper.JUDGES,
    **trace.JUDGES,
}


def register_judge(name: str, judge_fn: JudgeFn) -> None:
    """A judge a check can name that the kit does not ship (a new profile's, a test's)."""
    if name in JUDGES:
        raise ValueError(f"a judge named {name!r} is registered already")
    JUDGES[name] = judge_fn


def unregister_judge(name: str) -> None:
    """Remove a judge :func:`register_judge` added."""
    del JUDGES[name]


def judge(check: Check, case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Judge under every conforming reading: a client passes if it matches any one of them.

    The judge runs under the default reading and under each registered
    alternative the case reaches.  A pass records, per registered point, the
    reading (``A`` or ``B``) every passing reading agrees on: what the client
    took, as information.  A failure reports the reading whose verdict the
    client matched (so the message is about what it got wrong *within* that
    reading), else the default's.
    """
    if not obs.ok and check.judge != "lockstep":
        return unanswered(obs)
    if obs.summary is not None:
        summaries = case.input_kind.summaries(case)
        if summaries:
            obs.summary = expand_digests(obs.summary, summaries)
    ctx.fields = check.fields
    if ctx.computes is not None:
        ctx.fields = tuple(f for f in check.fields if summary_key(f) in ctx.computes)
    return _under_readings(JUDGES[check.judge], case, obs, ctx)


def judge_verdict(case: GradedCase, obs: Observation) -> Judgment:
    """The client's verdict alone, judged as :func:`judge` judges it: under every conforming
    reading (what ``replay`` without ``--check`` and ``smoke`` judge, so that a stream
    ``run`` passes a client on is one they pass it on too)."""
    if not obs.ok:
        return unanswered(obs)
    return _under_readings(verdict_judge, case, obs, Context())


def _under_readings(
    fn: JudgeFn,
    case: GradedCase,
    obs: Observation,
    ctx: Context,
) -> Judgment:
    """``fn`` under the default reading, then under each alternative (see :func:`judge`)."""
    first = fn(case, obs, ctx)
    alternatives = case.alternatives
    if first.verdict in ("crash", "error") or not alternatives:
        return first
    results = [(None, first)] + [(a, fn(case.under(a), obs, ctx)) for a in alternatives]
    for a, j in results:
        j.reading = a.reading if a is not None else ""
    passing = [a for a, j in results if j.verdict == "pass"]
    if passing or first.verdict == "pass":
        chosen = next(j for _, j in results if j.verdict == "pass")
        chosen.readings = _agreed(passing, alternatives, case.input_kind.default_touched(case))
        return chosen
    fails = [(a, j) for a, j in results if j.verdict == "fail"]
    matched = [
        j
        for a, j in fails
        if obs.verdict == (a.verdict if a is not None else case.expected_verdict)
    ]
    return (matched or [j for _, j in fails] or [first])[0]


def _agreed(
    passing: Sequence[Alternative | None],
    alternatives: Sequence[Alternative],
    default_touched: frozenset[str] | None = None,
) -> dict[str, str]:
    """Per point that has a reading B: ``A`` or ``B`` when every passing reading takes it.

    A passing reading that never reaches the point (it rejected the stream first) leaves
    the client's choice there open: nothing is said about that point."""
    points = sorted({p for a in alternatives for p in a.taken})
    out = {}
    for point in points:
        taken, open_ = set(), False
        for a in passing:
            took = a is not None and point in a.taken
            reached = a.touched if a is not None else default_touched
            if took or reached is None or point in reached:
                taken.add("B" if took else "A")
            else:
                open_ = True
        if len(taken) == 1 and not open_:
            out[point] = taken.pop()
    return out


def expand_digests(summary: dict[str, Any], readings: Sequence[RunSummary]) -> dict[str, Any]:
    """A summary with each ``{"sha256": HEX}`` long text replaced by the text it stands for.

    A digest of a text some conforming reading of the case holds becomes that text, so
    every judge compares strings as usual; any other digest becomes a string that says
    what it was (and matches nothing).
    """
    texts = summary.get("texts")
    values = [summary.get("final_text"), summary.get("preview")]
    values += texts if isinstance(texts, list) else []
    if not any(isinstance(v, dict) for v in values):
        return summary
    known: dict[str, str] = {}
    for reading in readings:
        for t in [*reading.texts, reading.preview]:
            if t is not None:
                known.setdefault(_sha256(t), t)

    def text(value: Any) -> Any:
        if not isinstance(value, dict) or "sha256" not in value:
            return value
        return known.get(value["sha256"], f"<a text whose sha256 is {value['sha256']}>")

    out = dict(summary)
    for key in ("final_text", "preview"):
        if key in out:
            out[key] = text(out[key])
    if isinstance(out.get("texts"), list):
        out["texts"] = [text(v) for v in out["texts"]]
    return out


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
