"""What stella's wire schema says only in its descriptions, beyond an alias alone: a value
an enum does not list, which it reads as ``other`` (``learnt-alias``), and a field beside
the old name a description gives it (``field-and-alias``, as for text/delta). Needs the
real schema (skips without it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from stella_conform.generators.cases import Case, mutated
from stella_conform.generators.mutations import MUTATIONS, applicable
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.vocabulary import Vocabulary

FIXTURE = bundled_fixtures_dir() / "learnt_values.jsonl"
RC = b'{"type":"run_complete","model":"m","cost_usd":0.001}\n'


def _lines() -> list[bytes]:
    return FIXTURE.read_bytes().splitlines(keepends=True)


def test_an_unlisted_value_of_an_open_enum_is_read_as_other(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    line = _lines()[1]
    assert b'"kind":"hologram"' in line
    readings = read_stream(line + RC, vocab)
    assert readings.touched == {"learnt-alias"}
    assert readings.default.summary.verdict == "accept"  # reads as `other`, as stella does
    (keywords,) = readings.alternatives
    assert (keywords.summary.verdict, keywords.summary.rejected_line) == ("reject", 1)
    # a value of an enum whose description says nothing of `other` stays an error
    scope = b'{"type":"stage","name":"x","scope":"hologram"}\n' + RC
    assert read_stream(scope, vocab).default.summary.verdict == "reject"
    assert not read_stream(scope, vocab).alternatives


@pytest.mark.parametrize(
    ("index", "pair"), [(2, ("verifier", "judge")), (3, ("flip", "flip_achieved"))]
)
def test_a_field_beside_its_described_alias_is_field_and_alias(
    wire_schema: Path, index: int, pair: tuple[str, str]
) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    line = _lines()[index]
    readings = read_stream(line + RC, vocab)
    assert readings.touched == {"field-and-alias"}
    assert readings.default.summary.verdict == "accept"
    (serde,) = readings.alternatives  # stella: "duplicate field"
    assert (serde.summary.verdict, serde.summary.rejected_line) == ("reject", 1)
    assert all(f"'{name}'" in str(serde.summary.reason) for name in pair)
    alone = json.loads(line)
    step = alone.get("step") or alone["evidence"]["ladder"]
    del step[pair[1]]
    assert not read_stream(json.dumps(alone).encode() + b"\n" + RC, vocab).touched


def test_the_whole_fixture_under_the_wire_schema(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    readings = read_stream(FIXTURE.read_bytes(), vocab)
    assert readings.default.summary.verdict == "accept"
    seen = {a.reading: (a.summary.verdict, a.summary.rejected_line) for a in readings.alternatives}
    assert seen["learnt-alias"] == ("reject", 2)
    assert seen["field-and-alias"] == ("reject", 3)


@pytest.mark.parametrize(
    ("mutation", "point"),
    [
        ("value-read-as-other", "learnt-alias"),
        ("old-type-name", "learnt-alias"),
        ("field-beside-learnt-alias", "field-and-alias"),
    ],
)
def test_the_generators_draw_them_under_the_wire_schema_only(
    wire_schema: Path, mutation: str, point: str
) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    assert MUTATIONS[mutation].reading == point
    assert applicable(mutation, vocab)
    assert not applicable(mutation, Vocabulary.default())  # the kit's own names none
    made: list[Case] = []

    @settings(
        max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(mutated(mutation, vocab=vocab))
    def draw(case: Case) -> None:
        if case.marks.get(mutation):
            made.append(case)
            assert point in read_stream(case.stream, vocab, decoded=case.reading).touched

    draw()
    assert made, f"{mutation} never drew its line"
