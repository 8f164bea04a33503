"""Clients that flood: huge lines, endless output, deep or huge summaries, many small
objects; the kit's memory stays under its cap and the case is classified."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    MEMORY_CAP_MIB,
    VALID,
    hostile,
    kit_peak,
    no_leaks,
)

from stella_conform.conformance.clients.runner import (
    run_report,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir


def test_report_mode_100_mib_line_is_a_protocol_error() -> None:
    obs = run_report(hostile("report-huge-line", mode="report"), VALID)
    assert obs.status == "protocol-error" and "longer than" in obs.detail


MEMORY_DRIVER = textwrap.dedent("""
    import sys
    from stella_conform.conformance.clients.runner import Client, run_exit, run_report
    mode, timeout, lines = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    client = Client(argv=tuple(sys.argv[4:]), mode=mode, timeout=timeout, line_timeout=timeout)
    run = run_exit if mode == "exit" else run_report
    text = b'{"type":"text","text":"hi"}\\n'
    obs = run(client, text * lines + b'{"type":"run_complete","model":"m","cost_usd":0}\\n')
    # VmHWM: this process's own peak (ru_maxrss would include the parent's, inherited at fork)
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
    print(obs.status, obs.verdict, obs.stdout_bytes + obs.stderr_bytes, int(hwm) // 1024)
""")


def kit_under_flood(
    mode: str, *behaviour: str, timeout: float = 120, lines: int = 0
) -> tuple[str, str, int, int]:
    """Run one case in a fresh kit process; its status, verdict, bytes read, peak MiB."""
    driver = [sys.executable, "-c", MEMORY_DRIVER, mode, str(timeout), str(lines)]
    out = subprocess.run(
        [*driver, sys.executable, str(HOSTILE), *behaviour],
        capture_output=True,
        text=True,
        timeout=300,
    )
    status, verdict, written, peak_mib = out.stdout.split()
    return status, verdict, int(written), int(peak_mib)


@pytest.mark.slow
def test_flood_of_1_gib_keeps_memory_bounded_and_is_classified() -> None:
    status, verdict, written, peak_mib = kit_under_flood("exit", "flood", "1024")
    assert (status, verdict) == ("ok", "accept")
    assert written >= 1024 * 1024 * 1024
    assert peak_mib < MEMORY_CAP_MIB, f"kit peaked at {peak_mib} MiB"


def test_100_mib_report_line_keeps_memory_bounded() -> None:
    status, _verdict, _written, peak_mib = kit_under_flood("report", "report-huge-line")
    assert status == "protocol-error"
    assert peak_mib < MEMORY_CAP_MIB, f"kit peaked at {peak_mib} MiB"


def test_lines_after_the_summary_are_counted_not_kept() -> None:
    """A summary, then a 512 MiB flood while the kit waits for the exit: memory stays flat.

    The flood is a size, not a time: it raced a 1 s timeout for 50 MiB, which a loaded
    machine lost (``('timeout', 1343181)``); with a timeout far past it, the client
    exits when it is done and every byte was drained and counted."""
    status, verdict, written, peak_mib = kit_under_flood(
        "report", "report-after-summary", "512", timeout=HANG_GUARD * 5
    )
    assert (status, verdict) == ("ok", "accept") and written > 512 * 1024 * 1024, (status, written)
    assert peak_mib < MEMORY_CAP_MIB, f"kit peaked at {peak_mib} MiB"


def test_an_event_echoed_on_every_line_is_capped() -> None:
    """4 MB echoed per line observation: a protocol error past the observations cap."""
    status, _verdict, written, peak_mib = kit_under_flood(
        "report", "report-echo-event", timeout=HANG_GUARD, lines=40
    )
    # the third 4 MB observation passes the cap (8 MiB + 4 bytes per input byte)
    assert status == "protocol-error" and 8_000_000 < written < 40_000_000, (status, written)
    assert peak_mib < MEMORY_CAP_MIB, f"kit peaked at {peak_mib} MiB"


@pytest.mark.parametrize("behaviour", ["report-deep-summary", "report-big-preview"])
def test_deep_or_huge_summaries_are_cut_in_every_report(tmp_path: Path, behaviour: str) -> None:
    """A 400 KB summary nested 900 deep, a 4 MB preview: reports small, the cut said."""
    code, peak, stderr = kit_peak(
        "run", "--mode", "report", "--examples", "0", "--only", "R1.valid-runs-accepted",
        "--no-database", "--json", "r.json", "--junit-xml", "r.xml", "--markdown", "r.md",
        "--failures-dir", "f", "--timeout", "60", "--line-timeout", "60",
        "--", sys.executable, str(HOSTILE), behaviour, cwd=tmp_path,
    )  # fmt: skip
    assert code == 1 and "Traceback" not in stderr, stderr
    assert peak < MEMORY_CAP_MIB, f"kit peaked at {peak} MiB"
    report = (tmp_path / "r.json").read_text()
    assert len(report) < 1024 * 1024 and "cut" in report
    assert (tmp_path / "r.md").stat().st_size < 1024 * 1024  # GitHub's step-summary limit
    assert (tmp_path / "r.xml").stat().st_size < 1024 * 1024


def test_an_observation_of_many_small_objects_stays_under_the_memory_cap() -> None:
    """3.8 MiB of ``{}`` echoed in every observation: under the line cap and the bytes
    cap, but a million objects each once parsed (the kit peaked at 258 MiB). The kit keeps
    only what it grades of an observation (its outcome, type and reason)."""
    status, _verdict, written, peak_mib = kit_under_flood(
        "report", "report-echo-empties", timeout=60, lines=8
    )
    # the third observation passes the bytes cap (8 MiB + 4 bytes per input byte)
    assert status == "protocol-error" and written > 2 * 3_800_000, (status, written)
    assert peak_mib < MEMORY_CAP_MIB, f"kit peaked at {peak_mib} MiB"


@pytest.mark.parametrize("answer", ["huge", "deep"])
def test_an_oracle_answer_too_big_or_too_deep_is_a_disagreement_not_a_crash(
    tmp_path: Path, answer: str
) -> None:
    """corpus diff counts an oracle's answer past 1 MiB rather than keeping it whole (a
    1.5 GiB answer would take the kit to about a gigabyte), reads no 200k-deep one into a
    RecursionError (exit 3), and calls either an unexplained disagreement that names what
    was wrong."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("minimal_run.jsonl", "minimal_run.expect.json"):
        shutil.copyfile(bundled_fixtures_dir() / name, corpus / name)
    script = tmp_path / "oracle.py"
    body = (
        "os.write(1, b'x' * (64 << 20))"
        if answer == "huge"
        else "sys.stdout.write('[' * 200000 + ']' * 200000 + '\\n')"
    )
    script.write_text(f"import os, sys\nsys.stdin.buffer.read()\n{body}\n")
    code, peak, stderr = kit_peak(
        "corpus", "diff", str(corpus), "--generated", "0", "--timeout", str(HANG_GUARD),
        "--oracle", shlex.join([sys.executable, str(script)]), "--json", "d.json", cwd=tmp_path,
    )  # fmt: skip
    assert code == 1 and "Traceback" not in stderr, stderr
    [corpus_result] = json.loads((tmp_path / "d.json").read_text())["corpora"]
    [said] = corpus_result["classes"]["unexplained"]
    expected = (
        f"an answer of {64 << 20} bytes (the kit reads at most 1048576"
        if answer == "huge"
        else "not a JSON answer (nested too deeply)"
    )
    assert said["oracle"].startswith(expected), said
    assert peak < MEMORY_CAP_MIB, f"{peak} MiB"
