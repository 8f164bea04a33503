"""The envelope profile: reading the JSON document ``--output-format json`` prints, and its judge.

A whole document is accepted or rejected as the reference envelope reader does,
then (when the client reports) the check's fields are compared with its reading.
"""

from __future__ import annotations

from stella_conform.conformance.checks.judging import JudgeFn, verdict_then_fields
from stella_conform.conformance.checks.model import REPORTING, Check, Context, Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.oracle.parsing import parse_line

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
        strata=("events-edge-values", "events-bad-edge-values"),
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
        fixtures=(
            "raw_usage",
            "raw_success",
            "pipeline_success",
            "usage_above_2_53",
            "preflight_no_api_key",
        ),
        mutations=("usage-values", "raw", "pipeline"),
        strata=("preflight",),  # no cost_usd, no events: each field where it has none
        profile="envelope",
        modes=REPORTING,
        fields=("cost_usd", "input_tokens", "output_tokens"),
        reads=("run", "pipeline"),
        why="cost_usd is a key of the summary, and the pre-flight envelope has none (its cost "
        "is null, not 0); token counts are in the step_usage events, not in keys of the "
        "envelope: a reader that looks for keys stella does not write, or does not read the "
        "events that hold them, has no zero to report. Token counts are u64: above 2^53 a "
        "reader that parses or sums them as doubles (JSON.parse) reports another total.",
    ),
)


def _envelope(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    want = case.envelope
    why = f" ({want.reason})" if want.reason else ""
    reading = want.to_json()
    summary = obs.summary or {}
    if (
        reading.get("unrecognized_events") is None
        and type(summary.get("unrecognized_events")) is int
        and summary["unrecognized_events"] == 0
        and not _has_event_log(case.stream)
    ):
        # an envelope with no event log: no unrecognized event in it, counted (0) or not
        # counted at all (null), say the same (docs/adapter-protocol.md)
        reading["unrecognized_events"] = 0
    return verdict_then_fields(want.verdict, why, reading, obs, ctx)


def _has_event_log(document: bytes) -> bool:
    """Whether the envelope has an ``events`` array (the pre-flight envelope has none; a
    failure's may be ``null``)."""
    doc, _ = parse_line(document)
    return isinstance(doc, dict) and isinstance(doc.get("events"), list)


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    "envelope": _envelope,
}
