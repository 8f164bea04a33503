"""Hostile clients: the kit never crashes, hangs or leaks, and says what went wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ADAPTERS, REPO, kit

from stella_conform.conformance.runner import (
    Client,
    PersistentSession,
    run_exit,
    run_report,
)
from stella_conform.corpus import bundled_fixtures_dir

SOURCE = Path(__file__).parent / "hostile" / "hostile.py"
#: This test's private copy of the hostile client (set by ``no_leaks``): the process
#: check looks for its path, so hostile clients of tests running in parallel in other
#: workers are never mistaken for this test's leaks.
HOSTILE = SOURCE
VALID = (bundled_fixtures_dir() / "minimal_run.jsonl").read_bytes()
#: Peak resident memory the kit may use while a client floods it (docs/reliability.md).
MEMORY_CAP_MIB = 150


def hostile(behaviour: str, *args: str, mode: str = "exit", timeout: float = 2.0) -> Client:
    return Client(
        argv=(sys.executable, str(HOSTILE), behaviour, *args),
        mode=mode,  # type: ignore[arg-type]
        timeout=timeout,
        line_timeout=1.0,
    )


def leftovers(temp_dir: Path) -> tuple[set[str], list[str]]:
    temp = {p.name for p in temp_dir.glob("stella-conform-*")}
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    procs = [line for line in ps.splitlines() if str(HOSTILE) in line or "987.654" in line]
    return temp, procs


@pytest.fixture(autouse=True)
def no_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A private temp directory per test: the kit's temp files (in-process through
    # tempfile.tempdir, in a kit subprocess through TMPDIR) land there and nowhere else,
    # so other tests running in parallel cannot be mistaken for leaks.
    global HOSTILE
    temp_dir = tmp_path / "tmp"
    temp_dir.mkdir()
    HOSTILE = tmp_path / "hostile_client.py"
    shutil.copyfile(SOURCE, HOSTILE)
    monkeypatch.setattr(tempfile, "tempdir", str(temp_dir))
    monkeypatch.setenv("TMPDIR", str(temp_dir))
    temp_before, _ = leftovers(temp_dir)
    yield
    deadline = time.monotonic() + 3
    while True:
        temp_after, procs = leftovers(temp_dir)
        if not procs or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not procs, f"client processes left running: {procs}"
    assert temp_after <= temp_before, f"temp files left: {temp_after - temp_before}"


@pytest.mark.parametrize(
    ("behaviour", "args", "status", "detail"),
    [
        ("hang-no-read", (), "timeout", "timeout"),
        ("read-never-exit", (), "timeout", "timeout"),
        ("trickle", (), "timeout", "timeout"),
        ("signal", ("SIGSEGV",), "crash", "SIGSEGV"),
        ("signal", ("SIGKILL",), "crash", "SIGKILL"),
        ("signal", ("SIGABRT",), "crash", "SIGABRT"),
        ("exit", ("2",), "crash", "exit status 2"),
        ("exit", ("127",), "crash", "exit status 127"),
        ("exit", ("255",), "crash", "exit status 255"),
    ],
)
def test_exit_mode_hostile_behaviour_is_an_error_with_a_reason(
    behaviour: str, args: tuple[str, ...], status: str, detail: str
) -> None:
    started = time.monotonic()
    obs = run_exit(hostile(behaviour, *args), VALID)
    assert obs.status == status and detail in obs.describe()
    assert obs.verdict is None  # never a pass, never a fail
    assert time.monotonic() - started < 10


def test_exit_at_once_survives_the_broken_pipe() -> None:
    obs = run_exit(hostile("exit-at-once"), VALID * 50_000)
    assert obs.ok and obs.verdict == "accept"


def test_grandchild_holding_the_pipes_is_killed_and_the_kit_returns() -> None:
    started = time.monotonic()
    obs = run_exit(hostile("grandchild", timeout=5.0), VALID)
    assert obs.verdict == "accept"
    assert time.monotonic() - started < 4  # did not wait for the grandchild's sleep


def test_report_mode_100_mib_line_is_a_protocol_error() -> None:
    obs = run_report(hostile("report-huge-line", mode="report", timeout=10), VALID)
    assert obs.status == "protocol-error" and "longer than" in obs.detail


def test_report_mode_trickle_is_a_timeout_not_a_verdict() -> None:
    obs = run_report(hostile("trickle", mode="report", timeout=2), VALID)
    assert obs.status in ("timeout", "protocol-error") and obs.verdict is None


@pytest.mark.parametrize(
    ("behaviour", "args", "status", "detail"),
    [
        ("persistent-too-many", (), "protocol-error", "after the summary"),
        ("persistent-too-few", (), "timeout", "no summary"),
        ("persistent-late", ("3",), "timeout", "no summary"),
    ],
)
def test_persistent_mode_hostile_answers(
    behaviour: str, args: tuple[str, ...], status: str, detail: str
) -> None:
    with PersistentSession(hostile(behaviour, *args, mode="persistent", timeout=1.5)) as s:
        first = s.run(VALID)
        second = s.run(VALID)  # the session recovers (restart + handshake) for the next case
    if behaviour == "persistent-too-many":
        # the extra summary arrives while the next case runs: caught on one of the two
        assert "protocol-error" in (first.status, second.status)
        bad = first if first.status == "protocol-error" else second
        assert detail in bad.detail or "case" in bad.detail
    else:
        assert first.status == status and detail in first.detail
        assert second.status == status


MEMORY_DRIVER = textwrap.dedent("""
    import sys
    from stella_conform.conformance.runner import Client, run_exit, run_report
    mode = sys.argv[1]
    client = Client(argv=tuple(sys.argv[2:]), mode=mode, timeout=120)
    run = run_exit if mode == "exit" else run_report
    obs = run(client, b'{"type":"run_complete","model":"m","cost_usd":0}\\n')
    # VmHWM: this process's own peak (ru_maxrss would include the parent's, inherited at fork)
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
    print(obs.status, obs.verdict, obs.stdout_bytes + obs.stderr_bytes, int(hwm) // 1024)
""")


def kit_under_flood(mode: str, *behaviour: str) -> tuple[str, str, int, int]:
    """Run one case in a fresh kit process; its status, verdict, bytes read, peak MiB."""
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_DRIVER, mode, sys.executable, str(HOSTILE), *behaviour],
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


def test_a_hostile_client_gives_errors_and_the_run_goes_on(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    out = kit(
        "run",
        "--examples",
        "2",
        "--timeout",
        "0.3",  # every case hangs: the timeout is all this test waits for
        "-j",
        "2",
        "--no-database",
        "--json",
        str(report),
        "--",
        sys.executable,
        str(HOSTILE),
        "hang-no-read",
        cwd=tmp_path,
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    checks = json.loads(report.read_text())["checks"]
    assert {c["outcome"] for c in checks} <= {"error", "skip"}
    assert all("timeout" in c["message"] for c in checks if c["outcome"] == "error")


def test_same_seed_same_cases_same_verdicts_three_times(tmp_path: Path) -> None:
    client = str(ADAPTERS / "broken" / "fails_on_torn_final_line.py")
    runs = []
    for i in range(3):
        report = tmp_path / f"r{i}.json"
        kit(
            "run",
            "--mode",
            "persistent",
            "--examples",
            "6",
            "--seed",
            "42",
            "--no-database",
            "--only",
            "R6.*",
            "--json",
            str(report),
            "--failures-dir",
            str(tmp_path / f"f{i}"),
            "--",
            sys.executable,
            client,
            cwd=tmp_path,
        )
        doc = json.loads(report.read_text())
        runs.append(
            [
                (c["id"], c["outcome"], [Path(f["saved"]).name for f in c["failures"]])
                for c in doc["checks"]
            ]
        )
    assert runs[0] == runs[1] == runs[2]
    saved = sorted(p.name for p in (tmp_path / "f0").iterdir())
    for i in (1, 2):
        for name in saved:
            assert (tmp_path / "f0" / name).read_bytes() == (tmp_path / f"f{i}" / name).read_bytes()


def test_kit_never_uses_a_shell() -> None:
    """Streams and client arguments go to exec as argv: no shell=True anywhere in the kit."""
    for folder in ("conformance", "generators", "schemas", "src"):
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text()
            assert "shell=True" not in text and "os.system" not in text, path


def test_temp_files_are_private(tmp_path: Path) -> None:
    record = tmp_path / "mode.txt"
    script = tmp_path / "c.py"
    script.write_text(
        f"import os,sys\nst=os.stat(sys.argv[1])\n"
        f"open({str(record)!r},'w').write(oct(st.st_mode & 0o777))\n"
    )
    obs = run_exit(Client(argv=(sys.executable, str(script), "{stream}")), VALID)
    assert obs.verdict == "accept" and record.read_text() == "0o600"


def test_a_hung_wrapper_leaves_no_fake_stella_and_no_stage_behind() -> None:
    """A wrapper that starts stella in the background and hangs: all of it is killed."""
    import uuid

    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.grader import GradedCase
    from stella_conform.conformance.suite import CaseRunner, SuiteConfig

    token = f"task-{uuid.uuid4().hex}"
    client = Client(
        argv=(
            "sh",
            "-c",
            f"stella run --output-format stream-json {token} >/dev/null & sleep 987.654",
        ),
        mode="exit",
        timeout=2.0,
    )
    case = GradedCase("hang", VALID, "fixture", kind="scenario", scenario={"pace_ms": 60_000})
    runner = CaseRunner(SuiteConfig(client), BY_ID["W.exit-codes-mapped"])
    obs = runner.run(case)
    assert obs.status == "timeout"
    assert obs.invocations and token in obs.invocations[0]["argv"]  # the fake did start
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        if token not in ps:
            break
        time.sleep(0.1)
    assert token not in ps, "the fake stella outlived its wrapper"
