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
]
ALL_MODES = frozenset({"exit", "report", "persistent"})
REPORTING = frozenset({"report", "persistent"})


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
        valid_runs=True,
        modes=frozenset({"report"}),
        why="Reads the stream line by line and parses each line as an independent JSON "
        "object. Never buffer the whole stream.",
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
        ),
        mutations=("blank-lines", "crlf", "ts-removed", "ts-backwards", "ts-extreme"),
        valid_runs=True,
        why="Whitespace, key order, blank lines, CRLF and any ts are not reasons to fail.",
    ),
    Check(
        "R1.long-lines",
        "reads lines over 64 KiB and over 1 MiB",
        "R1",
        "verdict",
        fixtures=("line_over_64kib", "line_over_1mib"),
        mutations=("long-line-64k", "long-line-1m"),
        why="An event is one line, however long; a fixed line buffer loses events.",
    ),
    Check(
        "R1.object-per-line",
        "treats a line that is JSON but not an object as an error",
        "R1",
        "verdict",
        fixtures=("json_not_object", "scalar_last_line"),
        mutations=("not-object-line",),
        why="Each line is an independent JSON object.",
    ),
    Check(
        "R2.dispatch-on-type",
        "the exact type string alone decides the event kind",
        "R2",
        "dispatch",
        fixtures=("duplicate_keys", "extra_fields_borrowed", "key_order_and_whitespace"),
        mutations=("type-near-miss",),
        modes=REPORTING,
        why='Dispatches on the "type" string: Text, text and run-complete are different '
        "strings, and fields borrowed from another type change nothing.",
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
        ),
        mutations=("unknown-type", "unknown-in-tool-pair", "type-near-miss"),
        why="An event type you do not recognize is normal. Skip it and keep going.",
    ),
    Check(
        "R3.missing-or-non-string-type",
        "treats a missing or non-string type as unrecognized",
        "R3",
        "verdict",
        fixtures=("missing_type", "non_string_type"),
        mutations=("type-missing", "type-non-string"),
        why='typeof event.type !== "string" is the unrecognized branch, not an error.',
    ),
    Check(
        "R3.unknown-counted",
        "counts unrecognized events (the version-gap report)",
        "R3",
        "count",
        fixtures=_UNKNOWN_FIXTURES,
        mutations=("unknown-type", "unknown-in-tool-pair"),
        modes=REPORTING,
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
        ),
        mutations=(
            "bad-body-missing-field",
            "bad-body-wrong-type",
            "bad-body-null",
            "bad-body-wrong-nesting",
        ),
        why="A type you do recognize, carrying a body that does not fit, is a real error. "
        "Fail loudly.",
    ),
    Check(
        "R4.legacy-spelling-fits",
        "reads a body in its legacy field spelling",
        "R4",
        "verdict",
        fixtures=("legacy_aliases",),
        mutations=("legacy-alias",),
        why="text accepts delta and text_delta accepts text: an aliased field fits.",
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
        fixtures=("extra_fields_top_level", "extra_fields_nested", "extra_fields_borrowed"),
        mutations=("extra-fields", "extra-fields-nested", "extra-fields-borrowed"),
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
        ),
        mutations=("torn-tail",),
        why="A process killed mid-write can leave a partial JSON object at the end — "
        "everything before it is still valid.",
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
        "R6.corrupt-line-not-last",
        "rejects a corrupt line that is not the last",
        "R6",
        "verdict",
        fixtures=("corrupt_middle_line", "nan_literal", "invalid_utf8_middle"),
        mutations=("non-json-line",),
        why="Not JSON is only forgivable as the final line of a killed run.",
    ),
)

BY_ID = {check.id: check for check in CATALOGUE}
PROFILES = ("reader",)


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
