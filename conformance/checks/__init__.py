"""The catalogue of checks, as data.

A check names one thing the contract asks of a client, in the contract's own
words.  It says which cases grade it (curated fixtures by name, generated
cases carrying its mutations, unmutated valid runs), which modes can observe
it, and which judge compares the client's behaviour with the reference
decoder's.

Case sets are chosen so that one flaw trips one check: *verdict* checks ask
"did the client accept or reject as it must?"; *detail* checks (counts,
per-line readings, line numbers, stderr) only look at cases whose verdict was
already right, so a client that wrongly rejects is not failed twice.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Tier = Literal["MUST", "SHOULD"]
Judge = Literal[
    "verdict",
    "lockstep",
    "count",
    "no-guessing",
    "dispatch",
    "quiet",
    "rejected-line",
    "last-line-kept",
    "last-line-content",
    "torn-adds-nothing",
    "content",
    "separator-content",
    "legacy-content",
    "reading",
    "reported-fields",
    "exact-integers",
    "elapsed",
    "stream-order",
    "envelope",
    "recorded-order",
    "recorded-unknown",
    "recorded-known",
    "recorded-torn",
    "wrapper-outcome",
    "wrapper-reason",
    "wrapper-invocation",
    "journal",
]
ALL_MODES = frozenset({"exit", "report", "persistent"})
REPORTING = frozenset({"report", "persistent"})
EXIT_ONLY = frozenset({"exit"})
LAUNCHED = frozenset({"exit", "report"})

#: What each profile feeds a client: a stream, an envelope document, or a wrapper scenario.
PROFILE_INPUT = {
    "reader": "stream",
    "dashboard": "stream",
    "recorder": "stream",
    "envelope": "envelope",
    "wrapper": "scenario",
    "trace": "journal",
}
PROFILES = tuple(PROFILE_INPUT)


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    rule: str
    judge: Judge
    fixtures: tuple[str, ...] = ()
    mutations: tuple[str, ...] = ()
    valid_runs: bool = False
    profile: str = "reader"
    tier: Tier = "MUST"
    modes: frozenset[str] = field(default=ALL_MODES)
    why: str = ""
    #: Summary fields compared with the oracle's reading (judges "reading" and "envelope"),
    #: or read by the judge ("count", "stream-order"): what a client must compute.
    fields: tuple[str, ...] = ()
    #: Event types the check is about: ``skip`` for a client that knows none of them.
    types: tuple[str, ...] = ()
    #: Envelope parts the check is about: ``skip`` for a client that reads none of them.
    reads: tuple[str, ...] = ()
    #: Fixtures graded only under a vocabulary whose wire schema names aliases in its
    #: descriptions (``schemas/learnt.py``): under the kit's own vocabulary their types
    #: are unrecognized and they would grade another rule.
    wire_fixtures: tuple[str, ...] = ()

    def fixtures_for(self, learnt: bool) -> tuple[str, ...]:
        """The fixtures graded under a vocabulary that has learnt aliases (or not)."""
        return self.fixtures + self.wire_fixtures if learnt else self.fixtures

    @property
    def input(self) -> str:
        return PROFILE_INPUT[self.profile]

    def grades_in(self, mode: str) -> bool:
        return mode in self.modes

    def skip_reason(self, mode: str) -> str:
        needed = " or ".join(sorted(self.modes))
        return f"needs {needed} mode (the client ran in {mode} mode)"

    @property
    def failing_outcome(self) -> str:
        return "fail" if self.tier == "MUST" else "warn"


_UNKNOWN_FIXTURES = (
    "from_a_newer_stella",
    "unknown_type_first_line",
    "unknown_between_tool_pair",
    "archived_complete",
)

CATALOGUE: tuple[Check, ...] = (
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
            "bad_body_numeric_string",
            "integral_float_count",
        ),
        mutations=(
            "bad-read-values",
            "bad-body-missing-field",
            "bad-body-wrong-type",
            "bad-body-null",
            "bad-body-wrong-nesting",
            "ts-out-of-range",
            "negative-zero",
        ),
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
        why="Not JSON is only forgivable as the final line of a killed run; a line holding two "
        "values, or one value of several lines, is not one JSON object.",
    ),
)

_TS_FIXTURES = ("ts_absent_and_backwards", "minimal_run", "multiple_turns")

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

ENVELOPE: tuple[Check, ...] = (
    Check(
        "E.unknown-keys-ignored",
        "ignores envelope keys it does not use",
        "envelope",
        "envelope",
        fixtures=("raw_unknown_keys", "query_unknown_keys"),
        mutations=("extra-keys",),
        profile="envelope",
        why="Adding a key never bumps the version: check only the keys you use.",
    ),
    Check(
        "E.schema-version-gate",
        "stops loudly on an unexpected schema_version",
        "envelope",
        "envelope",
        fixtures=("schema_version_2", "schema_version_string", "schema_version_missing"),
        mutations=("schema-version",),
        profile="envelope",
        why="Treat an unexpected schema_version as your signal to stop: fail loudly instead of "
        "silently misreading a renamed key.",
    ),
    Check(
        "E.failure-shapes-read",
        "reads the failure shape with nulls and the pre-flight error envelope",
        "envelope",
        "envelope",
        fixtures=("pipeline_failure_nulls", "preflight_no_api_key", "raw_failure"),
        mutations=("failure", "preflight"),
        profile="envelope",
        fields=("status", "text", "stop_reason"),
        reads=("run", "pipeline"),
        why="A failure keeps every key, with nulls; a failure before the agent exists prints "
        "only schema_version, status, text and reason.",
    ),
    Check(
        "E.raw-and-pipeline-shapes",
        "reads both the raw-loop and the --pipeline success shapes by key",
        "envelope",
        "envelope",
        fixtures=("raw_success", "pipeline_success"),
        mutations=("raw", "pipeline"),
        profile="envelope",
        fields=("status", "text", "model"),
        reads=("run", "pipeline"),
        why="The keys depend on how the run happened; the --pipeline shape has no files_touched.",
    ),
    Check(
        "E.files-touched-nested",
        "finds the files_touched records one level in",
        "envelope",
        "envelope",
        fixtures=("raw_files_touched",),
        mutations=("files-touched",),
        profile="envelope",
        modes=REPORTING,
        fields=("files_touched",),
        reads=("files_touched",),
        why="The files_touched key holds the telemetry payload, whose own files_touched key "
        "holds the array.",
    ),
    Check(
        "E.events-follow-stream-rules",
        "applies the stream rules to the events array",
        "envelope",
        "envelope",
        fixtures=("events_unknown_types", "events_bad_known_body", "events_token_count_string"),
        mutations=("events-unknown", "events-bad-values", "events-bad-body"),
        profile="envelope",
        fields=("unrecognized_events",),
        reads=("events",),
        why="events holds stream events: an unknown type is inert, a known type with a body "
        'that does not fit is an error (a step_usage with "input_tokens":"1200" is not a step '
        "with no tokens); a new event type never bumps schema_version.",
    ),
    Check(
        "E.query-rows",
        "reads a query command's list report under rows",
        "envelope",
        "envelope",
        fixtures=("query_rows", "query_object"),
        mutations=("query",),
        profile="envelope",
        fields=("rows",),
        reads=("query",),
        why="The query envelope: schema_version first, then rows for a list report, or the "
        "object's own keys.",
    ),
    Check(
        "E.usage-read",
        "reports cost and token counts where stella's envelope has them",
        "envelope",
        "reading",
        fixtures=("raw_usage", "raw_success", "pipeline_success", "usage_above_2_53"),
        mutations=("usage-values", "raw", "pipeline"),
        profile="envelope",
        modes=REPORTING,
        fields=("cost_usd", "input_tokens", "output_tokens"),
        reads=("run", "pipeline"),
        why="cost_usd is a key of the summary; token counts are in the step_usage events, not "
        "in keys of the envelope: a reader that looks for keys stella does not write reports "
        "zero tokens. Token counts are u64: above 2^53 a reader that parses or sums them as "
        "doubles (JSON.parse) reports another total.",
    ),
)

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

TRACE: tuple[Check, ...] = (
    Check(
        "J.unknown-event-inert",
        "skips a journal event it does not recognize, and counts it",
        "trace",
        "journal",
        fixtures=("golden",),
        mutations=("unknown-event",),
        profile="trace",
        fields=("unrecognized_events",),
        why="The journal follows the stream's forward-compatibility rules: an unrecognized "
        "event tag is inert.",
    ),
    Check(
        "J.bad-body-rejected",
        "fails loudly on a recognized journal event whose envelope or body does not fit",
        "trace",
        "journal",
        fixtures=("reader_bad_body",),
        mutations=("bad-body",),
        profile="trace",
        why="A recognized event with a body that does not fit is an error.",
    ),
    Check(
        "J.unknown-fields-ignored",
        "ignores fields it does not know on journal events",
        "trace",
        "journal",
        fixtures=("reader_unknown_fields",),
        mutations=("extra-fields",),
        profile="trace",
        fields=("known_events",),
        why="Unknown fields are ignored.",
    ),
    Check(
        "J.torn-final-line",
        "tolerates the torn last line of a crashed writer",
        "trace",
        "journal",
        fixtures=("reader_torn_tail",),
        mutations=("torn-tail",),
        profile="trace",
        fields=("known_events",),
        why="A journal is appended while the harness works; a crash leaves a partial last "
        "line, and everything before it is still the record.",
    ),
    Check(
        "J.corrupt-line-not-last",
        "rejects a corrupt journal line that is not the last",
        "trace",
        "journal",
        fixtures=("reader_corrupt_middle",),
        mutations=("corrupt-line",),
        profile="trace",
        why="Only the last line may be torn; a corrupt line in the middle is damage.",
    ),
)

CATALOGUE = CATALOGUE + DASHBOARD + RECORDER + ENVELOPE + WRAPPER + TRACE
BY_ID = {check.id: check for check in CATALOGUE}


def select(
    profiles: Sequence[str] = ("reader",),
    only: Iterable[str] = (),
    skip: Iterable[str] = (),
    catalogue: Sequence[Check] = CATALOGUE,
) -> list[Check]:
    """Checks of the given profiles, filtered by ``--only`` / ``--skip`` id globs."""
    only, skip = list(only), list(skip)
    chosen = [c for c in catalogue if c.profile in profiles]
    if only:
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, g) for g in only)]
    if skip:
        chosen = [c for c in chosen if not any(fnmatch.fnmatchcase(c.id, g) for g in skip)]
    return chosen


def unmatched_globs(globs: Iterable[str], catalogue: Sequence[Check] = CATALOGUE) -> list[str]:
    """Globs that name no check at all (a typo, reported as a usage error)."""
    return [g for g in globs if not any(fnmatch.fnmatchcase(c.id, g) for c in catalogue)]
