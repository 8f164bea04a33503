"""What a client claims to know narrows the oracle; bundled vocabularies load by name.

A client that recognizes fewer types than stella writes is graded on those types only:
an unclaimed type is unrecognized *for this client*, so its body is never a rule-4
error, no rule-4 case is built from it, and no invented unknown name collides with a
type stella writes.  The older stella (``complete`` as the turn boundary, scope-less
stages, ``text`` spelled ``delta``) is checked against its real recorded stream.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stella_conform.generators.cases import cases
from stella_conform.generators.runs import runs
from stella_conform.oracle.decoder import Kind, decode_all
from stella_conform.schemas.vocabulary import Vocabulary, VocabularyError

FEW = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))

TEXT_AND_END = Vocabulary.default().restrict(["text", "run_complete"])


def test_restrict_narrows_known_but_keeps_what_stella_writes() -> None:
    full = Vocabulary.default()
    assert TEXT_AND_END.known == {"text", "run_complete"}
    assert TEXT_AND_END.written == full.written
    assert TEXT_AND_END.unclaimed == full.written - {"text", "run_complete"}
    assert set(TEXT_AND_END.dispatch) == {"text", "run_complete"}
    assert full.restrict(full.written) is full
    assert full.restrict(["text", "run_complete"]) is TEXT_AND_END  # built once


def test_restrict_keeps_a_type_stella_never_writes_apart() -> None:
    """A claimed name this stella never writes is known to the client, never written: one an
    older stella wrote is read as that stella defined it; one no stella writes, not at all
    (the claim warns about it: tests/conformance/checks/test_claims_versions.py)."""
    vocab = Vocabulary.default().restrict(["text", "txt", "complete"])
    assert vocab.known == {"text"} and vocab.recognized == {"text", "txt", "complete"}
    assert set(vocab.foreign) == {"complete"} and "txt" not in vocab.dispatch
    assert vocab.written == Vocabulary.default().written


def test_an_unclaimed_type_with_a_bad_body_is_inert_for_the_client() -> None:
    stream = (
        b'{"type":"tool_result","call_id":"c1","output":"bare string","duration_ms":1}\n'
        b'{"type":"text","text":"done"}\n'
        b'{"type":"run_complete","model":"m","cost_usd":0.1}\n'
    )
    assert decode_all(stream).summary.verdict == "reject"
    narrowed = decode_all(stream, TEXT_AND_END)
    assert narrowed.summary.verdict == "accept"
    assert narrowed.outcomes[0].kind is Kind.UNKNOWN
    assert narrowed.summary.unrecognized_types == ["tool_result"]
    # a type it does claim still has to fit
    bad_text = b'{"type":"text","text":3}\n'
    assert decode_all(bad_text, TEXT_AND_END).summary.verdict == "reject"


@FEW
@given(cases(TEXT_AND_END, mutations=["bad-body-missing-field", "bad-body-wrong-type"],
             min_mutations=1, max_mutations=1))  # fmt: skip
def test_bad_body_cases_come_from_claimed_types_only(case) -> None:  # type: ignore[no-untyped-def]
    assert case.expected.verdict == "reject"
    decoded = decode_all(case.stream, TEXT_AND_END)
    rejected = decoded.outcomes[-1]
    assert rejected.kind is Kind.REJECT and rejected.tag in TEXT_AND_END.known


@FEW
@given(cases(TEXT_AND_END, mutations=["unknown-type"], min_mutations=1, max_mutations=1))
def test_invented_unknown_names_never_collide_with_a_written_type(case) -> None:  # type: ignore[no-untyped-def]
    for line in case.marks["unknown-type"]:
        tag = json.loads(case.stream.splitlines()[line - 1])["type"]
        assert tag not in TEXT_AND_END.written


def test_bundled_vocabularies_load_by_name_alias_or_file(tmp_path: Path) -> None:
    assert Vocabulary.load(None) is Vocabulary.default()
    assert Vocabulary.load("default") is Vocabulary.default()
    older = Vocabulary.load("stella-older")
    assert Vocabulary.load("older") is older
    assert older.ident == "stella-older@pre-3379"
    with pytest.raises(VocabularyError, match="nor is it a bundled vocabulary"):
        Vocabulary.load("stella-newest")
    # a user's file wins over a bundled name
    mine = tmp_path / "older"
    mine.write_text(json.dumps({"oneOf": [{"properties": {"type": {"const": "ping"}}}]}))
    assert Vocabulary.load(mine).known == {"ping"}


def test_the_older_vocabulary_is_the_stella_before_turn_complete() -> None:
    older = Vocabulary.bundled("stella-older")
    assert "complete" in older.known and "turn_complete" not in older.known
    assert older.turn_boundary == "complete"
    assert "run_complete" in older.known
    assert not older.archived  # a scope-less stage is this stella's normal stage
    assert older.misfit("stage", {"type": "stage", "name": "triage"}) is None
    assert older.misfit("text", older.normalize("text", {"type": "text", "delta": "x"})) is None


def test_the_older_vocabulary_reads_the_recorded_older_stream(upstream_dir: Path) -> None:
    data = (upstream_dir / "from_a_newer_stella.older.jsonl").read_bytes()
    older = decode_all(data, Vocabulary.bundled("stella-older")).summary
    assert older.verdict == "accept"
    assert older.unrecognized_types == ["holographic_verdict", "quantum_reticulation"]
    assert older.turns_completed == 1  # `complete` closed the turn
    assert older.stages == {"turn": ["triage", "execute", "complete"], "run": []}
    assert older.final_text == "Made the change."  # `text` spelled with `delta`
    # today's vocabulary reads the same bytes as mostly unrecognized
    today = decode_all(data).summary
    assert today.verdict == "accept"
    assert "complete" in today.unrecognized_types and "stage" in today.unrecognized_types
    assert today.turns_completed == 0


@FEW
@given(st.data())
def test_runs_of_the_older_stella_close_turns_with_complete(data) -> None:  # type: ignore[no-untyped-def]
    older = Vocabulary.bundled("stella-older")
    run = data.draw(runs(older, failed=False))
    tags = [e["type"] for e in run.events]
    assert "turn_complete" not in tags and "complete" in tags
