"""The trace journal: its reader, the eight checks, their generators and fixtures, the CLI.

Every check is proven twice: by its one-defect fixture (the hand-written expectation
names the check that fails and the seq where it breaks) and by generated journals with
one injected defect (the defect is found, and nothing else is). The golden journal and
generated valid journals pass every check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kit, kit_inline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stella_conform.conformance.checks.trace import (
    LISTED_IN_FACT,
    LISTED_IN_MESSAGE,
    NAME_CHARS,
    TRACE_CHECK_IDS,
    grade_journal,
    grade_journal_lines,
    split_journal,
)
from stella_conform.conformance.checks.trace_keys import MEMORY
from stella_conform.generators.journals import (
    DEFECTS,
    READER_VARIANTS,
    defective_journals,
    journal_cases,
    journals,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir, iter_trace_fixtures
from stella_conform.oracle.journal import TYPES_KEPT, read_journal

TRACE_DIR = bundled_fixtures_dir() / "trace"
FIXTURES_DIR = bundled_fixtures_dir()
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("memory", [MEMORY, 0], ids=["in-memory", "on-disk"])
@pytest.mark.parametrize("fixture", list(iter_trace_fixtures()), ids=lambda f: f.name)
def test_fixture_expectations_agree_with_the_reader_and_the_checks(
    fixture: object, memory: int
) -> None:
    """On disk: every id the checks remember kept in their on-disk tables from the first."""
    expect = fixture.expect  # type: ignore[attr-defined]
    report = grade_journal(fixture.data, memory=memory)  # type: ignore[attr-defined]
    for key in ("verdict", "rejected_line", "known_events", "unrecognized_events",
                "torn_final_line"):  # fmt: skip
        if key in expect:
            assert report.reading[key] == expect[key], key
    if "checks" not in expect:
        assert report.exit_code == 2  # unreadable: no check runs
        return
    assert {r.id: r.outcome for r in report.results} == expect["checks"]
    assert report.crashed == expect["crashed"]
    for check_id, seqs in expect.get("failing_seq", {}).items():
        result = next(r for r in report.results if r.id == check_id)
        assert [e.seq for e in result.evidence] == seqs


def test_every_check_has_a_fixture_that_fails_exactly_it() -> None:
    failing: dict[str, list[str]] = {}
    for fixture in iter_trace_fixtures():
        checks = fixture.expect.get("checks", {})
        bad = [c for c, outcome in checks.items() if outcome == "fail"]
        if len(bad) == 1:
            failing.setdefault(bad[0], []).append(fixture.name)
    assert set(failing) == set(TRACE_CHECK_IDS)
    golden = json.loads((TRACE_DIR / "golden.expect.json").read_text())
    assert set(golden["checks"].values()) == {"pass"}  # not one skip: golden sees everything


@SETTINGS
@given(journals())
def test_generated_valid_journals_pass_every_check(journal: object) -> None:
    report = grade_journal(journal.to_bytes())  # type: ignore[attr-defined]
    assert report.readable
    failed = {r.id: [e.message for e in r.evidence] for r in report.results if r.outcome == "fail"}
    assert not failed
    assert report.crashed == (not journal.ended)  # type: ignore[attr-defined]


@pytest.mark.parametrize("check_id", TRACE_CHECK_IDS)
def test_an_injected_defect_is_found_and_nothing_else(check_id: str) -> None:
    @SETTINGS
    @given(defective_journals(check_id))
    def found(journal: object) -> None:
        report = grade_journal(journal.to_bytes())  # type: ignore[attr-defined]
        assert report.readable, report.reading["reason"]
        failed = {r.id for r in report.results if r.outcome == "fail"}
        assert failed == {check_id}, [r.to_json() for r in report.results if r.outcome == "fail"]
        evidence = next(r for r in report.results if r.id == check_id).evidence
        assert evidence and all(e.message for e in evidence)

    found()


@SETTINGS
@given(st.one_of(journals(), *(defective_journals(check_id) for check_id in TRACE_CHECK_IDS)))
def test_a_journal_grades_alike_with_its_ids_in_memory_or_on_disk(journal: object) -> None:
    data = journal.to_bytes()  # type: ignore[attr-defined]
    assert grade_journal(data, memory=0).to_json() == grade_journal(data).to_json()


def test_there_is_one_defect_per_check() -> None:
    assert tuple(DEFECTS) == TRACE_CHECK_IDS


@SETTINGS
@given(st.data())
def test_reader_variants_read_as_their_name_says(data: st.DataObject) -> None:
    variant = data.draw(st.sampled_from(READER_VARIANTS))
    case = data.draw(journal_cases((variant,)))
    journal = read_journal(case.data)
    rejecting = variant in ("bad-body", "corrupt-line")
    assert journal.verdict == ("reject" if rejecting else "accept"), journal.reason
    assert journal.torn_final_line == (variant == "torn-tail")
    if variant == "unknown-event":
        assert journal.unrecognized_events > 0


# ------------------------------------------------------------------ the CLI


def test_trace_check_exit_codes_and_json(tmp_path: Path) -> None:
    golden = kit("trace", "check", str(TRACE_DIR / "golden.jsonl"))
    assert golden.returncode == 0, golden.stderr
    assert "every check passes" in golden.stdout
    broken = kit("trace", "check", "--json", str(TRACE_DIR / "phantom_tool_call.jsonl"))
    assert broken.returncode == 1
    doc = json.loads(broken.stdout)
    assert doc["format"] == "stella-conform/trace-report/1" and doc["exit_code"] == 1
    pairing = next(c for c in doc["checks"] if c["id"] == "T.turn-loop-pairing")
    assert pairing["outcome"] == "fail" and pairing["evidence"][0]["seq"] == 8
    crashed = kit("trace", "check", "--json", str(TRACE_DIR / "crash_without_end.jsonl"))
    assert crashed.returncode == 0 and json.loads(crashed.stdout)["crashed"] is True
    unreadable = kit_inline("trace", "check", str(TRACE_DIR / "reader_bad_body.jsonl"))
    assert unreadable.returncode == 2 and "line 5" in unreadable.stderr
    missing = kit_inline("trace", "check", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "not found" in missing.stderr
    piped = kit("trace", "check", "-", stdin=(TRACE_DIR / "resume_lost_work.jsonl").read_bytes())
    assert piped.returncode == 1 and "work lost" in piped.stdout


def test_an_integral_float_in_a_journal_is_an_error_that_says_why() -> None:
    """integral-float is a reading of the stream and the envelope, whose
    sources part (the wire schema's dialect, JSON.parse, jq by value); the journal's one typed
    source is its Rust declaration (serde_json: a float is no u64), so "seq":2.0 is unreadable
    under every reading. trace check says so beyond "must be integer, got number" (of
    2.0), and the register's title names the inputs the reading is of, not the journal."""
    from stella_conform.oracle.readings import BY_ID

    golden = (TRACE_DIR / "golden.jsonl").read_bytes()
    assert b'"seq":2,' in golden
    out = kit("trace", "check", "-", stdin=golden.replace(b'"seq":2,', b'"seq":2.0,'))
    assert out.returncode == 2 and "unreadable at line 2" in out.stderr, out.stderr
    assert "field 'seq' must be integer, got number (an integral float: " in out.stderr
    assert "integral-float is a reading of the stream and the envelope, not of the journal" in (
        out.stderr
    )
    fraction = kit("trace", "check", "-", stdin=golden.replace(b'"seq":2,', b'"seq":2.5,'))
    assert fraction.returncode == 2 and "integral float" not in fraction.stderr
    assert read_journal(golden.replace(b'"seq":2,', b'"seq":2.0,')).rejected_line == 2
    title = BY_ID["integral-float"].title
    assert "in the stream or an envelope" in title and "not the trace journal" in title


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the journal is empty"),
        (b"\n  \n", "the journal is empty"),
        (b'{"seq":1,"event":"sess', "no journal entry"),
        (b'{"a":1}\n{"b":2}\n', 'not a trace journal: no line has a "seq" or an "event"'),
        (
            (FIXTURES_DIR / "minimal_run.jsonl").read_bytes(),
            "it looks like a stella event stream (read those with: stella-conform decode FILE)",
        ),
    ],
)
def test_trace_check_on_what_is_not_a_journal_is_one_line_and_exit_2(
    data: bytes, message: str
) -> None:
    out = kit("trace", "check", "-", stdin=data)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    as_json = kit("trace", "check", "--json", "-", stdin=data)
    assert as_json.returncode == 2 and message in as_json.stderr


def test_the_fake_stella_documents_itself() -> None:
    fake = Path(sys.executable).parent / "stella-conform-fake-stella"
    for flag in ("--help", "-h"):
        out = subprocess.run([str(fake), flag], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stderr == ""
        assert out.stdout.startswith("usage: stella-conform-fake-stella")
        for setting in ("STELLA_FAKE_SCENARIO", "STELLA_FAKE_LOG", "STELLA_FAKE_PACE_MS"):
            assert setting in out.stdout


# ------------------------------------------------------------------ a journal of any size


def _line(seq: int, event: str, **body: object) -> str:
    entry = {"seq": seq, "at": "2026-11-01T10:00:01Z", "session": "s", "event": event, **body}
    return json.dumps(entry)


def _journal(*events: tuple[str, dict[str, object]]) -> bytes:
    lines = [_line(1, "session_start", agent="a", harness="h")]
    lines += [_line(n, event, **body) for n, (event, body) in enumerate(events, 2)]
    return ("\n".join(lines) + "\n").encode()


def test_many_open_calls_are_counted_past_the_ones_named() -> None:
    """A crash with 150 calls open names the first 100 (in order) and counts the rest; a
    prompt over 30 unresolved calls names 20: a journal of millions stays a short report."""
    ids = [f"c{n:03d}" for n in range(150)]
    crashed = grade_journal(_journal(("model_response", {"tool_calls": ids})))
    facts = next(r for r in crashed.results if r.id == "T.turn-loop-pairing").facts
    assert facts["open_at_crash"] == sorted(ids)[:LISTED_IN_FACT]
    assert facts["open_at_crash_not_listed"] == 150 - LISTED_IN_FACT
    prompt = {"budget_tokens": 1, "declared_total_tokens": 0, "frames": []}
    late = grade_journal(
        _journal(("model_response", {"tool_calls": ids[:30]}), ("prompt_assembled", prompt))
    )
    (evidence,) = next(r for r in late.results if r.id == "T.turn-loop-pairing").evidence
    named = ", ".join(sorted(ids[:30])[:LISTED_IN_MESSAGE])
    assert evidence.message == (
        f"prompt_assembled with call(s) {named}, … and {30 - LISTED_IN_MESSAGE} more "
        "still unresolved"
    )
    resumed = grade_journal(
        _journal(("model_response", {"tool_calls": ids}), ("resume", {"last_seq_seen": 2}))
    )
    facts = next(r for r in resumed.results if r.id == "T.turn-loop-pairing").facts
    assert facts["orphaned_by_resume"] == sorted(ids)[:LISTED_IN_FACT]
    assert facts["orphaned_by_resume_not_listed"] == 150 - LISTED_IN_FACT


def test_a_long_id_is_cut_in_its_evidence() -> None:
    """A message quotes at most NAME_CHARS of an id: a thousand pieces of evidence, each
    quoting a megabyte id, would hold a gigabyte."""
    effect = "e" * 1_000_000
    data = _journal(
        ("side_effect", {"effect_id": effect, "kind": "k"}),
        ("side_effect", {"effect_id": effect, "kind": "k"}),
    )
    result = next(r for r in grade_journal(data).results if r.id == "T.effect-exactly-once")
    (evidence,) = result.evidence
    assert evidence.seq == 3 and len(evidence.message) < NAME_CHARS + 200
    assert f"(cut at {NAME_CHARS} of {len(repr(effect))} characters)" in evidence.message


def test_a_streamed_journal_lists_the_first_unrecognized_names_and_counts_the_rest() -> None:
    """Each line's name is counted; the first TYPES_KEPT distinct names are listed, the
    lines of the rest counted (as decode's bounded summary does); a journal read whole
    (the one graded by the J. checks) lists them all."""
    names = [f"x{n:05d}" for n in range(TYPES_KEPT + 200)]
    data = _journal(*((name, {}) for name in names))
    streamed = grade_journal_lines(split_journal(data)).reading
    assert streamed["unrecognized_events"] == len(names)
    assert streamed["unrecognized_types"] == names[:TYPES_KEPT]
    assert streamed["cut"] == {"unrecognized_types": 200}
    whole = read_journal(data).summary()
    assert whole["unrecognized_types"] == names and "cut" not in whole
    out = kit("trace", "check", "-", stdin=data)
    assert "x00999, … and 200 more line(s) of names not listed)" in out.stdout, out.stdout
