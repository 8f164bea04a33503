"""Aliases stella's wire schema names only in its descriptions: learnt, decoded (reading A
of ``learnt-alias``, as stella does), and a client of the schema's keywords conforming too
(reading B).  Needs the real schema (skips without it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client, resolve_client
from stella_conform.conformance.suite import SuiteConfig, run_check, shared_sessions
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.oracle.decoder import Kind
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.learnt import learn
from stella_conform.schemas.vocabulary import Vocabulary

FIXTURE = bundled_fixtures_dir() / "learnt_aliases.jsonl"


def test_the_schema_s_descriptions_name_eight_aliases_and_three_open_enums(
    wire_schema: Path,
) -> None:
    learnt = {
        (a.kind, a.where, a.name, a.legacy) for a in learn(json.loads(wire_schema.read_text()))
    }
    assert learnt == {
        ("value", "ModelCallRole", "verdict", "judge"),
        ("field", "ProofStep", "verifier", "judge"),
        ("type", "oneOf[27]", "verdict", "judge_verdict"),
        ("value", "LadderRung", "unverified", "model_judge"),
        ("value", "LadderRung", "unverified", "model_verdict"),
        ("value", "LadderRung", "unverified", "heuristic_fallback"),
        ("bool", "FlipOutcome", "unobserved", "bool"),
        ("field", "LadderSnapshot", "flip", "flip_achieved"),
        # enums that read a value they do not list as `other`
        ("other", "ErrorClass", "other", "*"),
        ("other", "BlockKind", "other", "*"),
        ("other", "CacheZone", "other", "*"),
    }
    assert not Vocabulary.default().learnt  # the kit's own schema names none


def test_every_line_of_the_fixture_needs_one_and_is_read_both_ways(wire_schema: Path) -> None:
    """Each line alone: stella (A) reads it; the schema's keywords (B) refuse it, or leave
    the old event name unrecognized, and the kit reads it that way too (not as a schema
    error, "must be 'unknown'")."""
    vocab = Vocabulary.from_wire_schema(wire_schema)
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    needing = [line for line in lines if read_stream(line, vocab).touched]
    assert len(needing) == 10  # three roles, an assurance step, five ladders, an old type
    for line in needing:
        readings = read_stream(line, vocab)
        assert readings.touched == {"learnt-alias"}, line
        assert readings.default.summary.verdict == "accept", (line, readings.default.summary)
        (other,) = readings.alternatives
        old_type = b'"judge_verdict"' in line
        assert other.summary.verdict == ("accept" if old_type else "reject"), line
        if old_type:
            (outcome,) = [o for o in readings.default.outcomes if o.kind is Kind.KNOWN]
            assert outcome.tag == "verdict"  # the type it names today
            assert other.summary.unrecognized_types == ["judge_verdict"]
        else:
            assert "alias the wire schema's descriptions name" in str(other.summary.reason)


def test_a_learnt_alias_beside_an_integral_float_or_a_bad_stamp_is_read(wire_schema: Path) -> None:
    """The tolerant fit (the alias, reading A) is tried beside the other readings, not on
    the body as written only: a line needing an alias and 4200.0 read as 4200, or the alias
    and its bad stamp dropped, fits, so a client that knows the alias, as stella does, and
    takes B at the other point is not failed."""
    vocab = Vocabulary.from_wire_schema(wire_schema)
    line = FIXTURE.read_bytes().splitlines(keepends=True)[1]  # step_usage, "role":"judge"
    assert b'"role":"judge"' in line and b'"duration_ms":40,' in line
    floats = line.replace(b'"duration_ms":40,', b'"duration_ms":40.0,')
    stamp = line.replace(b'"role":"judge"}', b'"role":"judge","ts":-5}')
    both = floats.replace(b'"role":"judge"}', b'"role":"judge","ts":-5}')
    for stream, taken in (
        (floats, {"integral-float"}),
        (stamp, {"ts-out-of-range"}),
        (both, {"integral-float", "ts-out-of-range"}),
    ):
        readings = read_stream(stream, vocab)
        assert readings.default.summary.verdict == "reject", stream
        assert "learnt-alias" in readings.touched
        accepting = [a.taken for a in readings.alternatives if a.summary.verdict == "accept"]
        assert accepting == [frozenset(taken)], (stream, accepting)  # the alias read, as A
    fraction = both.replace(b"40.0", b"40.5")  # no reading reads a fraction as a count
    assert not read_stream(fraction, vocab).alternatives


@pytest.mark.slow
def test_a_client_of_the_schema_s_keywords_passes_on_every_seed(
    tmp_path: Path, wire_schema: Path
) -> None:
    """schema_client.py validates each line with jsonschema against the wire schema: the
    keywords' side at every point (learnt-alias, ts-null, prose-constraint, ... B)."""
    argv = resolve_client(
        (
            sys.executable,
            str(ADAPTERS / "python" / "schema_client.py"),
            "--schema",
            str(wire_schema),
        )
    )
    took = 0
    with shared_sessions():
        for seed in range(20):
            config = SuiteConfig(
                Client(argv, "persistent", timeout=10.0),
                examples=3,
                seed=seed,
                database_dir=None,
                failures_dir=tmp_path / "failures",
                wire_schema=str(wire_schema),
                shrink_budget=0,
            )
            for check_id in ("R4.legacy-spelling-fits", "R1.valid-runs-accepted"):
                result = run_check(BY_ID[check_id], config)
                assert result.outcome == "pass", (seed, check_id, result.message)
                took += result.readings.get("learnt-alias=B", 0)
    assert took >= 20  # the fixture's learnt alias, read as the keywords read it, every seed


def test_the_self_describing_pair_changes_only_the_spelling() -> None:
    """R4.legacy-spelling-fits' paired stream keeps lone surrogates escaped (raw they are
    not UTF-8), writes no ``Infinity`` (not JSON) and keeps a line's CR, so a client can
    read the pair differently for no other reason than the spelling."""
    from stella_conform.conformance.checks import GradedCase
    from stella_conform.conformance.kinds.pairs import self_describing

    end = b'{"type":"run_complete","model":"m","cost_usd":0}\n'
    legacy = b'{"type":"text","delta":"a\\ud800b","n":1}\r\n'
    both = b'{"type":"text","delta":"old","text":"new"}\n'
    paired = self_describing(GradedCase("c", legacy + both + end, "generated"))
    assert paired is not None
    first, second, last = paired.split(b"\n")[:3]
    paired.decode("utf-8")  # a lone surrogate stays an escape
    assert first.endswith(b"\r") and json.loads(first) == {
        "type": "text",
        "text": "a\ud800b",
        "n": 1,
    }
    assert list(json.loads(first)) == ["type", "text", "n"]  # where the legacy name stood
    assert json.loads(second) == {"type": "text", "text": "new"}
    assert last + b"\n" == end  # a line without a legacy spelling is left as it came
    # an escaped U+2028 written back raw would be a line end to str.splitlines()
    escaped = b'{"type":"text","delta":"a\\u2028b"}\n'
    assert b"\\u2028" in (self_describing(GradedCase("c", escaped + end, "generated")) or b"")
    raw = '{"type":"text","delta":"a\u2028b"}\n'.encode()
    assert "\u2028".encode() in (self_describing(GradedCase("c", raw + end, "generated")) or b"")
    beyond = legacy.replace(b'"n":1', b'"n":1e400')  # read as infinity: no JSON for it
    assert self_describing(GradedCase("c", beyond + end, "generated")) is None
    # -0 in an integer field is read as 0 and would be written back as 0: a client taking
    # reading B of negative-zero rejects the case's line and accepts the pair's, a false
    # fail of R4.legacy-spelling-fits; so the case is not paired
    zero = b'{"type":"text","delta":"a","ts":-0}\n'
    assert self_describing(GradedCase("c", zero + end, "generated")) is None
    spelled = b'{"type":"text","delta":"a -0","ts":0,"x":-0.0}\n'  # no -0 integer: paired
    assert self_describing(GradedCase("c", spelled + end, "generated")) is not None
