"""Edge values and host-language names (generators/edges.py): what each cell writes is what
the reference decoder says it is (valid cells accepted, bad ones rejected at their line,
under every reading), and every cell is drawn by every default run (seeds 0-19), as a
stratum of the checks that grade it, in the reach audit's terms (grammar.scan)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.reach import _drawn, drawn_cases
from stella_conform.conformance.suite import check_strata
from stella_conform.generators import Case
from stella_conform.generators.edges import (
    BAD_CELLS,
    CELLS,
    ENVELOPE_CELLS,
    HOST_NAMES,
    TWIN_CELL,
    VALID_CELLS,
    cells_in,
    fields_of,
)
from stella_conform.generators.grammar import BY_ID as PRODUCTIONS
from stella_conform.generators.hazards import bad_options
from stella_conform.generators.journal_edges import JOURNAL_CELLS
from stella_conform.oracle.decoder import Kind, decode, summarize
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.vocabulary import Vocabulary

#: The checks whose strata hold the cells: every cell is one of their strata.
EDGE_CHECKS = (
    "R1.valid-runs-accepted",
    "R4.bad-body-rejected",
    "R3.unknown-type-inert",
    "R5.unknown-fields-ignored",
)
USAGE = {
    "type": "step_usage", "step": 0, "model": "m", "input_tokens": 0, "output_tokens": 0,
    "cached_input_tokens": 0, "cost_usd": 0.0, "duration_ms": 0, "retries": 0, "tool_calls": 0,
}  # fmt: skip


def _strata(check_id: str) -> list[Any]:
    return check_strata(BY_ID[check_id], Vocabulary.default())


def _edge_strata() -> list[tuple[str, Case]]:
    mine = {
        "edge-values",
        "bad-edge-values",
        "host-type-names",
        "host-field-names",
        "case-folded-twins",
    }
    return [
        (check_id, case)
        for check_id in EDGE_CHECKS
        for case in _strata(check_id)
        if set(case.mutations) & mine
    ]


def test_every_cell_is_a_production_of_the_reach_audit() -> None:
    for cell in CELLS:
        assert cell in PRODUCTIONS
        envelope = ("envelope",) if cell in ENVELOPE_CELLS else ()
        trace = ("trace",) if cell in JOURNAL_CELLS else ()
        assert PRODUCTIONS[cell].profiles == ("reader", *envelope, *trace)


def test_the_schema_s_fields_are_classed() -> None:
    fields = {f.name: f for f in fields_of(Vocabulary.default())}
    assert fields["step_usage.input_tokens"].u64
    assert fields["step_usage.retries"].u32 and not fields["step_usage.retries"].u64
    assert fields["text.text"].string and fields["step_usage.cost_usd"].number
    assert fields["error.retryable"].boolean and fields["step_usage.output_text"].nullable
    assert fields["tool_start.call.input"].anything
    assert fields["tool_result.output.ok.content"].string
    assert not fields["stage.scope"].string  # an enum: a name, not text
    assert not fields["tool_result.speculated"].required


def test_the_bad_read_values_offer_minus_one_and_a_non_numeric_string() -> None:
    """-1 is an integer, so a filter on JSON types alone dropped it; it is out of the
    unsigned field's bounds, so it breaks the body.  And "x1200", which int() refuses."""
    options = bad_options(Vocabulary.default(), dict(USAGE), "input_tokens", ["integer"])
    assert -1 in options
    assert "x1200" in options
    assert 0 not in options


def test_cells_are_found_where_they_are_and_only_there() -> None:
    assert cells_in({"type": "text", "text": ""}) == {"edge.string-empty"}
    assert cells_in({"type": "text", "text": "a"}) == frozenset()
    assert "bad-value.negative-unsigned" in cells_in({**USAGE, "input_tokens": -1})
    assert "bad-value.non-numeric-string" in cells_in({**USAGE, "retries": "x1200"})
    assert "edge.u64-max" in cells_in({**USAGE, "tool_calls": 2**64 - 1})
    assert "edge.u64-max" not in cells_in({**USAGE, "tool_calls": 2**64})  # bad, not an edge
    assert cells_in({"type": "constructor"}) == {"names.type.js-object-prototype"}
    assert cells_in({"type": "text", "text": "a", "__class__": 1}) == {"names.field.python-special"}
    assert cells_in({"type": "text", "text": "a", "TEXT": "b"}) == {TWIN_CELL}
    assert TWIN_CELL in cells_in({**USAGE, "Input_Tokens": 1})
    assert TWIN_CELL not in cells_in({"type": "text", "text": "a", "delta": "b"})


@pytest.mark.parametrize("check_id", EDGE_CHECKS)
def test_every_cell_is_a_stratum_of_its_check(check_id: str) -> None:
    """Strata are the same for every seed: a cell a stratum holds is in every default run."""
    check = BY_ID[check_id]
    found: set[str] = set()
    for case in _strata(check_id):
        found |= _drawn(check, case).productions
    wanted = {
        "R1.valid-runs-accepted": {c.id for c in VALID_CELLS},
        "R4.bad-body-rejected": {c.id for c in BAD_CELLS},
        "R3.unknown-type-inert": {f"names.type.{g}" for g in HOST_NAMES},
        "R5.unknown-fields-ignored": {f"names.field.{g}" for g in HOST_NAMES} | {TWIN_CELL},
    }[check_id]
    assert not wanted - found, sorted(wanted - found)


@pytest.mark.slow
def test_every_cell_is_drawn_by_the_default_runs_of_seeds_0_to_19() -> None:
    """What ``run`` grades per check (its strata, then 25 random examples), seed by seed:
    only the checks whose strata hold the cells are drawn (about a second a seed), and
    each profile's bold cells are looked for in its own checks' cases."""
    wanted = {
        check_id: {c for c in CELLS if BY_ID[check_id].profile in PRODUCTIONS[c].profiles}
        for check_id in (*EDGE_CHECKS, "E.events-follow-stream-rules", "J.bad-body-rejected")
    }
    by_profile: dict[str, set[str]] = {}
    for check_id, cells in wanted.items():
        by_profile.setdefault(BY_ID[check_id].profile, set()).update(cells)
    missed: dict[tuple[int, str], list[str]] = {}
    for seed in range(20):
        found: dict[str, set[str]] = {profile: set() for profile in by_profile}
        for check_id in wanted:
            for drawn in drawn_cases(BY_ID[check_id], seed, 25):
                found[BY_ID[check_id].profile] |= drawn.productions
        for profile, cells in by_profile.items():
            if cells - found[profile]:
                missed[(seed, profile)] = sorted(cells - found[profile])
    assert not missed, missed


def test_valid_cells_are_accepted_and_bad_ones_rejected_under_every_reading() -> None:
    for check_id, case in _edge_strata():
        readings = read_stream(case.stream)
        assert not readings.touched, (check_id, case.stream)  # no registered point
        (mutation,) = case.mutations
        if mutation == "bad-edge-values":
            (line,) = case.marks[mutation]
            assert case.expected.verdict == "reject", case.stream
            assert case.expected.rejected_line == line
        else:
            assert case.expected.verdict == "accept", case.stream
            if mutation == "host-type-names":
                assert case.expected.unrecognized_events == len(case.marks[mutation])


def test_a_valid_cell_goes_in_every_field_of_its_class() -> None:
    """2^64 - 1 in every u64 field of every known type (ts too): the cell's strata (the
    types it adds come in two parts, a short stream each) hold them all."""
    cases = [
        c
        for check_id, c in _edge_strata()
        if check_id == "R1.valid-runs-accepted" and b"18446744073709551615" in c.stream
    ]
    assert len(cases) == 2
    vocab = Vocabulary.default()
    u64 = {f.name for f in fields_of(vocab) if f.u64}
    seen: set[str] = set()
    for case in cases:
        assert case.stream.count(b"\n") <= 8
        for outcome in decode(case.stream):
            if outcome.kind is not Kind.KNOWN or not isinstance(outcome.raw, dict):
                continue
            for f in fields_of(vocab):
                holder: Any = outcome.raw
                for key in f.path[:-1]:
                    holder = holder.get(key, {}) if isinstance(holder, dict) else {}
                if f.tag == outcome.raw["type"] and holder.get(f.path[-1]) == 2**64 - 1:
                    seen.add(f.name)
    assert seen == u64, sorted(u64 - seen)


def _edge_values(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["verdict"] == "accept"


def _host_types(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    names = len(case.marks[mid])
    assert got["verdict"] == "accept"
    assert got["unrecognized_events"] == base["unrecognized_events"] + names


def _host_fields(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["verdict"] == "accept"
    assert {k: v for k, v in got.items() if k != "lines"} == {
        k: v for k, v in base.items() if k != "lines"
    }


def _without_twins(stream: bytes) -> bytes:
    """The stream with every key that differs from a known field in case only removed."""
    vocab = Vocabulary.default()
    own = {(f.tag, f.path[0]) for f in fields_of(vocab) if len(f.path) == 1}
    lines = []
    for raw in stream.split(b"\n"):
        if not raw.strip():
            lines.append(raw)
            continue
        obj = json.loads(raw)
        tag = obj.get("type")
        folded = {name.lower() for t, name in own if t == tag}
        kept = {k: v for k, v in obj.items() if (tag, k) in own or k.lower() not in folded}
        lines.append(json.dumps(kept, separators=(",", ":")).encode())
    return b"\n".join(lines)


def _twins(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    """The stream reads as it reads without its twins: they are unknown fields."""
    assert got["verdict"] == "accept"
    assert case.marks["case-folded-twins"]
    plain = _without_twins(case.stream)
    assert plain != case.stream
    assert summarize(plain).to_json() == got


EDGE_INTENTS: dict[str, Callable[[Case, dict[str, Any], dict[str, Any]], None]] = {
    "edge-values": _edge_values,
    "host-type-names": _host_types,
    "host-field-names": _host_fields,
    "case-folded-twins": _twins,
}


@pytest.mark.parametrize(
    ("check_id", "field"), [("D.text-replaces-preview", "texts"), ("D.integers-exact", "usage")]
)
def test_a_case_folded_twin_is_a_stratum_where_its_value_is_compared(
    check_id: str, field: str
) -> None:
    """Text beside text and Input_Tokens beside input_tokens, each spelling, in every run
    of the checks that compare the text and the usage: the reference decoder reads the
    fields, never their twins (which hold other values)."""
    cases = [c for c in _strata(check_id) if "case-folded-twins" in c.mutations]
    assert len(cases) == 2
    spellings = set()
    for case in cases:
        events = [json.loads(line) for line in case.stream.splitlines()]
        text = next(e for e in events if e["type"] == "text")
        usage = next(e for e in events if e["type"] == "step_usage")
        twin = next(k for k in text if k != "text" and k.lower() == "text")
        spellings.add(twin)
        assert text[twin] != text["text"]
        assert (
            usage[twin.replace("TEXT", "INPUT_TOKENS").replace("Text", "Input_Tokens")]
            != (usage["input_tokens"])
        )
        assert list(text).index(twin) > list(text).index("text")  # the last key wins in Go
        expected = case.expected.to_json()
        assert expected["verdict"] == "accept"
        assert expected[field] == summarize(_without_twins(case.stream)).to_json()[field]
        assert expected["texts"] == [text["text"]]
        assert expected["usage"]["input_tokens"] == usage["input_tokens"]
    assert spellings == {"Text", "TEXT"}


def test_an_envelope_s_events_hold_its_cells_in_every_run() -> None:
    """The envelope cells are strata of E.events-follow-stream-rules: valid ones accepted,
    bad ones rejected by the reference envelope reader, each found by the reach audit."""
    from stella_conform.oracle.envelope import read_envelope

    check = BY_ID["E.events-follow-stream-rules"]
    found: set[str] = set()
    for case in check_strata(check, Vocabulary.default()):
        if "edge" not in case.variant:
            continue
        verdict = read_envelope(case.data, case.command).verdict
        assert verdict == ("reject" if "bad" in case.variant else "accept"), case.data
        found |= _drawn(check, case).productions
    assert set(ENVELOPE_CELLS) <= found, sorted(set(ENVELOPE_CELLS) - found)


def test_a_journal_s_lines_hold_its_cells_in_every_run() -> None:
    """The journal cells are strata of J.bad-body-rejected: valid ones accepted, bad ones
    rejected by the reference journal reader, each found by the reach audit."""
    from stella_conform.oracle.journal import read_journal

    check = BY_ID["J.bad-body-rejected"]
    found: set[str] = set()
    for case in check_strata(check, Vocabulary.default()):
        if "edge" not in case.variant:
            continue
        verdict = read_journal(case.data).verdict
        assert verdict == ("reject" if "bad" in case.variant else "accept"), case.data
        found |= _drawn(check, case).productions
    assert set(JOURNAL_CELLS) <= found, sorted(set(JOURNAL_CELLS) - found)
