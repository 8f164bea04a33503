"""The recorder profile: a proxy or recorder keeps the stream whole, and the judges.

The recording is decoded as a stream and compared with the case's events as
parsed JSON: every known event in order, unrecognized and known events whole,
and a torn final line never written where a reader cannot forgive it.
"""

from __future__ import annotations

import json
from typing import Any

from stella_conform.conformance.checks.judging import JudgeFn
from stella_conform.conformance.checks.model import EXIT_ONLY, Check, Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.oracle.decoder import Kind, LineOutcome, decode_all

RECORDER: tuple[Check, ...] = (
    Check(
        "P.known-events-in-order",
        "records every known event, in stream order",
        "recorder",
        "recorded-order",
        fixtures=(
            "minimal_run",
            "multiple_turns",
            "orphan_and_open_calls",
            "stage_scopes_interleaved",
            "ts_absent_and_backwards",
            "repeated_ts",
        ),
        mutations=(
            "ts-repeated",
            "cr-in-line",
            "ts-backwards",
            "line-separators",
            "json-spellings",
        ),
        valid_runs=True,
        profile="recorder",
        modes=EXIT_ONLY,
        why="A proxy or recorder keeps the stream: every event, in the order it arrived.",
    ),
    Check(
        "P.unknown-events-kept-whole",
        "keeps unrecognized events whole",
        "recorder",
        "recorded-unknown",
        fixtures=(
            "from_a_newer_stella",
            "unknown_between_tool_pair",
            "archived_complete",
            "missing_type",
            "non_string_type",
            "tempting_unknown_names",
            "unknown_big_numbers",
        ),
        mutations=(
            "unknown-type",
            "unknown-big-numbers",
            "unknown-in-tool-pair",
            "type-missing",
            "type-non-string",
            "number-beyond-f64",
            "json-spellings",
        ),
        profile="recorder",
        modes=EXIT_ONLY,
        why="A client that re-emits or stores events keeps unrecognized ones whole: the "
        "next reader may know them.",
    ),
    Check(
        "P.known-events-kept-whole",
        "keeps every field of known events, unknown fields and legacy spellings included",
        "recorder",
        "recorded-known",
        fixtures=(
            "extra_fields_top_level",
            "extra_fields_nested",
            "extra_fields_borrowed",
            "legacy_aliases",
            "integers_above_2_53",
        ),
        mutations=(
            "extra-fields",
            "big-integers",
            "json-spellings",
            "extra-fields-nested",
            "extra-fields-borrowed",
            "legacy-alias",
        ),
        profile="recorder",
        modes=EXIT_ONLY,
        why="Unknown fields are ignored by a reader, not dropped by a recorder; key order and "
        "whitespace may change (values are compared as parsed JSON).",
    ),
    Check(
        "P.torn-tail-contained",
        "does not turn a torn final line into a corrupt line downstream",
        "R6",
        "recorded-torn",
        fixtures=("torn_mid_key", "torn_mid_string", "torn_mid_utf8", "torn_with_trailing_newline"),
        mutations=("torn-tail",),
        profile="recorder",
        modes=EXIT_ONLY,
        why="A torn final line is forgiven only as the last line: drop it, or keep it last; "
        "anything written after it makes the recording corrupt.",
    ),
)


def json_equal(a: Any, b: Any) -> bool:
    """Equal as parsed JSON: numbers by value, booleans apart from numbers, key order ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _covers(full: Any, part: Any) -> bool:
    """``part`` is ``full`` with some object keys left out (what a lossy recorder writes)."""
    if isinstance(full, dict) and isinstance(part, dict):
        return all(k in full and _covers(full[k], v) for k, v in part.items())
    if isinstance(full, list) and isinstance(part, list):
        return len(full) == len(part) and all(
            _covers(f, p) for f, p in zip(full, part, strict=True)
        )
    return json_equal(full, part)


def _recorded(case: GradedCase, obs: Observation) -> tuple[list[LineOutcome], str | None]:
    """The recording's events, or why it cannot be graded."""
    if obs.verdict != "accept" or case.expected.verdict != "accept":
        return [], "n/a"
    decoded = decode_all(obs.recording or b"", case.vocab)
    real = [o for o in decoded.outcomes if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    return real, None


def _missing(wanted: list[Any], recorded: list[Any]) -> list[Any]:
    pool = list(recorded)
    lost = []
    for value in wanted:
        index = next((i for i, r in enumerate(pool) if json_equal(value, r)), None)
        if index is None:
            lost.append(value)
        else:
            pool.pop(index)
    return lost


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def _recorded_order(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    real, skip = _recorded(case, obs)
    if skip:
        return Judgment("n/a")
    wanted = [o.raw for o in case.outcomes if o.kind is Kind.KNOWN]
    got = [o.raw for o in real if o.kind is Kind.KNOWN]
    used = [False] * len(wanted)
    last = -1
    for value in got:
        index = next((i for i, w in enumerate(wanted) if not used[i] and _covers(w, value)), None)
        if index is None:
            continue  # an event the recorder added or altered: not this check's business
        if index < last:
            return Judgment(
                "fail",
                f"recorded {_short(value)} after {_short(wanted[last])}; the stream has them "
                "the other way round",
            )
        used[index], last = True, index
    if not all(used):
        lost = wanted[used.index(False)]
        return Judgment(
            "fail", f"{used.count(False)} known event(s) not recorded, e.g. {_short(lost)}"
        )
    return Judgment("pass")


def _recorded_whole(kind: Kind) -> JudgeFn:
    def judge_(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
        real, skip = _recorded(case, obs)
        if skip:
            return Judgment("n/a")
        wanted = [o.raw for o in case.outcomes if o.kind is kind]
        if not wanted:
            return Judgment("n/a")
        lost = _missing(wanted, [o.raw for o in real])
        if lost:
            what = "unrecognized" if kind is Kind.UNKNOWN else "known"
            return Judgment(
                "fail",
                f"{len(lost)} {what} event(s) not recorded whole (every field, as parsed JSON), "
                f"e.g. {_short(lost[0])}",
            )
        return Judgment("pass")

    return judge_


def _recorded_torn(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not case.expected.torn_final_line or obs.verdict != "accept":
        return Judgment("n/a")
    decoded = decode_all(obs.recording or b"", case.vocab)
    if decoded.summary.verdict == "reject":
        return Judgment(
            "fail",
            f"the recording is corrupt at line {decoded.summary.rejected_line} "
            f"({decoded.summary.reason}): the torn tail was written where a reader "
            "cannot forgive it",
        )
    return Judgment("pass")


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    "recorded-order": _recorded_order,
    "recorded-unknown": _recorded_whole(Kind.UNKNOWN),
    "recorded-known": _recorded_whole(Kind.KNOWN),
    "recorded-torn": _recorded_torn,
}
