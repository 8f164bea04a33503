"""The reference decoder agrees with every curated fixture's hand-written expectation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stella_conform.oracle.corpus import (
    bundled_fixtures_dir,
    compare,
    corpus_version,
    iter_fixtures,
    validate_expectation,
)
from stella_conform.oracle.decoder import decode_all
from stella_conform.oracle.readings import IDS, read_stream, split_label

FIXTURES = list(iter_fixtures())
RULES = ("R1", "R2", "R3", "R4", "R5", "R6")
GUARANTEES = (
    "ts",
    "aliases",
    "text-replaces-deltas",
    "stage-scope",
    "terminator",
    "key-order",
    "version-gap",
)


def test_bundled_corpus_is_the_repository_folder(repo: Path) -> None:
    shipped = sorted(p.name for p in bundled_fixtures_dir().iterdir() if p.suffix != ".md")
    in_repo = sorted(p.name for p in (repo / "fixtures").iterdir() if p.suffix != ".md")
    assert shipped == in_repo


def test_corpus_is_large_enough_and_versioned() -> None:
    assert len(FIXTURES) >= 30
    assert corpus_version() != "unversioned"


@pytest.mark.parametrize("rule", RULES + GUARANTEES)
def test_every_rule_and_guarantee_has_a_fixture(rule: str) -> None:
    assert any(rule in f.rules for f in FIXTURES), rule


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_has_an_accepted_and_named_case(rule: str) -> None:
    # a rule proven only by rejections (or only acceptances) could hide a lazy client
    verdicts = {f.expect["verdict"] for f in FIXTURES if rule in f.rules}
    if rule in ("R4",):
        assert "reject" in verdicts
    else:
        assert "accept" in verdicts


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_expectation_file_is_schema_valid(fixture) -> None:  # type: ignore[no-untyped-def]
    path = fixture.stream_path.with_name(fixture.name + ".expect.json")
    validate_expectation(json.loads(path.read_text(encoding="utf-8")), str(path))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_decoder_agrees_with_expectation(fixture) -> None:  # type: ignore[no-untyped-def]
    decoded = decode_all(fixture.stream)
    assert compare(fixture.expect, decoded.summary) == []
    # every physical line gets exactly one outcome, up to a rejection
    numbers = [o.line for o in decoded.outcomes]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    if fixture.expect["verdict"] == "accept":
        assert numbers == list(range(1, len(numbers) + 1))
        assert decoded.summary.lines == fixture.stream.count(b"\n") + (
            0 if fixture.stream.endswith(b"\n") else 1
        )


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_also_conforming_agrees_with_the_register(fixture) -> None:  # type: ignore[no-untyped-def]
    # every other reading the oracle finds is listed, named, and says what a client taking it does
    readings = read_stream(fixture.stream)
    listed = fixture.expect.get("also_conforming", [])
    assert [entry["reading"] for entry in listed] == [a.reading for a in readings.alternatives]
    for entry, alternative in zip(listed, readings.alternatives, strict=True):
        assert split_label(entry["reading"]) <= IDS
        actual = alternative.summary.to_json()
        assert {k: v for k, v in entry.items() if k != "reading"} == {
            k: actual[k] for k in entry if k != "reading"
        }


def test_every_registered_reading_has_a_fixture() -> None:
    named = {
        point
        for f in FIXTURES
        for entry in f.expect.get("also_conforming", [])
        for point in split_label(entry["reading"])
    }
    # prose-constraint needs a wire schema (tests/oracle/test_readings.py),
    # shape-archived-today the older stella's vocabulary (archived_complete there:
    # tests/conformance/checks/test_claims_versions.py),
    # tokens-without-usage and tokens-not-read an envelope (fixtures/envelopes: there)
    # learnt-alias a wire schema's descriptions (learnt_aliases there: test_learnt_aliases.py)
    assert named == IDS - {
        "prose-constraint",
        "shape-archived-today",
        "tokens-without-usage",
        "tokens-not-read",
        "learnt-alias",
    }
