"""The content hazards: fidelity (each does what it says, the decoder agrees), and shrinking
(a client with the real bug is caught by a small counterexample, shown in docs/generators.md).

Each shrinking test models one real bug as a predicate over the case, the way a broken
client in adapters/broken/ has it, and asks Hypothesis for the smallest case that trips it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import ADAPTERS, kit
from hypothesis import HealthCheck, Phase, find, given, settings

from stella_conform.generators import Case, cases, mutated, runs
from stella_conform.generators.envelopes import TOKEN_FIELDS, EnvelopeCase, envelope_cases
from stella_conform.generators.hazards import (
    ESCAPED_SEPARATORS,
    HAZARDS,
    INJECTED_TEXT,
    RAW_SEPARATORS,
    TWO_53,
    number_spellings,
)
from stella_conform.oracle.decoder import Kind, decode, summarize
from stella_conform.oracle.envelope import read_envelope
from stella_conform.schemas.vocabulary import load_schema

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: No explain phase: find() returns the *last* value its condition held for, and the
#: explain phase, run after the shrink, tries variations of the minimal example (which
#: may also hold, and be larger).
SHRINK = settings(
    database=None, max_examples=150, derandomize=True, phases=[Phase.generate, Phase.shrink]
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _known_strings(case: Case, line: int) -> list[str]:
    (outcome,) = [o for o in decode(case.stream) if o.line == line]
    assert outcome.kind is Kind.KNOWN, outcome
    return _strings(outcome.raw)


# ------------------------------------------------------------------ intents (fidelity)
# Registered into tests/generators/test_generators.py's INTENT table, so every mutation's intent
# is checked by the one parametrized test there.


def _accepted_and_known(case: Case, got: dict[str, Any]) -> list[int]:
    (mid,) = case.mutations
    assert got["verdict"] == "accept"
    lines = list(case.marks[mid])
    assert lines, "the mutation touched nothing"
    for line in lines:
        assert any(o.line == line and o.kind is Kind.KNOWN for o in decode(case.stream)), line
    return lines


def _line_separators(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    lines = _accepted_and_known(case, got)
    held = [
        s
        for line in lines
        for s in _known_strings(case, line)
        if any(c in s for c in RAW_SEPARATORS + ESCAPED_SEPARATORS)
    ]
    assert held, "no string holds a separator"
    assert got["lines"] == case.stream.count(b"\n") + (0 if case.stream.endswith(b"\n") else 1)
    assert got["terminator"] == base["terminator"]


def _unicode_edges(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    lines = _accepted_and_known(case, got)
    strings = [s for line in lines for s in _known_strings(case, line)]
    assert any("\x00" in s or any(ord(c) > 0xFFFF for c in s) for s in strings), strings
    assert got["terminator"] == base["terminator"]


def _type_like(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    _accepted_and_known(case, got)
    assert b'"type":' in case.stream.split(b"\n")[case.marks["type-like-payloads"][0] - 1][20:]
    if case.marks.get("type-like-payloads:cut"):  # the run never wrote its terminator
        assert got["terminator"] is None or got["terminator"] == "error" != base["terminator"]
        assert got["texts"] == base["texts"][: len(got["texts"])]
    else:
        for key in ("terminator", "texts", "turns_completed", "unrecognized_events"):
            assert got[key] == base[key], key


def _case_variant(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    _accepted_and_known(case, got)
    assert b"CASE VARIANT" in case.stream
    assert {k: v for k, v in got.items() if k != "lines"} == {
        k: v for k, v in base.items() if k != "lines"
    }


def _big(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    _accepted_and_known(case, got)
    values = [
        v
        for o in decode(case.stream)
        if o.raw is not None
        for k, v in o.raw.items()
        if k in ("ts", "input_tokens", "output_tokens", "cached_input_tokens", "duration_ms")
    ]
    assert any(isinstance(v, int) and v > TWO_53 for v in values)
    assert got["usage"] is not None and all(v < 2**63 for v in got["usage"].values())


def _megabyte(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    _accepted_and_known(case, got)
    assert any(len(t) > 1024 * 1024 for t in got["texts"])


def _torn_inner(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (line,) = case.marks["torn-inner-object"]
    assert got["verdict"] == "accept" and got["torn_final_line"] is True
    torn = case.stream.rstrip(b"\n").split(b"\n")[line - 1]
    inner = torn[torn.index(b'"event":') + len(b'"event":') :]
    value, _ = json.JSONDecoder().raw_decode(inner.decode())  # a whole object inside
    assert isinstance(value, dict) and isinstance(value.get("type"), str)
    assert INJECTED_TEXT not in got["texts"]


def _spellings(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    _accepted_and_known(case, got)
    same = {k: v for k, v in got.items() if k != "cost_usd"}
    assert same == {k: v for k, v in base.items() if k != "cost_usd"}
    assert got["cost_usd"] == base["cost_usd"]  # -0.0 == 0.0: the same number


HAZARD_INTENTS: dict[str, Callable[[Case, dict[str, Any], dict[str, Any]], None]] = {
    "line-separators": _line_separators,
    "unicode-edges": _unicode_edges,
    "type-like-payloads": _type_like,
    "case-variant-keys": _case_variant,
    "big-integers": _big,
    "megabyte-string": _megabyte,
    "torn-inner-object": _torn_inner,
    "json-spellings": _spellings,
}


def test_number_spellings_are_the_same_number() -> None:
    for value in (0.02, 1.5, 0.0001, 4.9999, 0, 0.0):
        spellings = number_spellings(value)
        assert len(spellings) >= 2, value
        assert all(json.loads(s) == value for s in spellings), spellings
    assert {"-0.0", "0E+0"} <= set(number_spellings(0.0))
    assert "2E-2" in number_spellings(0.02)


@SETTINGS
@given(mutated("line-separators"))
def test_separators_are_raw_or_escaped_as_json_allows(case: Case) -> None:
    text = case.stream.decode("utf-8")
    for control in ESCAPED_SEPARATORS:
        assert control not in text  # JSON must escape C0 controls
    summary = summarize(case.stream)
    assert summary.verdict == "accept"


@pytest.mark.parametrize("mutation_id", [m.id for m in HAZARDS])
def test_a_hazard_case_exports_as_a_valid_fixture(mutation_id: str) -> None:
    """Its rule is one the expectation schema knows (a saved counterexample must load)."""
    schema = jsonschema.Draft202012Validator(load_schema("expectation.schema.json"))

    @settings(SETTINGS, max_examples=2)
    @given(mutated(mutation_id))
    def check(case: Case) -> None:
        errors = [e.message for e in schema.iter_errors(case.expectation(description="x"))]
        assert not errors, errors

    check()


# ------------------------------------------------------------------ shrinking


def _splitlines_disagrees(case: Case) -> bool:
    """A reader using str.splitlines() sees more lines than there are."""
    text = case.stream.decode("utf-8")
    return len(text.splitlines()) != len(text.split("\n")) - text.endswith("\n")


def _substring_end(case: Case) -> bool:
    """A dashboard deciding the run ended from the bytes "type":"run_complete"."""
    says = b'"type":"run_complete"' in case.stream
    return says != (case.expected.terminator == "run_complete")


def _rescues_inner(case: Case) -> bool:
    """A reader that reads the last inner object of a torn line as an event."""
    if not case.expected.torn_final_line:
        return False
    torn = case.stream.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    decoder, found = json.JSONDecoder(), None
    for i in range(1, len(torn)):
        if torn[i] == "{":
            try:
                found = decoder.raw_decode(torn, i)[0]
            except ValueError:
                continue
    return isinstance(found, dict) and found.get("type") in ("text", "run_complete", "error")


def _coerces_digits(case: Case) -> bool:
    """A reader that turns "1200" into 1200 in a numeric field, and so accepts."""
    if case.expected.verdict != "reject":
        return False
    line = case.stream.split(b"\n")[case.expected.rejected_line - 1]
    event = json.loads(line)
    return any(
        isinstance(v, str) and v.replace(".", "", 1).isdigit()
        for k, v in event.items()
        if k.endswith(("_tokens", "_ms", "_usd")) or k in ("step", "retries", "tool_calls")
    )


def _doubles_disagree(case: Case) -> bool:
    """A dashboard that sums usage in doubles (JSON.parse) reports another total."""
    usage = case.expected.usage or {}
    rows = [o.raw for o in decode(case.stream) if o.tag == "step_usage"]
    return any(int(sum(float(r[k]) for r in rows)) != usage[k] for k in usage if rows)


def _chunk_decoder_garbles(case: Case) -> bool:
    """A reader decoding 4 KiB chunks separately garbles a character across a boundary."""
    data = case.stream
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    return "".join(c.decode("utf-8", "replace") for c in chunks) != data.decode("utf-8")


# ------------------------------------------------------------------ envelope values


def _steps(case: EnvelopeCase, doc: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    events = (case.doc if doc is None else doc).get("events") or []
    return [e for e in events if isinstance(e, dict) and e.get("type") == "step_usage"]


@SETTINGS
@given(envelope_cases(variants=("usage-values",)))
def test_usage_values_are_exact_only_as_integers(case: EnvelopeCase) -> None:
    """Every case is accepted, and a sum in doubles differs from the exact sum the reference
    reader reports (so a reader that loses precision is caught on every case)."""
    reading = read_envelope(case.data, case.command)
    assert reading.verdict == "accept", reading.reason
    steps = _steps(case)
    assert steps and all(e[k] > TWO_53 for e in steps for k in TOKEN_FIELDS)
    exact = {"input_tokens": reading.input_tokens, "output_tokens": reading.output_tokens}
    assert exact == {k: sum(e[k] for e in steps) for k in TOKEN_FIELDS}
    assert any(_double_total(steps, k) != exact[k] for k in TOKEN_FIELDS)
    assert reading.cost_usd == json.loads(case.data)["cost_usd"]


@SETTINGS
@given(envelope_cases(variants=("events-bad-values",)))
def test_events_bad_values_are_rejected_under_every_reading(case: EnvelopeCase) -> None:
    from stella_conform.oracle.readings import read_envelope_readings

    reading = read_envelope(case.data, case.command)
    assert reading.verdict == "reject" and reading.reason.startswith("events["), reading.reason
    assert all(a.verdict == "reject" for a in read_envelope_readings(case.data, case.command))


def _double_total(steps: list[dict[str, Any]], key: str) -> int:
    total = 0.0
    for event in steps:
        total += float(event[key])
    return int(total)


def _envelope_doubles_disagree(case: EnvelopeCase) -> bool:
    """A reader that adds token counts as doubles (JSON.parse) reports another total."""
    reading = read_envelope(case.data, case.command)
    steps = _steps(case)
    return bool(steps) and _double_total(steps, "input_tokens") != reading.input_tokens


def _nulls_bad_counts(case: EnvelopeCase) -> bool:
    """A reader that reads a token count that is not a u64 as nothing, and so accepts."""
    if read_envelope(case.data, case.command).verdict != "reject":
        return False
    doc = case.doc
    for event in _steps(case, doc):
        for key in TOKEN_FIELDS:
            value = event.get(key)
            if not (type(value) is int and 0 <= value < 2**64):
                event[key] = 0
    return read_envelope(json.dumps(doc).encode(), case.command).verdict == "accept"


ENVELOPE_SHRINKS: list[Any] = [
    pytest.param("usage-values", _envelope_doubles_disagree, id="usage-values"),
    pytest.param("events-bad-values", _nulls_bad_counts, id="events-bad-values"),
]


def minimal_envelope(variant: str, bug: Callable[[EnvelopeCase], bool]) -> EnvelopeCase:
    return find(envelope_cases(variants=(variant,)), bug, settings=SHRINK)


@pytest.mark.parametrize(("variant", "bug"), ENVELOPE_SHRINKS)
def test_envelope_hazard_shrinks_to_one_step(
    variant: str, bug: Callable[[EnvelopeCase], bool]
) -> None:
    """The smallest envelope the modelled reader misreads: one step_usage and a minimal run
    (turn_complete, run_complete)."""
    case = minimal_envelope(variant, bug)
    assert len(case.doc["events"]) <= 3, case.data
    assert len(_steps(case)) == 1, case.data


SHRINKS: list[Any] = [
    pytest.param("line-separators", _splitlines_disagrees, 3, id="line-separators"),
    pytest.param("type-like-payloads", _substring_end, 3, id="type-like-payloads"),
    pytest.param("json-spellings", _substring_end, 2, id="json-spellings"),
    pytest.param("torn-inner-object", _rescues_inner, 3, id="torn-inner-object"),
    pytest.param("bad-read-values", _coerces_digits, 4, id="bad-read-values"),
    pytest.param("big-integers", _doubles_disagree, 4, id="big-integers"),
    pytest.param("unicode-edges", _chunk_decoder_garbles, 3, id="unicode-edges"),
]


def minimal(mutation_id: str, bug: Callable[[Case], bool]) -> Case:
    """The smallest case Hypothesis finds on which the modelled client is wrong.

    Runs start small (two turns of two steps) so the search and the shrink stay cheap;
    what is tested is that the hazard itself shrinks away everything else.
    """
    strategy = cases(
        mutations=[mutation_id],
        min_mutations=1,
        max_mutations=1,
        run_strategy=runs(max_turns=2, max_steps=2),
    )
    return find(strategy, bug, settings=SHRINK)


@pytest.mark.parametrize(("mutation_id", "bug", "max_lines"), SHRINKS)
def test_shrinks_to_a_minimal_counterexample(
    mutation_id: str, bug: Callable[[Case], bool], max_lines: int
) -> None:
    case = minimal(mutation_id, bug)
    lines = case.stream.rstrip(b"\n").split(b"\n")
    assert len(lines) <= max_lines, case.stream


if __name__ == "__main__":  # prints the minimal counterexamples shown in docs/generators.md
    import warnings

    warnings.simplefilter("ignore")
    for param in SHRINKS:
        mutation_id, bug, _ = param.values
        found = minimal(mutation_id, bug)
        text = found.stream.decode("utf-8").encode("unicode_escape").decode()
        print(f"# {mutation_id}: {bug.__doc__}")
        print(text.replace("\\n", "\n").rstrip("\n"), end="\n\n")
    for param in ENVELOPE_SHRINKS:
        variant, bug = param.values
        doc = minimal_envelope(variant, bug).doc
        print(f"# {variant}: {bug.__doc__}")
        print(json.dumps(doc, separators=(",", ":")), end="\n\n")


def test_a_dashboard_that_only_fails_to_clamp_passes_integers_exact(tmp_path: Path) -> None:
    """A big-integers case whose ts runs backwards turns on the clamp: not this check's rule.

    ``dashboard_negative_elapsed`` keeps every unit and only skips the clamp; on seed 1 it
    once failed D.integers-exact as well as its own D.elapsed-clamped. A dashboard that sums
    as doubles still fails D.integers-exact on the same cases.
    """
    args = ["run", "--mode", "persistent", "--profile", "dashboard", "--seed", "1"]
    args += ["--examples", "10", "--no-database", "--only", "D.integers-exact", "--"]
    broken = ADAPTERS / "broken"
    clamps_not = kit(
        *args, sys.executable, str(broken / "dashboard_negative_elapsed.py"), cwd=tmp_path
    )
    assert clamps_not.returncode == 0, clamps_not.stdout[-3000:]
    doubles = kit(
        *args, sys.executable, str(broken / "dashboard_sums_usage_as_float.py"), cwd=tmp_path
    )
    assert doubles.returncode == 1 and "FAIL          D.integers-exact" in doubles.stdout, (
        doubles.stdout[-3000:]
    )
