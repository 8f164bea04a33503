"""Claims that never crash a run, and that can name any stella's types.

A vocabulary says which stella wrote the streams; the claims say what the client knows.
So a client may claim ``complete`` (an older stella's turn boundary) and ``turn_complete``
(today's) under either bundled vocabulary; only a name no bundled vocabulary writes is
warned about.  Whatever the claims, every check either grades, skips with its reason, or
fails with its reason: no combination of claims and vocabulary aborts a run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import PY_REFERENCE, REPO, kit
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from stella_conform.conformance.checks import BY_ID, CATALOGUE
from stella_conform.conformance.checks.claims import COMPUTES, READS, Claims, claims_from
from stella_conform.conformance.suite import check_strategy, graded_case, not_drawable
from stella_conform.errors import SetupError
from stella_conform.generators.mutations import MUTATIONS, Stream, applicable, json_copy
from stella_conform.generators.runs import runs
from stella_conform.oracle.decoder import decode_all
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.vocabulary import Vocabulary, bundled_names, bundled_types

VOCABULARIES = tuple(bundled_names())
#: Every type some stella writes, two names none does, and an older stella's boundary.
NAMES = sorted(bundled_types() | {"txt", "quantum_reticulation"})


def _subset(names: list[str] | tuple[str, ...]) -> st.SearchStrategy[list[str] | None]:
    return st.none() | st.lists(st.sampled_from(names), min_size=1, unique=True)


@st.composite
def claimed(draw: st.DrawFn) -> tuple[Vocabulary, Claims]:
    """A bundled vocabulary and random claims over it (any names, any parts, any fields)."""
    stella = Vocabulary.bundled(draw(st.sampled_from(VOCABULARIES)))
    claims = claims_from(
        knows=draw(_subset(NAMES)),
        reads=draw(_subset(READS)),
        computes=draw(_subset(COMPUTES)),
        summary_only=draw(st.booleans()),
        vocab=stella,
        where="test",
    )
    return stella, claims


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(claimed(), st.data())
def test_no_claims_crash_a_check(drawn: tuple[Vocabulary, Claims], data: st.DataObject) -> None:
    """For random claims every check grades, skips or fails with a reason, and a check that
    grades can draw its cases and read them under every reading."""
    stella, claims = drawn
    vocab = claims.vocabulary(stella)
    assert claims.describe(stella, CATALOGUE) is not None
    graded = []
    for check in CATALOGUE:
        if claims.unmet(check, vocab, "persistent") or claims.skip_reason(check, vocab):
            continue
        if not_drawable(check, vocab) is None and check_strategy(check, vocab) is not None:
            graded.append(check)
    for check in data.draw(st.lists(st.sampled_from(graded), max_size=1)) if graded else []:
        strategy = check_strategy(check, vocab)
        assert strategy is not None
        case = graded_case(data.draw(strategy), vocab, claims.reads)
        assert case.reading() is not None
        if case.kind == "stream":
            assert case.readings.default is not None


def once(body: Callable[[st.DataObject], None]) -> None:
    """Run ``body(data)`` in one Hypothesis example (draws without a strategy to find)."""

    @settings(max_examples=1, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def example(data: st.DataObject) -> None:
        body(data)

    example()


@pytest.mark.parametrize("name", VOCABULARIES)
def test_every_mutation_that_says_it_can_be_made_is_made(name: str) -> None:
    """Each mutation, for a client knowing one type (this stella's, another's, or none a
    stella writes): either it says it cannot be made, or it is made without an error (a
    narrow ``--knows`` crashed the whole run in a generator's "nothing to choose from")."""
    stella = Vocabulary.bundled(name)
    run = find(runs(stella), lambda r: len(r.events) > 3, settings=settings(database=None))
    made: list[tuple[str, str]] = []

    def apply_all(data: st.DataObject, tag: str) -> None:
        vocab = stella.restrict({tag})
        for mutation_id, mutation in MUTATIONS.items():
            if applicable(mutation_id, vocab):
                mutation.apply(data.draw, Stream.of([json_copy(e) for e in run.events]), vocab)
                made.append((tag, mutation_id))

    for tag in [*sorted(stella.written), "complete", "turn_complete", "txt"]:
        expected = len(made) + sum(applicable(m, stella.restrict({tag})) for m in MUTATIONS)
        once(lambda data, tag=tag: apply_all(data, tag))
        assert len(made) >= expected, f"{tag}: not every mutation was applied"


@pytest.mark.parametrize(
    ("knows", "check", "client"),
    [
        ("tool_start,reasoning,step_usage", "R3.unknown-type-inert", ("--", "true")),
        ("budget_tick", "R2.dispatch-on-type", ("--mode", "persistent", "--", *PY_REFERENCE)),
        ("complete", "R4.*", ("--", "true")),
    ],
)
def test_a_narrow_knows_grades_or_skips_instead_of_crashing(
    tmp_path: Path, knows: str, check: str, client: tuple[str, ...]
) -> None:
    """The run of the issue exited 3 with no report ("nothing to choose from")."""
    report = tmp_path / "r.json"
    out = kit(
        "run", "--knows", knows, "--only", check, "--examples", "3", "--no-database",
        "--json", str(report), *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode in (0, 1) and report.exists(), out.stdout + out.stderr
    for entry in json.loads(report.read_text())["checks"]:
        assert entry["outcome"] != "error", entry
        if entry["outcome"] == "skip":
            assert "no case graded" not in entry["message"], entry


def test_both_turn_boundaries_are_claimable_under_either_vocabulary() -> None:
    for name in VOCABULARIES:
        stella = Vocabulary.bundled(name)
        claims = claims_from(
            knows="text,complete,turn_complete,run_complete", reads=None, computes=None,
            summary_only=None, vocab=stella, where="test",
        )  # fmt: skip
        assert claims.warnings == ()
        vocab = claims.vocabulary(stella)
        assert {"complete", "turn_complete"} <= vocab.recognized
        assert vocab.turn_boundaries == {"complete", "turn_complete"}


def test_a_name_no_stella_writes_is_a_warning_not_an_error() -> None:
    claims = claims_from(
        knows="text,txt", reads=None, computes=None, summary_only=None,
        vocab=Vocabulary.default(), where="cli",
    )  # fmt: skip
    assert claims.knows == {"text", "txt"}
    (warning,) = claims.warnings
    assert "'txt'" in warning and "typo" in warning
    assert any(line.startswith("warning: ") for line in claims.describe(Vocabulary.default()))


def test_a_type_known_from_an_older_stella_is_read_as_that_stella_wrote_it() -> None:
    """archived_complete under today's vocabulary, for a client that knows both names:
    its ``complete`` is a known turn boundary, not an unrecognized event."""
    stream = (REPO / "fixtures" / "archived_complete.jsonl").read_bytes()
    stella = Vocabulary.default()
    both = stella.restrict({"stage", "text", "complete", "turn_complete", "run_complete"})
    summary = decode_all(stream, both).summary
    assert summary.turns_completed == 1 and "complete" not in summary.unrecognized_types
    today = decode_all(stream, stella.restrict({"stage", "text", "turn_complete"})).summary
    assert today.turns_completed == 0 and "complete" in today.unrecognized_types
    bad = stream.replace(b'"cost_usd":0.002', b'"cost_usd":"free"')
    assert read_stream(bad, both).default.summary.verdict == "reject"  # its body is checked
    assert read_stream(bad, stella).default.summary.verdict == "accept"  # unknown: inert
    assert BY_ID["D.turns-counted"].types == ("turn_complete", "complete")


# ------------------------------------------------------------------ what a field is read from


def _claims(stella: Vocabulary, knows: str, computes: str | None = None) -> Claims:
    return claims_from(
        knows=knows, reads=None, computes=computes, summary_only=None, vocab=stella, where="t"
    )


def test_a_field_computed_without_its_type_is_a_failure_with_the_reason() -> None:
    """A client that computes terminator and does not know run_complete: the bug of one
    waiting for `complete`, so the check fails with the reason rather than skipping on
    the claims."""
    stella = Vocabulary.default()
    terminator = BY_ID["D.run-terminator"]
    waits = _claims(stella, "text,complete,error", computes="terminator,final_text")
    unmet = waits.unmet(terminator, waits.vocabulary(stella), "persistent")
    assert unmet is not None
    message, needed = unmet
    assert needed == {"run_complete"} and "does not know run_complete" in message
    # not computing it is a skip, as before
    quiet = _claims(stella, "text,complete,error", computes="final_text")
    assert quiet.unmet(terminator, quiet.vocabulary(stella), "persistent") is None
    assert quiet.skip_reason(terminator, quiet.vocabulary(stella)) is not None
    # knowing both: graded
    both = _claims(stella, "text,run_complete,error", computes="terminator")
    assert both.unmet(terminator, both.vocabulary(stella), "persistent") is None
    assert both.skip_reason(terminator, both.vocabulary(stella)) is None


def test_a_field_is_computed_only_when_the_client_says_so_in_a_mode_that_reports() -> None:
    """Knows without computes does not mean every field is computed: that would fail a
    conforming client for fields it never claimed, and in exit mode, where it writes no
    summary at all, it would be false.  Both skip."""
    stella = Vocabulary.default()
    legacy = BY_ID["R4.legacy-spelling-fits"]
    tools = _claims(stella, "tool_start,tool_result")  # no computes claimed
    for mode in ("exit", "report", "persistent"):
        assert tools.unmet(legacy, tools.vocabulary(stella), mode) is None
    assert "does not know text" in (tools.skip_reason(legacy, tools.vocabulary(stella)) or "")
    said = _claims(stella, "tool_start,tool_result", computes="final_text")
    assert said.unmet(legacy, said.vocabulary(stella), "exit") is None  # no summary there
    assert said.unmet(legacy, said.vocabulary(stella), "report") is not None
    hello = _claims(stella, "error,run_complete,text")  # adapter-protocol.md's example hello
    for check_id in ("D.text-replaces-preview", "D.legacy-spellings-read", "D.stages-per-scope"):
        check = BY_ID[check_id]
        assert hello.unmet(check, hello.vocabulary(stella), "persistent") is None, check_id


def test_turns_are_read_from_this_stella_s_boundary_or_today_s() -> None:
    turns = BY_ID["D.turns-counted"]
    today, older = Vocabulary.default(), Vocabulary.bundled("stella-older")
    old_name = _claims(today, "text,complete,run_complete,error", computes="turns_completed")
    assert (
        old_name.unmet(turns, old_name.vocabulary(today), "report") is not None
    )  # today writes turn_complete
    modern = _claims(older, "text,turn_complete,run_complete,error", computes="turns_completed")
    # an archived complete is unknown to a modern client: nothing it computes needs it
    assert modern.unmet(turns, modern.vocabulary(older), "report") is None
    assert old_name.unmet(turns, old_name.vocabulary(older), "report") is None


def test_an_older_stella_s_stage_has_both_readings_for_a_client_of_today() -> None:
    """A stage without scope, written by the stella before scope existed: known as that
    stella wrote it (A), or an archived shape as today's vocabulary reads it (B)."""
    older = Vocabulary.bundled("stella-older")
    stream = b'{"type":"stage","name":"x"}\n{"type":"run_complete","model":"m","cost_usd":0}\n'
    readings = read_stream(stream, older)
    assert readings.touched == {"shape-archived-today", "scopeless-stage"}
    assert readings.default.summary.stages == {"turn": ["x"], "run": []}
    outcomes = {
        a.reading: (a.summary.verdict, a.summary.unrecognized_events) for a in readings.alternatives
    }
    assert outcomes == {
        "shape-archived-today": ("accept", 1),
        "scopeless-stage+shape-archived-today": ("reject", 0),
    }
    assert not read_stream(stream.replace(b'"x"', b'"x","scope":"run"'), older).touched


def test_one_matrix_grades_a_client_of_both_stellas_in_both_columns(tmp_path: Path) -> None:
    client = REPO / "adapters" / "python" / "both_versions_client.py"
    config = tmp_path / "matrix.toml"
    config.write_text(
        '[matrix]\nexamples = 2\nseed = 4\njobs = 2\n\n[[client]]\nname = "both"\n'
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(client))}]\n"
        'mode = "persistent"\n\n'
        '[[vocabulary]]\nname = "default"\n\n[[vocabulary]]\nname = "stella-older"\n'
    )
    out = kit("matrix", str(config), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads((tmp_path / "out" / "matrix.json").read_text())
    for cell in doc["cells"]:
        outcomes = {c["id"]: c["outcome"] for c in cell["report"]["checks"]}
        assert set(outcomes.values()) <= {"pass", "skip"}, (cell["vocabulary"], outcomes)
        assert outcomes["D.turns-counted"] == "pass"


def test_the_adapter_protocol_says_what_an_unknown_claimed_name_does() -> None:
    """docs/adapter-protocol.md says what an unknown claimed name does: a ``knows`` name no
    stella writes is a warning (claims may name any type), not exit 2."""
    stella = Vocabulary.default()
    typo = claims_from(
        knows="text,txet", reads=None, computes=None, summary_only=None, vocab=stella,
        where="hello",
    )  # fmt: skip
    assert typo.warnings and "typo" in typo.warnings[0]
    for kind in ("reads", "computes"):
        with pytest.raises(SetupError, match=f"unknown {kind} name"):
            claims_from(
                **{"knows": None, "reads": None, "computes": None, kind: "bogus"},
                summary_only=None, vocab=stella, where="hello",
            )  # fmt: skip
    doc = " ".join((REPO / "docs" / "adapter-protocol.md").read_text()
                   .split())  # fmt: skip
    assert "a name the kit does not know, here or there, is a set-up error" not in doc
    assert "An unknown `reads` or `computes` name, here or there, is a set-up error (exit 2)" in doc
    assert "one that no bundled vocabulary writes is a warning in the report" in doc


def test_a_fixture_is_read_anew_for_a_client_knowing_an_older_stella_s_type() -> None:
    """The fixture reading kept per run is keyed by every type a client knows, not only
    this stella's: otherwise a client knowing also ``complete`` would get the reading of
    one that does not (test_client_matrix's both-versions client would fail
    R3.unknown-counted when another client's run came first in its process)."""
    from stella_conform.conformance.suite import load_case

    path = REPO / "fixtures" / "archived_complete.jsonl"
    stella = Vocabulary.default()
    first = load_case(path, stella)
    both = load_case(path, stella.restrict(stella.written | {"complete"}))
    assert "complete" in first.expected.unrecognized_types
    assert "complete" not in both.expected.unrecognized_types
