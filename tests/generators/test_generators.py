"""Properties of the public strategies: fidelity, intent, shrinking, determinism."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from test_edges import EDGE_INTENTS
from test_hazards import HAZARD_INTENTS
from test_seams import SEAM_INTENTS
from test_text import TEXT_INTENTS

from stella_conform.generators import (
    MUTATIONS,
    REJECTING,
    Case,
    cases,
    events,
    known_events,
    mutated,
    runs,
    strategies_for,
)
from stella_conform.generators.events import EventStrategies
from stella_conform.generators.export import draw_cases
from stella_conform.generators.text import TEXT_REJECTING
from stella_conform.oracle.decoder import Kind, decode, summarize
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.vocabulary import Vocabulary

DEFAULT = Vocabulary.default()
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


#: For find(): no explain phase, which runs after the shrink and tries variations of the
#: minimal example; find() returns the last value its condition held for.
FIND = settings(
    database=None, max_examples=500, derandomize=True, phases=[Phase.generate, Phase.shrink]
)


@cache
def validator(vocab: Vocabulary, tag: str) -> Any:
    return jsonschema.Draft202012Validator(vocab.schema_for(tag))


def assert_schema_valid(vocab: Vocabulary, event: dict[str, Any]) -> None:
    errors = list(validator(vocab, event["type"]).iter_errors(event))
    assert not errors, (event, [e.message for e in errors])


@SETTINGS
@given(runs())
def test_valid_runs_are_schema_valid_default(run: Any) -> None:
    for event in run.events:
        assert_schema_valid(DEFAULT, event)
    assert summarize(run.to_bytes()).verdict == "accept"


def test_valid_runs_are_schema_valid_imported(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)

    @SETTINGS
    @given(runs(vocab))
    def check(run: Any) -> None:
        for event in run.events:
            assert_schema_valid(vocab, event)
        assert summarize(run.to_bytes(), vocab).verdict == "accept"

    check()


def test_every_imported_type_is_generated_schema_valid(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    gen = EventStrategies(vocab)

    @settings(SETTINGS, max_examples=15)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        for tag in sorted(vocab.known):
            event = data.draw(gen.for_type(tag), label=tag)
            assert event["type"] == tag and next(iter(event)) == "type"
            assert_schema_valid(vocab, event)
            assert vocab.misfit(tag, event) is None  # the fit compiler agrees

    check()
    assert not gen.report.fallbacks, gen.report.describe()
    assert set(gen.report.sources.values()) == {"hand-written", "schema-driven"}


@SETTINGS
@given(known_events())
def test_fit_compiler_agrees_with_jsonschema_on_valid_events(event: dict[str, Any]) -> None:
    assert DEFAULT.misfit(event["type"], event) is None
    assert_schema_valid(DEFAULT, event)


@pytest.mark.parametrize(
    "mutation_id",
    sorted(REJECTING - {"non-json-line", "not-object-line", "strip-chars-edge"} - TEXT_REJECTING),
)
def test_fit_compiler_agrees_with_jsonschema_on_broken_events(mutation_id: str) -> None:
    """Where a mutation breaks a body, strict JSON Schema validation also fails it."""

    @SETTINGS
    @given(mutated(mutation_id))
    def check(case: Case) -> None:
        (line_no,) = case.marks[mutation_id]
        line = case.stream.split(b"\n")[line_no - 1]
        (outcome,) = decode(line)
        assert outcome.kind is Kind.REJECT
        raw = outcome.raw
        errors = list(
            validator(DEFAULT, raw["type"]).iter_errors(DEFAULT.normalize(raw["type"], raw))
        )
        assert errors, raw

    check()


def base_summary(case: Case) -> dict[str, Any]:
    assert case.run is not None
    return summarize(case.run.to_bytes()).to_json()


def same_except(a: dict[str, Any], b: dict[str, Any], *keys: str) -> None:
    for key in a:
        if key not in keys:
            assert a[key] == b[key], key


def outcome_at(case: Case, line: int) -> Kind:
    return next(o.kind for o in decode(case.stream) if o.line == line)


INTENT: dict[str, Callable[[Case, dict[str, Any], dict[str, Any]], None]] = {}


def intent(
    *ids: str,
) -> Callable[
    [Callable[[Case, dict[str, Any], dict[str, Any]], None]],
    Callable[[Case, dict[str, Any], dict[str, Any]], None],
]:
    def register(fn: Callable[[Case, dict[str, Any], dict[str, Any]], None]) -> Any:
        for mutation_id in ids:
            INTENT[mutation_id] = fn
        return fn

    return register


@intent("unknown-type", "unknown-in-tool-pair", "type-missing", "type-non-string", "type-near-miss")
def _inert(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    (line,) = case.marks[mid]
    assert outcome_at(case, line) is Kind.UNKNOWN
    assert got["unrecognized_events"] == base["unrecognized_events"] + 1
    same_except(
        base,
        got,
        "unrecognized_events",
        "unrecognized_types",
        "lines",
        "tool_calls",
        "known_events",
    )
    if mid == "unknown-in-tool-pair":
        before = case.stream.split(b"\n")[line - 2]
        assert b'"tool_start"' in before


@intent(
    "extra-field-huge",
    "extra-fields",
    "extra-fields-nested",
    "extra-fields-borrowed",
    "legacy-alias",
    "long-line-64k",
    "long-line-1m",
    "crlf",
    "no-trailing-newline",
)
def _changes_nothing(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    assert got["verdict"] == "accept"
    for line in case.marks[mid]:
        assert outcome_at(case, line) is Kind.KNOWN
    if mid == "legacy-alias":  # may add a text event when the run has none
        same_except(base, got, "lines", "known_events", "texts", "final_text", "preview")
    elif mid == "extra-fields-nested":  # may add a tool_start when nothing is nested
        same_except(base, got, "lines", "known_events", "tool_calls")
    else:
        same_except(base, got)


@intent("long-line-64k", "long-line-1m")
def _long(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    (line,) = case.marks[mid]
    size = 65 * 1024 if mid.endswith("64k") else 1024 * 1024
    assert len(case.stream.split(b"\n")[line - 1]) > size
    assert outcome_at(case, line) is Kind.KNOWN and got["verdict"] == "accept"
    same_except(base, got, "lines", "known_events", "preview")


@intent("blank-lines")
def _blank(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["blank_lines"] == len(case.marks["blank-lines"]) > 0
    same_except(base, got, "lines", "blank_lines")


@intent("ts-removed")
def _ts_removed(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["elapsed_ms"] is None and b'"ts"' not in case.stream
    same_except(base, got, "elapsed_ms")


@intent("ts-backwards", "ts-extreme")
def _ts_odd(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["verdict"] == "accept" and got["elapsed_ms"] is not None
    assert got["elapsed_ms"] >= 0
    same_except(base, got, "elapsed_ms")


@intent(*sorted(REJECTING))
def _rejected_at_the_broken_line(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    (line,) = case.marks[mid]
    assert got["verdict"] == "reject" and got["rejected_line"] == line


@intent("torn-tail")
def _torn(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["verdict"] == "accept" and got["torn_final_line"] is True
    assert not case.stream.endswith(b"\n")
    assert got["known_events"] + got["unrecognized_events"] == (
        base["known_events"] + base["unrecognized_events"] - 1
    )


@intent("ts-null")
def _ts_null(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    # the absent stamp (reading A): nothing but elapsed time can change; reading B rejects
    # the first line that carries it (the wire schema types ts as an integer)
    assert got["verdict"] == "accept"
    same_except(base, got, "elapsed_ms")
    (other,) = [a for a in read_stream(case.stream).alternatives if a.taken == {"ts-null"}]
    assert other.summary.verdict == "reject"
    assert other.summary.rejected_line == min(case.marks["ts-null"])


#: Registered points whose default reading (A) accepts the line the mutation made.
_A_ACCEPTS = {
    "scopeless-stage", "field-and-alias", "negative-zero", "number-beyond-f64",
    "lone-surrogate", "deep-nesting", "duplicate-keys", "extra-key-beside-arm",
    "torn-then-newline",
}  # fmt: skip


@intent(*sorted(m.id for m in MUTATIONS.values() if m.reading and m.id not in INTENT))
def _two_readings(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    point = MUTATIONS[mid].reading
    readings = read_stream(case.stream)
    assert point in readings.touched
    (other,) = [a for a in readings.alternatives if a.taken == {point}]
    if mid in ("utf8-bom", "unicode-whitespace") and got["torn_final_line"]:
        return  # the line it touched is the last: torn under A, read under B; both accept
    verdicts = {got["verdict"], other.summary.verdict}
    assert verdicts == {"accept", "reject"}  # each point decides the verdict
    assert got["verdict"] == ("accept" if mid in _A_ACCEPTS else "reject")


INTENT.update(HAZARD_INTENTS)  # the content hazards' intents live beside their own tests
INTENT.update(TEXT_INTENTS)  # and the JSON-text and framing mutations', beside theirs
INTENT.update(EDGE_INTENTS)  # and the edge values' and host-language names'
INTENT.update(SEAM_INTENTS)  # and the seams'


def test_every_mutation_has_a_stated_intent() -> None:
    assert set(INTENT) == set(MUTATIONS)


#: Mutations of what a wire schema says only in its descriptions: the kit's own vocabulary
#: names nothing they need (tests/schemas/test_learnt_values.py draws them under stella's).
WIRE_ONLY = frozenset({"value-read-as-other", "field-beside-learnt-alias", "old-type-name"})


@pytest.mark.parametrize("mutation_id", sorted(set(MUTATIONS) - WIRE_ONLY))
def test_mutation_has_its_intended_effect(mutation_id: str) -> None:
    check_intent = INTENT[mutation_id]
    examples = 10 if mutation_id in ("long-line-1m", "megabyte-string") else 40
    if MUTATIONS[mutation_id].reading is not None:
        examples = 15  # each reading is one decision; the oracle's readings are tested elsewhere

    @settings(SETTINGS, max_examples=examples)
    @given(mutated(mutation_id))
    def check(case: Case) -> None:
        got = summarize(case.stream).to_json()
        assert case.expected.to_json() == got  # the case's expectation is the decoder's
        check_intent(case, base_summary(case), got)
        point = MUTATIONS[mutation_id].reading
        if point is not None:  # a registered point: the oracle sees it and lists reading B
            assert point in read_stream(case.stream).touched

    check()


def _open_string(torn: bytes) -> str | None:
    """'key' or 'value' when the torn line ends inside a string, else None."""
    inside, escaped, role, last = False, False, None, b""
    for byte in torn:
        ch = bytes([byte])
        if inside:
            if escaped:
                escaped = False
            elif ch == b"\\":
                escaped = True
            elif ch == b'"':
                inside = False
        elif ch == b'"':
            inside, role = True, ("value" if last == b":" else "key")
        elif ch not in b" \t":
            last = ch
    return role if inside else None


TORN_SHAPES: dict[str, Callable[[bytes], bool]] = {
    "mid-key": lambda t: _open_string(t) == "key",
    "mid-string": lambda t: _open_string(t) == "value",
    "mid-escape": lambda t: t.endswith(b"\\"),
    "mid-utf8": lambda t: t.decode("utf-8", "replace").endswith("\ufffd"),
    "anywhere": lambda t: len(t) > 0,
}


def test_torn_tail_hits_every_kind_of_offset() -> None:
    seen: set[str] = set()

    @settings(SETTINGS, max_examples=150)
    @given(mutated("torn-tail"))
    def check(case: Case) -> None:
        (line,) = case.marks["torn-tail"]
        torn = case.stream.split(b"\n")[line - 1]
        (kind,) = [m.split(":")[1] for m in case.marks if m.startswith("torn-tail:")]
        assert TORN_SHAPES[kind](torn), (kind, torn)
        seen.add(kind)

    check()
    assert seen == set(TORN_SHAPES)


@SETTINGS
@given(cases(max_mutations=3))
def test_any_combination_decodes_to_its_expectation(case: Case) -> None:
    """A case's expectation comes from the careful decode (which notes the registered
    points): it reads every line as the plain decoder does."""
    assert summarize(case.stream).to_json() == case.expected.to_json()
    assert case.decoded is not None
    plain = [(o.line, o.kind, o.tag, o.reason) for o in decode(case.stream)]
    assert plain == [(o.line, o.kind, o.tag, o.reason) for o in case.decoded.outcomes]


def test_shrinks_an_unknown_type_failure_to_three_lines() -> None:
    def client_crashes(case: Case) -> bool:  # a client that dies on any unrecognized type
        return any(o.kind is Kind.UNKNOWN for o in decode(case.stream))

    minimal = find(cases(), client_crashes, settings=FIND)
    assert minimal.stream.count(b"\n") <= 3, minimal.stream


def test_shrinks_a_torn_tail_failure_to_a_short_line() -> None:
    def client_chokes(case: Case) -> bool:  # a client that fails on a torn final line
        return case.expected.torn_final_line

    minimal = find(cases(), client_chokes, settings=FIND)
    torn = minimal.stream.rsplit(b"\n", 1)[-1]
    assert 0 < len(torn) <= 16, minimal.stream


def test_same_seed_same_bytes_different_seed_different() -> None:
    a = draw_cases(25, seed=11)
    b = draw_cases(25, seed=11)
    c = draw_cases(25, seed=12)
    assert [x.stream for x in a] == [x.stream for x in b]
    assert [x.mutations for x in a] == [x.mutations for x in b]
    assert [x.stream for x in a] != [x.stream for x in c]


def test_events_strategy_rejects_unknown_types() -> None:
    with pytest.raises(ValueError, match="not a known type"):
        events("quantum_reticulation")


def test_unhandled_schema_member_falls_back_and_is_reported() -> None:
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "oneOf": [
            {
                "type": "object",
                "required": ["type", "id"],
                "properties": {
                    "type": {"const": "weird"},
                    "id": {"type": "string", "pattern": "^[a-z]+$"},
                },
            },
            {
                "type": "object",
                "required": ["type", "n"],
                "properties": {
                    "type": {"const": "fine"},
                    "n": {"type": "integer", "minimum": 3, "maximum": 5},
                },
            },
        ],
    }
    vocab = Vocabulary.from_schema_document(doc, name="t", version="1")
    gen = EventStrategies(vocab)
    gen.for_type("weird")
    assert "weird" in gen.report.fallbacks and "pattern" in gen.report.fallbacks["weird"]

    @settings(SETTINGS, max_examples=20)
    @given(gen.for_type("fine"))
    def check(event: dict[str, Any]) -> None:
        assert event["type"] == "fine" and 3 <= event["n"] <= 5

    check()


def test_hypothesis_jsonschema_engine_is_probed_not_trusted() -> None:
    """Opt-in from_schema either works for real or is reported and replaced."""
    doc = {
        "oneOf": [
            {"type": "object", "required": ["type"], "properties": {"type": {"const": "only_here"}}}
        ]
    }
    vocab = Vocabulary.from_schema_document(doc, name="t", version="1")
    gen = EventStrategies(vocab, engine="hypothesis-jsonschema")

    @settings(SETTINGS, max_examples=5)
    @given(gen.for_type("only_here"))
    def check(event: dict[str, Any]) -> None:
        assert event["type"] == "only_here"

    check()
    source = gen.report.sources["only_here"]
    if source != "hypothesis-jsonschema":
        assert "hypothesis-jsonschema" in gen.report.fallbacks["only_here"]


def test_strategies_are_cached_per_vocabulary() -> None:
    assert strategies_for(DEFAULT) is strategies_for(DEFAULT)


COLD_START_PROBE = """
import sys
from hypothesis import given, settings, strategies as st
from stella_conform.generators import cases
from stella_conform.generators.envelopes import envelope_cases
from stella_conform.generators.journals import journal_cases
from stella_conform.generators.scenarios import scenario_cases
from stella_conform.schemas.vocabulary import Vocabulary
vocab = Vocabulary.from_wire_schema(sys.argv[1]) if len(sys.argv) > 1 else Vocabulary.default()
everything = st.one_of(
    cases(vocab, max_mutations=3), envelope_cases(vocab), journal_cases(), scenario_cases(vocab)
)

@settings(max_examples=60, database=None, deadline=None)
@given(everything)
def draw(case):
    pass

draw()
"""


def test_generation_needs_no_unicode_table(tmp_path: Path, upstream_dir: Path) -> None:
    """Hypothesis builds its Unicode table once per fresh directory (2.8 CPU-s, 200 MiB):
    every generator draws from explicit alphabets instead, so a CI checkout never pays it."""
    import subprocess
    import sys

    wire = str(upstream_dir / "agentevent.schema.json")
    done = subprocess.run(
        [sys.executable, "-c", COLD_START_PROBE, wire], cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert not (tmp_path / ".hypothesis" / "unicode_data").exists()


def test_the_kit_is_never_a_source_of_local_constants() -> None:
    """One seed, one set of cases, whether the kit is a checkout or a wheel (generators.seeded)."""
    import importlib

    from hypothesis.internal.conjecture import providers

    for name in ("stella_conform.generators.events", "stella_conform.conformance.clients.runner"):
        module_file = importlib.import_module(name).__file__
        assert module_file is not None
        assert not providers.is_local_module_file(module_file)
