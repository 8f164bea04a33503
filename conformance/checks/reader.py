"""The reader profile: rules R1 to R6 of the stream contract, and their judges.

Every stream client is graded on these: how it frames lines, dispatches on the
type, treats unrecognized types and unknown fields, rejects a body that does not
fit, and forgives a torn final line.  Verdict checks ask whether the client
accepted or rejected as it must; the detail checks (counts, per-line readings,
line numbers, stderr, texts compared with the client's own reading of a paired
stream) look only at cases whose verdict was already right.
"""

from __future__ import annotations

import json
from typing import Any

from stella_conform.conformance.checks.judging import (
    JudgeFn,
    field_problems,
    summary_key,
    unanswered,
    verdict_judge,
    verdict_ok,
    wrong_verdict,
)
from stella_conform.conformance.checks.model import (
    REPORTING,
    Check,
    Context,
    Judgment,
)
from stella_conform.conformance.checks.split_lines import lost_at_separators
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase, expected_verdict_text
from stella_conform.oracle.client_points import AFTER_TERMINATOR
from stella_conform.oracle.decoder import Kind, LineOutcome
from stella_conform.oracle.readings import split_label

_UNKNOWN_FIXTURES = (
    "from_a_newer_stella",
    "unknown_type_first_line",
    "unknown_between_tool_pair",
    "archived_complete",
)


READER: tuple[Check, ...] = (
    Check(
        "R1.line-by-line",
        "reads the stream line by line, never buffering it whole",
        "R1",
        "lockstep",
        fixtures=("minimal_run", "from_a_newer_stella", "multiple_turns", "retried_deltas"),
        mutations=(
            "blank-lines",
            "crlf",
            "json-spellings",
            "cr-in-line",
            "big-integers",
            "unicode-edges",
            "deep-tool-input",
        ),
        valid_runs=True,
        modes=frozenset({"report"}),
        why="Reads the stream line by line and parses each line as an independent JSON "
        "object, however the lines are spelled and ended. Never buffer the whole stream.",
    ),
    Check(
        "R1.valid-runs-accepted",
        "accepts every valid run",
        "R1",
        "verdict",
        fixtures=(
            "minimal_run",
            "key_order_and_whitespace",
            "multiple_turns",
            "failed_run_ends_on_error",
            "orphan_and_open_calls",
            "stage_scopes_interleaved",
            "ts_absent_and_backwards",
            "retried_deltas",
            "blank_lines",
            "crlf_endings",
            "ts_null",
            "negative_zero_integer",
            "lone_surrogate",
            "spaced_terminator",
        ),
        mutations=(
            "blank-lines",
            "crlf",
            "json-spellings",
            "unicode-edges",
            "deep-tool-input",
            "big-integers",
            "ts-removed",
            "ts-backwards",
            "ts-extreme",
            "ts-null",
        ),
        strata=("edge-values",),
        valid_runs=True,
        why="Whitespace, key order, blank lines, CRLF and any ts are not reasons to fail; nor "
        "are astral characters, escaped surrogate pairs, \\u0000, a character split across "
        "the reader's chunks, or nesting up to the 127 levels serde_json reads.",
    ),
    Check(
        "R1.lines-end-only-at-newline",
        "ends a line only at \\n: U+2028, U+2029, U+0085 and escaped controls in strings are text",
        "R1",
        "separator-content",
        fixtures=("line_separators_in_strings", "cr_inside_line"),
        mutations=("line-separators", "cr-in-line"),
        fields=("final_text", "texts"),
        why="Reads the stream line by line: a line ends at \\n; a carriage return between "
        "tokens is JSON whitespace. stella writes U+2028 and U+2029 "
        "raw inside strings, as JSON allows; a reader that splits where str.splitlines() does "
        "cuts an event in two and loses its text, and one that folds them into \\n reports "
        "another text (the texts it computes are compared, for their separators only).",
    ),
    Check(
        "R1.long-lines",
        "reads lines over 64 KiB and over 1 MiB",
        "R1",
        "verdict",
        fixtures=("line_over_64kib", "line_over_1mib"),
        mutations=("long-line-64k", "long-line-1m", "megabyte-string"),
        why="An event is one line, however long; a fixed line buffer loses events.",
    ),
    Check(
        "R1.object-per-line",
        "never reads a line that is JSON but not an object as an event",
        "R1",
        "dispatch",
        fixtures=("json_not_object", "scalar_last_line", "json_string_line"),
        mutations=("not-object-line",),
        why="Each line is an independent JSON object: a line that is not one is an error "
        "(reading A) or unrecognized (reading B, the sample's typeof check), never an event, "
        "not even the event a JSON string line spells out.",
    ),
    Check(
        "R2.dispatch-on-type",
        "the exact type string alone decides the event kind",
        "R2",
        "dispatch",
        fixtures=("duplicate_keys", "extra_fields_borrowed", "key_order_and_whitespace"),
        mutations=("type-near-miss", "duplicate-keys", "json-spellings"),
        modes=REPORTING,
        why='Dispatches on the "type" string: Text, text and run-complete are different '
        "strings, run\\u005fcomplete is run_complete, and fields borrowed from another type "
        "change nothing.",
    ),
    Check(
        "R3.unknown-type-inert",
        "skips an unrecognized type and keeps going",
        "R3",
        "verdict",
        fixtures=(
            "unknown_type_first_line",
            "unknown_between_tool_pair",
            "archived_complete",
            "tempting_unknown_names",
            "unknown_type_bad_ts",
            "number_beyond_f64",
            "deep_nesting_unknown",
        ),
        mutations=(
            "unknown-type",
            "unknown-in-tool-pair",
            "type-near-miss",
            "scopeless-stage",
            "number-beyond-f64",
            "deep-nesting",
        ),
        strata=("host-type-names",),
        why="An event type you do not recognize is normal. Skip it and keep going.",
    ),
    Check(
        "R3.missing-or-non-string-type",
        "never dispatches an event whose type is missing or not a string",
        "R3",
        "dispatch",
        fixtures=("missing_type", "non_string_type"),
        mutations=("type-missing", "type-non-string"),
        why='typeof event.type !== "string" is the unrecognized branch (reading A); stella '
        'rejects the line (reading B); no reading coerces ["text"] or 5 into a type name.',
    ),
    Check(
        "R3.unknown-counted",
        "counts unrecognized events (the version-gap report)",
        "R3",
        "count",
        fixtures=(*_UNKNOWN_FIXTURES, "guessable_unknown_names"),
        mutations=("unknown-type", "unknown-in-tool-pair"),
        modes=REPORTING,
        fields=("unrecognized_events",),
        why="Counts it, logs it at debug level, or passes it through; a version gap is "
        "reported as a count of unrecognized types.",
    ),
    Check(
        "R3.no-guessing",
        "does not guess an unknown type's meaning from its name",
        "R3",
        "no-guessing",
        fixtures=("from_a_newer_stella", "guessable_unknown_names"),
        mutations=("unknown-type",),
        modes=REPORTING,
        why="Doesn't guess what it means from its name: text_v2 is not text.",
    ),
    Check(
        "R3.no-loud-warning",
        "does not warn loudly about unrecognized types",
        "R3",
        "quiet",
        fixtures=_UNKNOWN_FIXTURES,
        mutations=("unknown-type", "unknown-in-tool-pair"),
        why="Doesn't fail, doesn't warn loudly: a stderr line per unknown event is loud.",
    ),
    Check(
        "R4.bad-body-rejected",
        "fails loudly on a known type whose body does not fit",
        "R4",
        "verdict",
        fixtures=(
            "bad_body_missing_field",
            "bad_body_wrong_type",
            "bad_body_null",
            "bad_body_wrong_nesting",
            "bad_body_bare_string_output",
            "bad_body_enum",
            "bad_body_negative_ts",
            "bad_body_last_line",
            "ts_out_of_range",
            "bad_body_after_run_complete",
            "bad_body_numeric_string",
            "integral_float_count",
            "serde_forms",
        ),
        wire_fixtures=("learnt_values",),
        mutations=(
            "bad-read-values",
            "bad-body-missing-field",
            "bad-body-wrong-type",
            "bad-body-null",
            "bad-body-wrong-nesting",
            "ts-out-of-range",
            "negative-zero",
            "serde-forms",
            "value-read-as-other",
            "field-beside-learnt-alias",
            "old-type-name",
        ),
        strata=("bad-edge-values", "bad-body-unterminated-last"),
        why="A type you do recognize, carrying a body that does not fit, is a real error. "
        "Fail loudly.",
    ),
    Check(
        "R4.legacy-spelling-fits",
        "reads a body in its legacy field spelling",
        "R4",
        "legacy-content",
        fixtures=("legacy_aliases", "field_and_alias"),
        wire_fixtures=("learnt_aliases",),
        mutations=("legacy-alias", "field-and-alias"),
        fields=("final_text", "texts"),
        types=("text", "text_delta"),
        why="text accepts delta and text_delta accepts text: an aliased field fits, and is "
        "read (the self-describing name first, where both are present): the client reads the "
        "stream as it reads the same stream spelled with the self-describing names.",
    ),
    Check(
        "R4.rejection-names-line",
        "names the line it rejected",
        "R4",
        "rejected-line",
        fixtures=("bad_body_missing_field", "bad_body_wrong_type", "corrupt_middle_line"),
        mutations=("bad-body-missing-field", "bad-body-wrong-type", "non-json-line"),
        tier="SHOULD",
        modes=REPORTING,
        why="Loud failure (error + non-zero exit), ideally naming the line.",
    ),
    Check(
        "R5.unknown-fields-ignored",
        "ignores unknown fields on known events",
        "R5",
        "verdict",
        fixtures=(
            "extra_fields_top_level",
            "extra_fields_nested",
            "extra_fields_borrowed",
            "extra_key_beside_arm",
            "case_variant_keys",
            "two_arms_in_a_wrapper",
        ),
        mutations=(
            "extra-fields",
            "extra-fields-nested",
            "extra-fields-borrowed",
            "extra-key-beside-arm",
            "case-variant-keys",
        ),
        strata=("host-field-names", "case-folded-twins"),
        why="Ignores unknown fields on events it does recognize.",
    ),
    Check(
        "R6.torn-final-line",
        "tolerates a cut-off final line",
        "R6",
        "verdict",
        fixtures=(
            "torn_mid_key",
            "torn_mid_string",
            "torn_mid_escape",
            "torn_mid_unicode_escape",
            "torn_mid_utf8",
            "torn_with_trailing_newline",
            "torn_after_inner_object",
        ),
        mutations=("torn-tail", "torn-then-newline", "torn-inner-object"),
        why="A process killed mid-write can leave a partial JSON object at the end — "
        "everything before it is still valid.",
    ),
    Check(
        "R6.torn-line-adds-nothing",
        "takes the final text and terminator from the lines before a torn final line",
        "R6",
        "torn-adds-nothing",
        fixtures=("torn_after_inner_object", "torn_mid_key", "torn_mid_string"),
        mutations=("torn-inner-object", "torn-tail"),
        modes=REPORTING,
        fields=("final_text", "texts", "terminator"),
        why="A partial JSON object at the end is not an event: everything before it is still "
        'valid, and nothing in it is. An inner {"type":"text",...} rescued from the torn '
        "bytes is not the run's final text (the client is compared with its own reading of "
        "the stream without the torn line).",
    ),
    Check(
        "R6.complete-last-line-kept",
        "keeps a complete last line that lacks a newline",
        "R6",
        "last-line-kept",
        fixtures=("no_trailing_newline",),
        mutations=("no-trailing-newline",),
        strata=("unterminated-content-last",),
        modes=REPORTING,
        why="A complete last line without \\n is a real event and must not be dropped.",
    ),
    Check(
        "R6.unterminated-last-line-read",
        "reads the final text and the terminator from a complete last line without \\n",
        "R6",
        "last-line-content",
        fixtures=("no_trailing_newline",),
        mutations=("no-trailing-newline",),
        strata=("unterminated-content-last",),
        modes=REPORTING,
        fields=("final_text", "terminator", "turns_completed"),
        why="A complete last line without \\n is a real event: the client must read it as it "
        "reads the same line with its newline (compared with itself, so no other flaw counts; "
        "R6.complete-last-line-kept grades whether the line was seen at all).",
    ),
    Check(
        "R6.corrupt-line-not-last",
        "rejects a corrupt line that is not the last",
        "R6",
        "verdict",
        fixtures=(
            "corrupt_middle_line",
            "nan_literal",
            "invalid_utf8_middle",
            "unicode_whitespace",
            "utf8_bom",
            "two_values_on_a_line",
            "value_across_lines",
        ),
        mutations=(
            "non-json-line",
            "two-values-per-line",
            "value-across-lines",
            "unicode-whitespace",
            "utf8-bom",
            "lone-surrogate",
        ),
        strata=("strip-chars-edge",),
        why="Not JSON is only forgivable as the final line of a killed run; a line holding two "
        "values, or one value of several lines, is not one JSON object.",
    ),
)


def _read_past_the_end(case: GradedCase, obs: Observation) -> str | None:
    """Under reading B of ``after-terminator`` (the client stops at ``run_complete``), the
    first line after it that the client says it read (``None``: none): a client that read
    on is graded by reading A, where those lines follow the rules."""
    if AFTER_TERMINATOR not in split_label(case.reading_id) or not case.outcomes:
        return None
    end = case.outcomes[-1].line
    beyond = sorted(n for n in obs.lines if n > end)
    if not beyond:
        return None
    return (
        f"line {beyond[0]}: the client read it, after run_complete at line {end}, where a "
        "client that stops at run_complete reads nothing more"
    )


def _verdict(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict; under reading B of ``after-terminator``, a client that reports lines
    after ``run_complete`` did not stop there (:func:`_read_past_the_end`)."""
    judged = verdict_judge(case, obs, ctx)
    if judged.verdict == "pass":
        past = _read_past_the_end(case, obs)
        if past is not None:
            return Judgment("fail", past)
    return judged


def _lockstep(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if obs.stalled_at is not None:
        return Judgment(
            "fail",
            f"no observation for line {obs.stalled_at} within the line timeout after it was "
            "written: the client reads ahead or buffers the whole stream",
        )
    if not obs.ok:
        return unanswered(obs)
    return Judgment("pass")


def _count(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    if "unrecognized_events" not in summary:
        return Judgment("fail", "the summary has no unrecognized_events count")
    want, got = case.expected.unrecognized_events, summary["unrecognized_events"]
    if got != want:
        return Judgment("fail", _count_message(case, want, got, summary))
    return Judgment("pass")


def _count_message(case: GradedCase, want: int, got: Any, summary: dict[str, Any]) -> str:
    """Name the types behind a wrong count, so the author sees which events it misjudged."""
    unknown = list(dict.fromkeys(str(o.tag) for o in case.outcomes if o.kind is Kind.UNKNOWN))
    text = f"expected {want} unrecognized event(s)"
    if unknown:
        text += f" ({', '.join(map(repr, unknown))})"
    text += f"; client counted {got}"
    listed = summary.get("unrecognized_types")
    if isinstance(listed, list):
        extra = [t for t in listed if isinstance(t, str) and t not in unknown]
        missing = [t for t in unknown if t not in listed]
        if extra:
            text += f"; its unrecognized_types also lists {', '.join(map(repr, extra))}"
        if missing:
            text += f"; its unrecognized_types misses {', '.join(map(repr, missing))}"
    return text


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
        elif outcome.kind is Kind.KNOWN and seen.get("type") not in (
            None,
            outcome.tag,
            _raw_type(outcome),
        ):
            problems.append(
                f"line {outcome.line}: type {outcome.tag!r}; client read it as {seen['type']!r}"
            )
    return problems


def _raw_type(outcome: LineOutcome) -> Any:
    """The type the line itself spells (an old name read as today's: ``judge_verdict``)."""
    return outcome.raw.get("type") if isinstance(outcome.raw, dict) else None


def _no_guessing(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    problems = [] if ctx.summary_only else _line_disagreements(case, obs, unknown_only=True)
    summary = obs.summary or {}
    got, want = summary.get("final_text"), case.expected.final_text
    if isinstance(got, str) and got != want:
        # Only text borrowed from an unknown event is guessing; text garbled some other way
        # (previews appended, order from ts) is the dashboard profile's business.
        borrowed = [
            t
            for o in case.outcomes
            if o.kind is Kind.UNKNOWN
            for t in _strings(o.raw)
            if t and t in got and t not in (want or "")
        ]
        if borrowed:
            problems.append(
                f"final text {json.dumps(got)} (taken from an unrecognized event), expected "
                f"{json.dumps(want)}"
            )
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k != "type" for t in _strings(v)]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def _dispatch(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Each line read as the oracle reads it; in a rejected stream, the lines before the
    rejection (when the client rejected the same line: otherwise that is another check's).
    A client that reports no lines (exit mode) is held to the verdict alone."""
    if not obs.lines:
        return verdict_judge(case, obs, ctx)
    if not verdict_ok(case, obs):
        return Judgment("n/a")
    if case.expected.verdict != "accept" and obs.rejected_line != case.expected.rejected_line:
        return Judgment("n/a")
    problems = _line_disagreements(case, obs, unknown_only=False)
    past = _read_past_the_end(case, obs)
    if past is not None:
        problems.append(past)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _quiet(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not verdict_ok(case, obs) or case.expected.unrecognized_events == 0:
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
    if not verdict_ok(case, obs) or case.expected.verdict != "accept":
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


def _content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then (when the client reports) what it read from the lines it kept."""
    if not verdict_ok(case, obs):
        return wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    problems = field_problems(case.reading(), obs.summary, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


#: Line separators a reader may fold or split at: what ``str.splitlines()`` splits at.
SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_FOLD = str.maketrans(dict.fromkeys(SEPARATORS, "\n"))


def _folded(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate(_FOLD)
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


def _separator_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then the texts the client computes, judged for their line separators
    only: a text that differs from the stream's in nothing but its separators (U+2028 shown
    as ``\\n``) fails, and so do texts that lack exactly those of the lines
    ``str.splitlines()`` cuts (:mod:`.split_lines`); one that differs otherwise is another
    check's finding (n/a)."""
    if not verdict_ok(case, obs):
        return wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    want, got = case.reading(), obs.summary
    problems, unrelated = [], False
    for name in ctx.fields:
        key = summary_key(name)
        if key not in got:
            problems.append(f"the summary has no {key!r}")
        elif got[key] != want.get(key):
            if _folded(got[key]) != _folded(want.get(key)):
                # a text lost where str.splitlines() cuts its line is this rule's; a text
                # wrong for another reason is another check's finding
                lost = lost_at_separators(case.outcomes, case.stream, got, ctx.fields)
                if lost is None:
                    unrelated = True
                elif lost not in problems:
                    problems.append(lost)
                continue
            problems.append(
                f"{key}: expected {json.dumps(want.get(key))}, client {json.dumps(got[key])} "
                "(the same text with other line separators)"
            )
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("n/a") if unrelated else Judgment("pass")


def _legacy_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then the client's reading against its own reading of the same stream
    spelled with the self-describing names (the paired stream): a legacy spelling read
    differently (the legacy field preferred, or not read) fails; no other flaw can."""
    if not verdict_ok(case, obs):
        return wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    if obs.paired is None:
        return Judgment("pass")  # no legacy spelling in the stream: nothing to pair it with
    return _against_itself(
        obs, ctx, "the self-describing names instead", "with its legacy spellings"
    )


def _self_problems(obs: Observation, ctx: Context) -> list[str] | None:
    """The check's fields where the client read the case and its paired stream differently
    (``None``: nothing to compare)."""
    twin = obs.paired
    if twin is None or not twin.ok or obs.summary is None or twin.summary is None:
        return None
    problems = []
    for name in ctx.fields:
        key = "texts" if name == "texts-unordered" else name
        got, base = obs.summary.get(key), twin.summary.get(key)
        if got != base:
            problems.append(
                f"{key}: {json.dumps(got)}, but {json.dumps(base)} with {ctx.paired_words}"
            )
    return problems


def _against_itself(obs: Observation, ctx: Context, paired: str, as_sent: str) -> Judgment:
    """The client's reading of the case against its reading of the paired variant."""
    ctx.paired_words = paired
    problems = _self_problems(obs, ctx)
    if problems is None:
        return Judgment("n/a")
    if problems:
        return Judgment("fail", f"{as_sent}: " + "; ".join(problems[:3]))
    return Judgment("pass")


def _last_line_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client reads a complete last line without ``\\n`` as it reads it with one (n/a when
    the line was not seen at all: R6.complete-last-line-kept fails that).  A client that
    reports only a summary is compared summary against summary: dropping the line shows
    there as well, and no other check can see it."""
    if case.stream.endswith(b"\n"):
        return Judgment("n/a")
    if not ctx.summary_only and _last_line_kept(case, obs, ctx).verdict != "pass":
        return Judgment("n/a")
    return _against_itself(obs, ctx, "the final newline added", "without the final newline")


def _torn_adds_nothing(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client reads a stream ending on a torn line as it reads the stream without it."""
    if not verdict_ok(case, obs) or not case.expected.torn_final_line:
        return Judgment("n/a")
    return _against_itself(obs, ctx, "the torn line left off", "with the torn final line")


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    "verdict": _verdict,
    "lockstep": _lockstep,
    "count": _count,
    "no-guessing": _no_guessing,
    "dispatch": _dispatch,
    "quiet": _quiet,
    "rejected-line": _rejected_line,
    "last-line-kept": _last_line_kept,
    "last-line-content": _last_line_content,
    "torn-adds-nothing": _torn_adds_nothing,
    "content": _content,
    "separator-content": _separator_content,
    "legacy-content": _legacy_content,
}
