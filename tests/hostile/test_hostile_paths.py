"""Hostile paths: planted links, names that climb out of their folder, folders swapped
mid-run; the kit reads and writes only the files it means to, each once."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ADAPTERS
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    MEASURED_KIT,
    VALID,
    kit,
    no_leaks,
)

from stella_conform.oracle.corpus import bundled_fixtures_dir


def test_saving_a_failure_replaces_a_planted_link_and_never_writes_through_it(
    tmp_path: Path,
) -> None:
    from stella_conform.oracle.corpus import write_fixture
    from stella_conform.safe_files import write_atomic

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    failures = tmp_path / "failures"
    failures.mkdir()
    for name in ("case.jsonl", "case.expect.json", "report.json"):
        (failures / name).symlink_to(victim)
    write_fixture(failures, "case", VALID, {"format": "x"})
    write_atomic(failures / "report.json", "{}\n")
    assert victim.read_text() == "precious\n"
    for name in ("case.jsonl", "case.expect.json", "report.json"):
        assert not (failures / name).is_symlink() and (failures / name).is_file()
    assert sorted(p.name for p in failures.iterdir()) == [
        "case.expect.json", "case.jsonl", "report.json",
    ]  # fmt: skip  # no temporary file left


@pytest.mark.parametrize("name", ["../../x", "/etc", "..", "a/../../b", "\x1b[2J"])
def test_matrix_names_cannot_leave_the_failures_folder(tmp_path: Path, name: str) -> None:
    from stella_conform.conformance.matrix import ClientSpec, MatrixConfig, VocabularySpec
    from stella_conform.conformance.matrix.run import cell_suite_config

    failures = tmp_path / "failures"
    config = MatrixConfig([], [], tmp_path, failures_dir=failures)
    suite = cell_suite_config(config, ClientSpec(name, ("true",)), VocabularySpec(name))
    where = suite.failures_dir.resolve()
    assert where.is_relative_to(failures.resolve()) and where != failures.resolve()
    assert len(where.relative_to(failures.resolve()).parts) == 2


def test_corpus_export_force_deletes_only_what_it_wrote(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from stella_conform.cli import main

    corpus = tmp_path / "corpus"
    first = CliRunner().invoke(main, ["corpus", "export", str(corpus), "-n", "2"])
    assert first.exit_code == 0, first.output
    mine = corpus / "my-own.jsonl"
    mine.write_text("{}\n")
    again = CliRunner().invoke(main, ["corpus", "export", str(corpus), "-n", "1", "--force"])
    assert again.exit_code == 2 and "did not export (my-own.jsonl)" in again.stderr
    assert mine.read_text() == "{}\n" and len(list(corpus.glob("*.jsonl"))) == 3
    mine.unlink()
    again = CliRunner().invoke(main, ["corpus", "export", str(corpus), "-n", "1", "--force"])
    assert again.exit_code == 0 and len(list(corpus.glob("*.jsonl"))) == 1
    # a folder of fixtures the kit never exported (no manifest): --force refuses too
    (corpus / "corpus.json").unlink()
    refused = CliRunner().invoke(main, ["corpus", "export", str(corpus), "-n", "1", "--force"])
    assert refused.exit_code == 2 and "no manifest" in refused.stderr


@pytest.mark.parametrize("stream", ["../secret.jsonl", "/etc/hostname", "link.jsonl"])
def test_a_scenario_plays_only_files_in_its_folder(tmp_path: Path, stream: str) -> None:
    from stella_conform.conformance.suite import load_case
    from stella_conform.errors import SetupError
    from stella_conform.fake_stella import Scenario

    (tmp_path / "secret.jsonl").write_bytes(VALID)
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    path = folder / "s.scenario.json"
    path.write_text(json.dumps({"format": "stella-conform/scenario/1", "stream": stream}))
    with pytest.raises(SetupError, match="not a file in its folder"):
        load_case(path)
    with pytest.raises(ValueError, match="outside its folder"):
        Scenario.load(path)


def test_replay_plays_no_link_and_no_case_over_the_cap(tmp_path: Path) -> None:
    """A symlinked case file (to a 0600 file) is not played to the client, nor a 3 GiB one
    read into a MemoryError: both are one line and exit 2, the client never started."""
    from stella_conform.safe_files import CASE_CAP

    secret = tmp_path / "secret"
    secret.write_text('{"type":"text","text":"private"}\n')
    secret.chmod(0o600)
    link = tmp_path / "case.jsonl"
    link.symlink_to(secret)
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:
        fh.truncate(CASE_CAP + 1)
    marker = tmp_path / "started"
    client = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    for case, said in ((link, "is a symbolic link"), (big, f"is larger than {CASE_CAP} bytes")):
        out = kit("replay", str(case), "--", *client, timeout=60)
        assert out.returncode == 2 and said in out.stderr, out.stderr
        assert out.stderr.count("\n") == 1 and not marker.exists()


#: Sent ahead of :data:`MEASURED_KIT`: as soon as the kit first opens the case file, a
#: link to a 0600 file takes the case's place on disk (the kit's open file is untouched).
SWAP_AFTER_FIRST_OPEN = """
    import os
    _open, _swapped = os.open, []
    def _swapping_open(path, flags, *args, **kwargs):
        fd = _open(path, flags, *args, **kwargs)
        if not _swapped and os.fspath(path) == {case!r}:
            _swapped.append(1)
            os.replace({link!r}, {case!r})
        return fd
    os.open = _swapping_open
"""


@pytest.mark.parametrize(
    ("fixture", "check", "client"),
    [("minimal_run.jsonl", "R1.valid-runs-accepted", "reference_client.py"),
     ("envelopes/raw_unknown_keys.json", "E.unknown-keys-ignored", "envelope_client.py")],
)  # fmt: skip
def test_replay_reads_its_case_once(tmp_path: Path, fixture: str, check: str, client: str) -> None:
    """``replay --check`` reads the case file once, through the safe reader (no link, at
    most the cap), and grades those bytes: read again to grade, following links, a case
    swapped for a link to a 0600 file in between would be graded and printed."""
    source = bundled_fixtures_dir() / fixture
    name = source.name
    case = tmp_path / name
    shutil.copyfile(source, case)
    expect = name.removesuffix(".jsonl").removesuffix(".json") + ".expect.json"
    shutil.copyfile(source.with_name(expect), tmp_path / expect)
    secret = tmp_path / "secret"
    secret.write_text('{"type":"text","text":"private words"}\n')
    secret.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(secret)
    prelude = textwrap.dedent(SWAP_AFTER_FIRST_OPEN).format(case=str(case), link=str(link))
    out = subprocess.run(
        [sys.executable, "-c", prelude + MEASURED_KIT, "replay", str(case), "--check", check,
         "--mode", "report", "--", sys.executable, str(ADAPTERS / "python" / client)],
        capture_output=True, text=True, timeout=2 * HANG_GUARD, cwd=tmp_path,
    )  # fmt: skip
    assert case.is_symlink(), "the case was never swapped"
    assert "private words" not in out.stdout + out.stderr, out.stdout
    assert out.returncode == 0, out.stdout + out.stderr
    first_line = source.read_bytes().splitlines()[0].decode()[:40]
    assert first_line in out.stdout, out.stdout


def test_a_failures_folder_swapped_for_a_link_mid_run_gets_nothing_written(
    tmp_path: Path,
) -> None:
    """The client replaces .stella-conform/failures with a link to another folder, then
    fails a check: the failing case is reported, and not written through the link."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = kit(
        "run", "--only", "R4.bad-body-rejected", "--examples", "1", "--max-shrinks", "0",
        "--no-database", "-j", "1", "--json", "r.json", "--",
        sys.executable, str(HOSTILE), "swap-failures", str(elsewhere), cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr[-2000:]
    assert (tmp_path / ".stella-conform" / "failures").is_symlink()  # it did swap it
    assert not list(elsewhere.iterdir()), list(elsewhere.iterdir())
    assert "was not saved" in out.stderr and "is a link" in out.stderr, out.stderr[-2000:]
    [check] = json.loads((tmp_path / "r.json").read_text())["checks"]
    assert check["outcome"] == "fail" and check["failures"], check


@pytest.mark.parametrize("plant", ["dangling-link", "linked-secret", "fifo", "folder"])
def test_init_writes_no_template_through_a_link_or_onto_a_fifo(tmp_path: Path, plant: str) -> None:
    """init refuses to write a template through a dangling link at its name (it would
    create a file outside the folder), over a linked 0600 file with --force (it would be
    overwritten and made 0755), or onto a FIFO (init would hang)."""
    from conftest import kit_inline

    target = tmp_path / "stella_adapter.py"
    outside = tmp_path / "outside.py"
    if plant == "dangling-link":
        target.symlink_to(outside)
    elif plant == "linked-secret":
        outside.write_text("secret\n")
        outside.chmod(0o600)
        target.symlink_to(outside)
    elif plant == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    out = kit_inline("init", "python", str(tmp_path), "--force")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, (out.stdout, out.stderr)
    assert "refusing" in out.stderr, out.stderr
    if plant == "dangling-link":
        assert not outside.exists()
    if plant == "linked-secret":
        assert outside.read_text() == "secret\n" and (outside.stat().st_mode & 0o777) == 0o600


def test_corpus_diff_plays_the_oracle_no_link_and_reads_one_recording_at_a_time(
    tmp_path: Path,
) -> None:
    """A recording is played to the oracle, a client: a link in the folder (here to a 0600
    file) is skipped with a warning, as ``--seed-corpus`` skips it (one rule for both, not
    a stop of the whole diff, exit 2), nothing of it played; a FIFO likewise; and the
    recordings are read one at a time as the oracle is asked, not all read and held
    before the first is compared."""
    oracle = tmp_path / "oracle.py"
    log = tmp_path / "asked.log"
    oracle.write_text(
        "import sys\nsys.stdin.buffer.read()\n"
        f"open({str(log)!r}, 'a').write('asked\\n')\n"
        'print(\'{"verdict": "accept", "rejected_line": null}\')\n'
    )
    secret = tmp_path / "secret"
    secret.write_bytes(VALID)
    secret.chmod(0o600)
    for name, second in (("link", "b_link.jsonl"), ("fifo", "b_fifo.jsonl")):
        corpus = tmp_path / name
        corpus.mkdir()
        (corpus / "a_first.jsonl").write_bytes(VALID)
        if name == "link":
            (corpus / second).symlink_to(secret)
        else:
            os.mkfifo(corpus / second)  # a read would hang
        log.unlink(missing_ok=True)
        out = kit(
            "corpus", "diff", str(corpus), "--generated", "0", "--timeout", str(HANG_GUARD),
            "--oracle", shlex.join([sys.executable, str(oracle)]), cwd=tmp_path,
            timeout=HANG_GUARD * 2,
        )  # fmt: skip
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        assert "1/1 agree" in out.stdout, out.stdout
        why = "symbolic link" if name == "link" else "FIFO"
        [warning] = [line for line in out.stderr.splitlines() if "skipped" in line]
        assert second in warning and why in warning, out.stderr
        assert log.read_text().count("asked") == 1  # the first, and nothing of the second
