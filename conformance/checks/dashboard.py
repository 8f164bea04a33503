"""The dashboard profile: what a client that shows a run computes from it, and the judges.

Elapsed time, the transcript's order, previews replaced by text, both field
spellings, stages per scope, the run's terminator, turns, exact integers, the
version gap: each compared with the oracle's reading of the same stream.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from stella_conform.conformance.checks.judging import (
    JudgeFn,
    field_problems,
    verdict_ok,
)
from stella_conform.conformance.checks.model import REPORTING, Check, Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.oracle import client_points
from stella_conform.oracle.fold import USAGE_FIELDS

_TS_FIXTURES = ("ts_absent_and_backwards", "minimal_run", "multiple_turns", "clock_set_back")

DASHBOARD: tuple[Check, ...] = (
    Check(
        "D.elapsed-clamped",
        "computes elapsed time from an optional, non-monotonic ts, clamping negative steps",
        "ts",
        "elapsed",
        fixtures=_TS_FIXTURES,
        mutations=("ts-removed", "ts-backwards", "ts-extreme", "ts-repeated"),
        valid_runs=True,
        profile="dashboard",
        modes=REPORTING,
        fields=("elapsed_ms",),
        why="ts is optional forever and not monotonic: durations clamp a negative delta to zero. "
        "(A case with a ts above 2^53 is D.integers-exact's to grade.)",
    ),
    Check(
        "D.order-from-stream",
        "orders the transcript by the stream, not by ts",
        "ts",
        "stream-order",
        fixtures=("ts_absent_and_backwards", "repeated_ts"),
        mutations=("ts-backwards", "ts-repeated"),
        profile="dashboard",
        modes=REPORTING,
        fields=("texts",),
        types=("text",),
        why="Order is the order of the lines; ts may go backwards and may be absent.",
    ),
    Check(
        "D.text-replaces-preview",
        "replaces the accumulated text_delta preview with the text that follows",
        "preview",
        "reading",
        fixtures=(
            "retried_deltas",
            "minimal_run",
            "multiple_turns",
            "line_separators_in_strings",
            "type_like_payloads",
            "case_variant_keys",
        ),
        mutations=(
            "line-separators",
            "unicode-edges",
            "type-like-payloads",
            "case-variant-keys",
            "json-spellings",
        ),
        strata=(
            "unterminated-content-last",
            "preview-across-tool",
            "text-after-streamed-step",
            "case-folded-twins",
        ),
        valid_runs=True,
        profile="dashboard",
        modes=REPORTING,
        fields=("final_text", "texts-unordered", "preview"),
        types=("text", "text_delta"),
        why="text is authoritative and replaces the deltas; a retried call streams its deltas "
        "again from the start, so appending shows doubled or garbled text.",
    ),
    Check(
        "D.legacy-spellings-read",
        "reads text and text_delta in either field spelling, the self-describing one first",
        "aliases",
        "reading",
        fixtures=("legacy_spellings_read", "legacy_spellings_alone"),
        profile="dashboard",
        modes=REPORTING,
        fields=("final_text", "texts", "preview"),
        types=("text", "text_delta"),
        why="Accept either field name on either event; when both are present, the "
        "self-describing name (text's text, text_delta's delta) wins.",
    ),
    Check(
        "D.stages-per-scope",
        "tracks turn-scope and run-scope stages as two sequences",
        "stages",
        "reading",
        fixtures=("stage_scopes_interleaved", "multiple_turns"),
        mutations=("json-spellings",),
        valid_runs=True,
        profile="dashboard",
        modes=REPORTING,
        fields=("stages",),
        types=("stage",),
        why="stage carries scope: turn stages come from the engine, run stages from a "
        "wrapper; merged, they read as one sequence going backwards.",
    ),
    Check(
        "D.run-terminator",
        "ends the run on run_complete, or on error for a failed run; complete is unknown",
        "terminator",
        "reading",
        fixtures=(
            "minimal_run",
            "failed_run_ends_on_error",
            "archived_complete",
            "type_like_payloads",
            "spaced_terminator",
        ),
        mutations=("type-like-payloads", "json-spellings", "line-separators"),
        profile="dashboard",
        modes=REPORTING,
        fields=("terminator",),
        types=("run_complete", "error"),
        why="run_complete is the terminator; a failed run ends on error; there is no complete "
        "in today's vocabulary, so waiting for it never sees the run end. The type field "
        'decides, not bytes: {"type":"run_complete"} inside a tool input is not the end, and '
        '"type": "run_complete" with a space is.',
    ),
    Check(
        "D.integers-exact",
        "sums token counts and durations, and computes elapsed time, exactly above 2^53",
        "precision",
        "exact-integers",
        fixtures=("integers_above_2_53",),
        mutations=("big-integers",),
        strata=("case-folded-twins",),
        profile="dashboard",
        modes=REPORTING,
        fields=("elapsed_ms", "usage"),
        why="ts, token counts and durations are unsigned 64-bit integers; read as doubles "
        "(JavaScript's JSON.parse, float64 columns) they lose their units above 2^53 and sums "
        "and differences go wrong silently. Only the fields a client reports are compared, "
        "and elapsed time only where ts never runs backwards (the clamp is "
        "D.elapsed-clamped's rule).",
    ),
    Check(
        "D.turns-counted",
        "counts turns on the turn boundary event (turn_complete), not on stages",
        "terminator",
        "reading",
        fixtures=("multiple_turns", "minimal_run", "archived_complete"),
        mutations=("json-spellings",),
        valid_runs=True,
        profile="dashboard",
        modes=REPORTING,
        fields=("turns_completed",),
        types=("turn_complete", "complete"),
        why="Match on turn_complete if you want per-turn boundaries; a stage named complete "
        "is a stage, and an archived complete event is unknown today.",
    ),
    Check(
        "D.version-gap-reported",
        "reports the version gap: which unrecognized types it saw",
        "R3",
        "reading",
        fixtures=("from_a_newer_stella", "tempting_unknown_names", "archived_complete"),
        mutations=("unknown-type", "unknown-in-tool-pair"),
        profile="dashboard",
        modes=REPORTING,
        fields=("unrecognized_types",),
        why="A version gap is reported as a count of unrecognized types: which types, not "
        "only how many events (R3.unknown-counted grades the count).",
    ),
)


#: Above this, a double (JavaScript's number, a float64 column) no longer holds every integer.
EXACT_IN_A_DOUBLE = 2**53
#: Usage summed over no step_usage event, spelled as a sum.
NO_USAGE = dict.fromkeys(USAGE_FIELDS, 0)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _holds_type(case: GradedCase, tag: str) -> bool:
    """Whether a line the reading reads carries this ``type`` (known to the client or not)."""
    return any(isinstance(o.raw, dict) and o.raw.get("type") == tag for o in case.outcomes)


def as_none_is_spelled(
    case: GradedCase, want: dict[str, Any], summary: dict[str, Any], fields: Sequence[str]
) -> dict[str, Any]:
    """The oracle's reading with each "none" of ``fields`` the client spells another way
    taken as the client spells it, where both spellings say the same
    (docs/adapter-protocol.md, the summary field by field):

    * ``preview``: no text_delta pending is ``null`` or ``""`` (the deltas since the last
      text, concatenated: none, or only empty ones, show nothing either way);
    * ``usage``: where no line read is a ``step_usage``, ``null`` (nothing reported) or
      zeros (the sum over none); where one is, and the client does not know the type, only
      ``null``: a count it did not read is no zero;
    * ``elapsed_ms``: where fewer than two stamps are read, ``null`` (no time difference
      to measure) or ``0`` (the sum of no steps).
    """
    out = dict(want)
    got = summary.get("preview", False)
    if "preview" in fields and out.get("preview") in (None, "") and (got is None or got == ""):
        out["preview"] = got
    if (
        "usage" in fields
        and out.get("usage") is None
        and summary.get("usage") == NO_USAGE
        and all(_is_int(v) for v in summary["usage"].values())
        and not _holds_type(case, "step_usage")
    ):
        out["usage"] = summary["usage"]
    got = summary.get("elapsed_ms", False)
    if (
        "elapsed_ms" in fields
        and (out.get("elapsed_ms") is None or out.get("elapsed_ms") == 0)
        and (got is None or (_is_int(got) and got == 0))
        and client_points.stamps(case.outcomes) < 2
    ):
        out["elapsed_ms"] = got
    return out


def _reading(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client's summary agrees with the oracle on the check's fields (accepted cases),
    a "none" spelled either way where both say the same (:func:`as_none_is_spelled`)."""
    if obs.verdict != case.expected_verdict or case.expected_verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    want = as_none_is_spelled(case, case.reading(), summary, ctx.fields)
    problems = field_problems(want, summary, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _elapsed(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Elapsed time, where a double can hold every ts; D.integers-exact grades the rest."""
    for outcome in case.outcomes:
        ts = outcome.raw.get("ts") if isinstance(outcome.raw, dict) else None
        if isinstance(ts, int) and ts > EXACT_IN_A_DOUBLE:
            return Judgment("n/a")
    return _reading(case, obs, ctx)


def _clock_runs_backwards(case: GradedCase) -> bool:
    """Some ts lower than the one before it: elapsed time then depends on the clamp."""
    last = None
    for outcome in case.outcomes:
        ts = outcome.raw.get("ts") if isinstance(outcome.raw, dict) else None
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            continue
        if last is not None and ts < last:
            return True
        last = ts
    return False


def _reported_fields(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Like :func:`_reading`, on the check's fields the client reports (n/a if none)."""
    if obs.verdict != case.expected_verdict or case.expected_verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    present = tuple(f for f in ctx.fields if f in summary)
    if not present:
        return Judgment("n/a")
    want = as_none_is_spelled(case, case.reading(), summary, present)
    problems = field_problems(want, summary, present)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _exact_integers(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """:func:`_reported_fields`, leaving elapsed time out where a ts runs backwards.

    There the right answer turns on the clamp, which is D.elapsed-clamped's rule: a
    dashboard that keeps every unit but does not clamp must fail that check, not this one.
    """
    if "elapsed_ms" in ctx.fields and _clock_runs_backwards(case):
        ctx = replace(ctx, fields=tuple(f for f in ctx.fields if f != "elapsed_ms"))
    return _reported_fields(case, obs, ctx)


def _stream_order(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Texts in stream order; n/a when their content already differs (another check's job)."""
    if not verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    if "texts" not in summary:
        return Judgment("fail", "the summary has no 'texts'")
    want, got = case.expected.texts, [str(t) for t in summary["texts"]]
    if sorted(want) != sorted(got):
        return Judgment("n/a")
    if want != got:
        return Judgment(
            "fail",
            f"texts in the order {json.dumps(got)}; the stream's order is {json.dumps(want)}",
        )
    return Judgment("pass")


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    # every check judged on its reading (the envelope's E.usage-read too): the fields this
    # judge spells "none" both ways for are the dashboard's alone
    "reading": _reading,
    "reported-fields": _reported_fields,
    "exact-integers": _exact_integers,
    "elapsed": _elapsed,
    "stream-order": _stream_order,
}
