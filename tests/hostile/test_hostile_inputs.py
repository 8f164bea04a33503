"""Hostile input files: FIFOs, devices, huge files and streams, an output that cannot be
written; each is one line and an exit status, read in bounded memory, never a kit bug."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PY_REFERENCE
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    KIT_ARGV,
    MEMORY_CAP_MIB,
    VALID,
    kit,
    kit_peak,
    no_leaks,
)

from stella_conform.conformance.clients.runner import (
    Client,
    run_exit,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir


@pytest.mark.parametrize(("behaviour", "why"), [("record-fifo", "FIFO"), ("record-zero", "link")])
def test_a_record_file_that_is_not_a_regular_file_is_an_error_at_once(
    behaviour: str, why: str
) -> None:
    """A FIFO never blocks the kit, /dev/zero never fills its memory: both are errors."""
    from stella_conform.conformance.clients.runner import Feed

    client = Client(argv=(sys.executable, str(HOSTILE), behaviour, "{record}"), timeout=120)
    started = time.monotonic()
    obs = run_exit(client, VALID, Feed(record=True))
    assert obs.status == "crash" and "{record} file" in obs.detail and why in obs.detail
    assert obs.verdict is None or not obs.ok
    assert time.monotonic() - started < HANG_GUARD  # not the 120 s timeout: at once


def test_an_invocation_log_replaced_by_a_fifo_is_an_error_at_once() -> None:
    from stella_conform.conformance.checks import BY_ID, GradedCase
    from stella_conform.conformance.suite import CaseRunner, SuiteConfig

    client = Client(argv=(sys.executable, str(HOSTILE), "log-fifo"), timeout=120)
    case = GradedCase("fifo", VALID, "fixture", kind="scenario", scenario={})
    started = time.monotonic()
    obs = CaseRunner(SuiteConfig(client), BY_ID["W.exit-codes-mapped"]).run(case)
    assert obs.status == "crash" and "invocation log" in obs.detail and "FIFO" in obs.detail
    assert time.monotonic() - started < HANG_GUARD  # not the 120 s timeout: at once


def hostile_inputs(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text('{"format":"stella-conform/report/1","checks":' + "[" * 100_000 + "\n")
    huge = tmp_path / "huge.json"
    huge.write_text('{"format":"stella-conform/report/1","n":' + "9" * 5000 + ',"checks":[]}\n')
    # a regular file whose read fails (EIO), as on a dying disk: one line, not a kit bug
    eio = tmp_path / "eio.jsonl"
    eio.symlink_to("/proc/self/mem")
    return {"zero": Path("/dev/zero"), "fifo": fifo, "deep": deep, "huge": huge, "eio": eio}


@pytest.mark.parametrize(
    ("command", "inputs"),
    [
        ("decode", ("zero", "fifo", "eio")),
        ("validate", ("zero", "fifo", "eio")),
        ("trace check", ("zero", "fifo", "eio")),
        ("report diff", ("zero", "fifo", "deep", "huge", "eio")),
        ("report merge out.json", ("zero", "fifo", "deep", "huge", "eio")),
        ("corpus check", ("fifo-corpus",)),
    ],
)
def test_hostile_input_files_are_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, inputs: tuple[str, ...]
) -> None:
    files = hostile_inputs(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    os.mkfifo(corpus / "a.jsonl")
    (corpus / "a.expect.json").write_text("{}")
    files["fifo-corpus"] = corpus
    from click.testing import CliRunner

    from stella_conform.cli import main

    # in-process, milliseconds each (the memory of reading /dev/zero is measured below)
    monkeypatch.chdir(tmp_path)
    for name in inputs:
        path = str(files[name])
        args = (
            [*command.split(), path, path] if command == "report diff" else [*command.split(), path]
        )
        started = time.monotonic()
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (name, result.output, result.exception)
        message = result.stderr.strip()
        assert len(message.splitlines()) == 1 and message.startswith("stella-conform: "), message
        assert time.monotonic() - started < HANG_GUARD  # a FIFO is never waited on


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["checks"],
        ["vocabulary"],
        ["decode", str(bundled_fixtures_dir() / "minimal_run.jsonl")],
        ["decode", "--json", str(bundled_fixtures_dir() / "minimal_run.jsonl")],
        ["run", "--only", "R1.valid-runs-accepted", "--examples", "1", "--no-database", "--",
         *PY_REFERENCE],
    ],
    ids=["checks", "vocabulary", "decode", "decode --json", "run"],
)  # fmt: skip
def test_an_output_that_cannot_be_written_is_one_line_not_a_kit_bug(
    tmp_path: Path, args: list[str]
) -> None:
    """``> log`` on a full disk (here /dev/full): one line naming the stream and exit 2;
    not an OSError traceback and exit 3, "a bug in the kit"."""
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [*KIT_ARGV, *args], stdout=full, stderr=subprocess.PIPE, text=True,
            timeout=HANG_GUARD * 2, cwd=tmp_path,
        )  # fmt: skip
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    said = [line for line in out.stderr.splitlines() if line.startswith("stella-conform:")]
    assert said == ["stella-conform: cannot write to stdout: No space left on device"], out.stderr
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["decode", "validate", "trace check"])
def test_dev_zero_on_stdin_is_refused_within_the_line_cap(command: str) -> None:
    """A path to a device is refused before reading; stdin cannot be, so it is capped."""
    with open("/dev/zero", "rb") as zero:
        code, peak, stderr = kit_peak(*command.split(), "-", stdin=zero.fileno())
    assert code == 2 and ("larger than" in stderr or "longer than" in stderr), stderr
    assert peak < MEMORY_CAP_MIB, f"{command} on /dev/zero: {peak} MiB"


def test_decode_json_of_a_generated_stream_stays_flat() -> None:
    """Output written as it goes: 16 MiB of stream needs no more memory than 2 MiB."""
    flood = Path(__file__).parent / "stream_flood.py"
    peaks = []
    for mib in (2, 16):
        gen = subprocess.Popen([sys.executable, str(flood), str(mib)], stdout=subprocess.PIPE)
        assert gen.stdout is not None
        code, peak, stderr = kit_peak("decode", "--json", "-", stdin=gen.stdout.fileno())
        gen.stdout.close()
        gen.wait()
        assert code == 0, stderr
        peaks.append(peak)
    assert peaks[1] - peaks[0] < 8 and peaks[1] < MEMORY_CAP_MIB, peaks


def _peak_of(generator: list[str], *args: str) -> tuple[int, int, str]:
    gen = subprocess.Popen([sys.executable, *generator], stdout=subprocess.PIPE)
    assert gen.stdout is not None
    try:
        return kit_peak(*args, stdin=gen.stdout.fileno())
    finally:
        gen.stdout.close()
        gen.wait()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["deltas", "tools"])
def test_decode_keeps_a_bounded_summary_of_a_huge_stream(kind: str) -> None:
    """64 MiB of text deltas (the preview) or of tool calls: decode stays flat (keeping
    them all would take hundreds of MiB) and says what its summary left out."""
    flood = str(Path(__file__).parent / "stream_flood.py")
    code, peak, stderr = _peak_of([flood, "64", kind], "decode", "-q", "-")
    assert code == 0, stderr
    assert peak < 80, f"{peak} MiB"


@pytest.mark.slow
def test_blank_lines_after_a_bad_line_are_counted_not_held() -> None:
    """A corrupt line and then two million newlines: one torn line and blanks, counted."""
    script = (
        'import os; os.write(1, b\'{"type":"text","text":"a"}\\n{bad\\n\' + b\'\\n\' * 2000000)'
    )
    code, peak, stderr = _peak_of(["-c", script], "decode", "-q", "-")
    assert code == 0, stderr  # the corrupt line was the last one with anything on it
    assert peak < 80, f"{peak} MiB"


@pytest.mark.slow
def test_trace_check_reads_a_journal_line_by_line() -> None:
    """A valid 16 MiB journal: flat memory, read line by line (a 60 MB one, 57 MiB)."""
    flood = str(Path(__file__).parent / "journal_flood.py")
    code, peak, stderr = _peak_of([flood, "16"], "trace", "check", "-")
    assert code == 0, stderr
    assert peak < 80, f"{peak} MiB"


def test_a_wire_schema_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    case = str(bundled_fixtures_dir() / "minimal_run.jsonl")
    for schema, kind in ((fifo, "a FIFO"), (zero, "a character device")):
        out = kit("decode", "--wire-schema", str(schema), case, timeout=60)
        assert out.returncode == 2 and f"is {kind}, not a regular file" in out.stderr, out.stderr


def test_a_bounded_fold_reads_every_fixture_as_the_grader_does() -> None:
    """The bound is far past any real run: on the corpus both folds agree field by field,
    and past it the latest texts (the final text) are the ones kept."""
    from stella_conform.oracle.decoder import FOLD_TEXT_KEEP, RunFold, decode

    for path in sorted(bundled_fixtures_dir().glob("*.jsonl")):
        whole, bounded = RunFold(), RunFold(bounded=True)
        for outcome in decode(path.read_bytes()):
            whole.feed(outcome)
            bounded.feed(outcome)
        assert bounded.finish().to_json() == whole.finish().to_json(), path.name
    text = "t" * (FOLD_TEXT_KEEP // 4)
    stream = "".join(f'{{"type":"text","text":"{text}{n}"}}\n' for n in range(5)).encode()
    fold = RunFold(bounded=True)
    for outcome in decode(stream):
        fold.feed(outcome)
    summary = fold.finish()
    assert summary.final_text == f"{text}4" and summary.cut == {"texts": 2}
    assert len(summary.texts) == 3


#: The commands that start no client, each given something hostile: the leak check (no temp
#: file or folder, no half-written file, every kit process under the memory cap) holds
#: them too. ``run``, ``matrix``, ``fuzz``, ``replay``, ``smoke`` and ``corpus diff`` are
#: SUPERVISED above; the plugin is below.
UNSUPERVISED = {
    "decode": (["decode", "-"], "zero"),
    "decode --json": (["decode", "--json", "-"], "zero"),
    "validate": (["validate", "-"], "zero"),
    "trace check": (["trace", "check", "-"], "zero"),
    "init": (["init", "python", "adapter"], None),
    "report merge": (["report", "merge", "deep.json", "huge.json", "-o", "m.json"], None),
    "report diff": (["report", "diff", "huge.json", "fifo.jsonl"], None),
    "vocabulary": (["vocabulary", "--wire-schema", "fifo.jsonl"], None),
    "corpus export": (["corpus", "export", "out", "--count", "3"], None),
    "checks": (["checks"], None),
}


@pytest.mark.parametrize("name", list(UNSUPERVISED))
def test_every_other_command_leaves_nothing_on_hostile_input(tmp_path: Path, name: str) -> None:
    """/dev/zero on stdin, a dangling link where init writes, a FIFO, a 100,000-deep
    report: a usage error or a result, never a traceback, and nothing left behind."""
    args, stdin = UNSUPERVISED[name]
    hostile_inputs(tmp_path)
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "stella_adapter.py").symlink_to(tmp_path / "outside.py")
    with open("/dev/zero" if stdin else os.devnull, "rb") as fh:
        out = subprocess.run(
            [*KIT_ARGV, *args], stdin=fh, capture_output=True, text=True,
            timeout=HANG_GUARD * 2, cwd=tmp_path,
        )  # fmt: skip
    assert out.returncode in (0, 1, 2) and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "outside.py").exists()
