"""`fuzz --seed-corpus`: real recordings as the runs cases start from; hostile files skipped.

The client below chokes on an event type only a real recording carries (no generator
writes it), so only a session seeded with that recording can find its bug.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, kit

from stella_conform.conformance.store.recordings import RECORDING_CAP, load, recorded_run
from stella_conform.schemas.vocabulary import Vocabulary

RECORDED_ONLY = "zz_recorded_only"
CHOKES = f"""
import os
import sys

sys.path.insert(0, {str(ADAPTERS / "python")!r})

from stella_reader import Adapter, Reader, main


class ChokingReader(Reader):
    def on_unknown(self, line, event):
        if event.get("type") == {RECORDED_ONLY!r}:
            raise RuntimeError("cannot handle a recorded-only event")
        return super().on_unknown(line, event)


class Choking(Adapter):
    reader_class = ChokingReader


if __name__ == "__main__":
    main(Choking)
"""
RECORDING = b"".join(
    json.dumps(e, separators=(",", ":")).encode() + b"\n"
    for e in (
        {"type": "stage", "name": "execute", "scope": "turn"},
        {"type": RECORDED_ONLY, "payload": {"spline": [1, 2, 3]}},
        {"type": "text", "text": "recorded words"},
        {"type": "turn_complete", "model": "m", "cost_usd": 0.01},
        {"type": "run_complete", "model": "m", "cost_usd": 0.01},
    )
)


def _hostile_folder(tmp_path: Path) -> Path:
    seeds = tmp_path / "recorded"
    seeds.mkdir()
    (seeds / "session.jsonl").write_bytes(RECORDING)
    (seeds / "copy-of-session.jsonl").write_bytes(RECORDING)  # read once
    os.mkfifo(seeds / "fifo.jsonl")  # would block a plain open() for ever
    (seeds / "zero.jsonl").symlink_to("/dev/zero")  # would never end
    with (seeds / "huge.jsonl").open("wb") as fh:
        fh.truncate(RECORDING_CAP + 1)
    (seeds / "torn.jsonl").write_bytes(RECORDING[:-9])
    (seeds / "bad.json").write_bytes(b'{"events": "not a list"}')
    (seeds / "README.md").write_text("not a recording")
    return seeds


def test_recordings_that_fit_are_read_and_hostile_files_skipped(tmp_path: Path) -> None:
    corpus = load([_hostile_folder(tmp_path)], Vocabulary.default())
    assert [r.recording for r in corpus.recordings] == ["copy-of-session.jsonl"]
    assert corpus.recordings[0].to_bytes() == RECORDING  # the real events, as recorded
    why = {Path(s.path).name: s.why for s in corpus.skipped}
    assert set(why) == {"fifo.jsonl", "zero.jsonl", "huge.jsonl", "torn.jsonl", "bad.json"}
    assert "FIFO" in why["fifo.jsonl"] and "symbolic link" in why["zero.jsonl"]
    assert "larger than" in why["huge.jsonl"] and "not a valid run" in why["torn.jsonl"]
    assert corpus.ignored == 1


@pytest.mark.upstream
def test_the_upstream_recording_fits(upstream_dir: Path) -> None:
    data = (upstream_dir / "from_a_newer_stella.older.jsonl").read_bytes()
    run = recorded_run(data, Vocabulary.default())
    assert run.to_bytes() == data  # every real body kept (unknown types, legacy spelling)


def test_duplicate_keys_do_not_fit() -> None:
    with pytest.raises(ValueError, match="written back"):
        recorded_run(RECORDING + b'{"type":"text","text":"a","text":"b"}\n', Vocabulary.default())


@pytest.mark.slow
def test_fuzz_finds_a_bug_only_a_recording_reaches_and_says_so(tmp_path: Path) -> None:
    client = tmp_path / "chokes.py"
    client.write_text(CHOKES)
    seeds = _hostile_folder(tmp_path)
    command = (sys.executable, str(client))
    only = ("--only", "R1.valid-runs-accepted")
    fuzz = ("fuzz", "--for", "10m", "--max-cases", "150", *only, "--stop-on-first")
    blind = tmp_path / "blind"
    blind.mkdir()
    without = kit(*fuzz, "--json", "r.json", "--", *command, cwd=blind)
    assert without.returncode == 0, without.stdout + without.stderr
    seeded = tmp_path / "seeded"
    seeded.mkdir()
    out = kit(*fuzz, "--seed-corpus", str(seeds), "--json", "r.json", "--", *command, cwd=seeded)
    assert out.returncode == 1, out.stdout + out.stderr
    for name in ("fifo.jsonl", "zero.jsonl", "huge.jsonl", "torn.jsonl", "bad.json"):
        assert f"warning: seed corpus: skipped {seeds / name}" in out.stderr
    assert "seed corpus: 1 recording(s) read" in out.stderr
    doc = json.loads((seeded / "r.json").read_text())
    found = doc["fuzz"]["failures"][0]
    assert found["recording"] == "copy-of-session.jsonl"
    assert "on the recording copy-of-session.jsonl" in out.stdout
    assert doc["fuzz"]["seed_corpus"]["recordings"] == 1
    # a run without the recordings cannot read that case (its choices name a recording
    # by its place in the list): it never reads it as another, nor deletes it
    run = ("run", "--mode", "persistent", *only, "--examples", "1", "--max-shrinks", "0")
    plain = kit(*run, "--", *command, cwd=seeded)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    # the run that replays it takes the same recordings: the very case is replayed
    same = str(seeds / "copy-of-session.jsonl")
    again = kit(*run, "--seed-corpus", same, "--", *command, cwd=seeded)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "recording copy-of-session.jsonl" in again.stdout


def test_cases_drawn_with_recordings_are_kept_under_keys_of_their_own() -> None:
    """Their choices name a recording by its place in the list: read without the same
    recordings they are other cases, so a run without them must not replay them (nor
    delete them from a shared database when they pass)."""
    from dataclasses import replace

    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.conformance.suite import SuiteConfig, database_key

    vocab = Vocabulary.default()
    plain = SuiteConfig(client=Client(argv=("client",), mode="persistent"))
    one = (recorded_run(RECORDING, vocab),)
    other = (recorded_run(RECORDING.replace(b"recorded words", b"other words"), vocab),)
    stream, envelope = BY_ID["R1.valid-runs-accepted"], BY_ID["E.unknown-keys-ignored"]
    seeded = database_key(stream, replace(plain, recordings=one))
    assert seeded != database_key(stream, plain)
    assert seeded == database_key(
        stream, replace(plain, recordings=(recorded_run(RECORDING, vocab),))
    )
    assert seeded != database_key(stream, replace(plain, recordings=other))
    # an envelope check's cases never start from a recording: its key stays
    assert database_key(envelope, replace(plain, recordings=one)) == database_key(envelope, plain)


@pytest.mark.slow
def test_a_recording_in_legacy_spellings_is_mutated_without_crashing(tmp_path: Path) -> None:
    """The mutations were written for generated runs (self-describing spellings); a real
    recording's legacy `delta` on a `text` must not crash the kit (a KeyError)."""
    from conftest import PY_REFERENCE

    fixture = ADAPTERS.parent / "fixtures" / "from_a_newer_stella.jsonl"
    assert b'"delta"' in fixture.read_bytes()
    out = kit(
        "fuzz", "--for", "10m", "--max-cases", "120", "--only", "R4.*", "--no-database",
        "--seed-corpus", str(fixture), "--json", "r.json", "--", *PY_REFERENCE, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["fuzz"]["cases"] == 120 and doc["fuzz"]["seed_corpus"]["recordings"] == 1


def test_one_folder_of_recordings_is_read_alike_by_seed_corpus_and_corpus_diff(
    tmp_path: Path,
) -> None:
    """One rule (recordings.folder_files) for ``corpus diff`` and ``--seed-corpus``: the
    same files read, the same skipped: a link or a FIFO in the folder is passed over by
    both, not a stop (exit 2) of one and read by the other."""
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(RECORDING)
    folder = tmp_path / "recorded"
    folder.mkdir()
    (folder / "session.jsonl").write_bytes(RECORDING)
    (folder / "link.jsonl").symlink_to(elsewhere)
    os.mkfifo(folder / "fifo.jsonl")
    reference = [sys.executable, str(ADAPTERS / "python" / "reference_client.py")]
    oracle = f"{sys.executable} {ADAPTERS / 'python' / 'stella_like_reader.py'}"
    ran = kit(
        "run", "--mode", "exit", "--examples", "1", "--only", "R1.valid-runs-accepted",
        "--seed-corpus", str(folder), "--no-database", "--", *reference, cwd=tmp_path,
    )  # fmt: skip
    diffed = kit(
        "corpus", "diff", str(folder), "--generated", "0", "--oracle", oracle, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert diffed.returncode == 0 and "1/1 agree" in diffed.stdout, diffed.stdout + diffed.stderr
    assert (
        "seed corpus: 1 recording(s) read (1 stream(s), 0 envelope(s)), 2 skipped"
        in ran.stdout + ran.stderr
    )

    def skipped(stderr: str) -> set[str]:
        return {line.split("skipped ", 1)[1] for line in stderr.splitlines() if "skipped " in line}

    assert skipped(ran.stderr) == skipped(diffed.stderr)
    assert {s.split(":")[0] for s in skipped(ran.stderr)} == {
        str(folder / "fifo.jsonl"),
        str(folder / "link.jsonl"),
    }


def test_files_past_the_cap_are_said_not_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of a folder past FILES_CAP are not dropped in silence."""
    from stella_conform.conformance.store import recordings

    monkeypatch.setattr(recordings, "FILES_CAP", 2)
    seeds = tmp_path / "recorded"
    seeds.mkdir()
    for index in range(5):
        (seeds / f"s{index}.jsonl").write_bytes(RECORDING)
    corpus = load([seeds], Vocabulary.default())
    assert [s.why for s in corpus.skipped] == ["3 more file(s) not looked at (at most 2)"]
