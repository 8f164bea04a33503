"""``replay`` without ``--check`` judges everything a stream case's expectation holds, and
``corpus expect`` writes that expectation from the reference decoder.

A replay that judged the verdict alone passed a client that read a line as the wrong type
or folded a text's line separators: the line table showed the mismatch, and the command
still exited 0. Now each line the client reports, and each summary field the expectation
names that the client computes, must agree with one conforming reading too.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from conftest import ADAPTERS, PY_REFERENCE, kit, kit_inline

from stella_conform.oracle.corpus import bundled_fixtures_dir

PY = sys.executable
FIXTURES = bundled_fixtures_dir()
FOLDS = (PY, str(ADAPTERS / "broken" / "final_text_folds_line_separators.py"))
GUESSES = (PY, str(ADAPTERS / "broken" / "guesses_from_name.py"))
MERGES_SCOPES = (PY, str(ADAPTERS / "broken" / "dashboard_merges_stage_scopes.py"))


def _judgment(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("judgment:"))


def test_a_wrong_summary_field_fails_a_replay_without_check(tmp_path: Path) -> None:
    out = kit(
        "replay", "fixture:line_separators_in_strings", "--mode", "report", "--", *FOLDS,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "expected: accept\nclient:   accept" in out.stdout  # the verdict is right
    assert _judgment(out.stdout).startswith("judgment: fail: final_text: expected")
    assert "≠ final_text:" in out.stdout


def test_a_line_read_as_the_wrong_type_fails_a_replay_without_check(tmp_path: Path) -> None:
    out = kit(
        "replay", "fixture:guessable_unknown_names", "--mode", "report", "--", *GUESSES,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "line 2: 'text_v2' is unknown; client read it known as 'text'" in out.stdout


def test_the_reference_client_agrees_with_every_fixture_in_full(tmp_path: Path) -> None:
    for name in ("line_separators_in_strings", "guessable_unknown_names", "archived_complete"):
        out = kit("replay", f"fixture:{name}", "--mode", "report", "--", *PY_REFERENCE)
        assert out.returncode == 0, out.stdout + out.stderr
        assert _judgment(out.stdout) == "judgment: pass"


def test_corpus_expect_writes_what_replay_and_corpus_check_read(tmp_path: Path) -> None:
    case = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "line_separators_in_strings.jsonl", case)
    before = case.read_bytes()
    wrote = kit("corpus", "expect", str(case), "--rule", "R1", "--description", "mine")
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    expect = tmp_path / "mine.expect.json"
    assert case.read_bytes() == before  # the stream is not rewritten
    doc = json.loads(expect.read_text(encoding="utf-8"))
    bundled = json.loads((FIXTURES / "line_separators_in_strings.expect.json").read_text())
    for key in ("verdict", "rejected_line", "final_text", "texts", "terminator"):
        assert doc[key] == bundled[key], key
    assert doc["description"] == "mine" and doc["rules"] == ["R1"]
    assert kit("corpus", "check", str(tmp_path)).returncode == 0
    # replay --check reads it (a case without one is refused: it needs its expectation)
    checked = kit(
        "replay", str(case), "--check", "R1.lines-end-only-at-newline", "--mode", "report",
        "--", *PY_REFERENCE,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # an expectation file is never replaced unless asked
    again = kit_inline("corpus", "expect", str(case))
    assert again.returncode == 2 and "--force" in again.stderr
    assert kit("corpus", "expect", "--force", str(case)).returncode == 0
    refused = kit_inline("corpus", "expect", str(case), "--force", "--rule", "R9")
    assert refused.returncode == 2 and "'R9'" in refused.stderr


def test_replay_judges_the_fields_the_expectation_holds(tmp_path: Path) -> None:
    """A hand-written expectation that leaves ``stages`` out is one that does not ask for
    them: a dashboard that merges the two stage scopes passes it; with the field in (as
    ``corpus expect`` writes it), it fails."""
    case = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "stage_scopes_interleaved.jsonl", case)
    assert kit("corpus", "expect", str(case)).returncode == 0
    expect = tmp_path / "mine.expect.json"
    full = kit("replay", str(case), "--mode", "report", "--", *MERGES_SCOPES)
    assert full.returncode == 1, full.stdout + full.stderr
    assert _judgment(full.stdout).startswith("judgment: fail: stages: expected")
    doc = json.loads(expect.read_text(encoding="utf-8"))
    del doc["stages"]
    expect.write_text(json.dumps(doc), encoding="utf-8")
    narrow = kit("replay", str(case), "--mode", "report", "--", *MERGES_SCOPES)
    assert narrow.returncode == 0, narrow.stdout + narrow.stderr
    assert "stages" not in narrow.stdout and _judgment(narrow.stdout) == "judgment: pass"


def test_an_expectation_that_disagrees_with_the_decoder_is_warned_about(tmp_path: Path) -> None:
    case = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "minimal_run.jsonl", case)
    assert kit("corpus", "expect", str(case)).returncode == 0
    expect = tmp_path / "mine.expect.json"
    doc = json.loads(expect.read_text(encoding="utf-8"))
    doc["final_text"] = "Goodbye."
    expect.write_text(json.dumps(doc), encoding="utf-8")
    out = kit("replay", str(case), "--mode", "report", "--", *PY_REFERENCE)
    assert out.returncode == 0, out.stdout + out.stderr  # the decoder's reading is judged
    assert 'final_text: expected "Goodbye.", decoder says "Hello."' in out.stderr


def test_a_journal_replayed_without_check_is_refused_before_its_client_starts() -> None:
    """A trace journal is a ``.jsonl`` too, but its expectation is no stream's: replayed
    without ``--check`` it is a usage error naming the option (it was judged as a stream)."""
    out = kit_inline(
        "replay", "fixture:trace/crash_without_end", "--mode", "report", "--", *PY_REFERENCE
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no stream case" in out.stderr and "--check ID" in out.stderr


def test_corpus_expect_names_a_hostile_file_inertly(tmp_path: Path) -> None:
    """A stream's name is outside text: its escape sequences are shown, not obeyed, and no
    line of the output starts a workflow command."""
    case = tmp_path / "\x1b]52;c;aGk=\x07\n::error::x.jsonl"
    shutil.copy(FIXTURES / "minimal_run.jsonl", case)
    out = kit("corpus", "expect", case.name, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert not [line for line in out.stdout.splitlines() if line.lstrip().startswith("::")]
    assert case.with_name(case.name.removesuffix(".jsonl") + ".expect.json").is_file()
