"""Clients that hang, crash, exit early or starve: each case is an error with a reason,
the run goes on, and every command stays within its bounds (timeouts, jobs, fuzz's time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE, REPO
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    VALID,
    WAITS,
    hostile,
    kit,
    no_leaks,
)

from stella_conform.conformance.clients.runner import (
    Client,
    PersistentSession,
    run_exit,
    run_report,
)


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
    # a crash must come however slow the machine: only the hangs get a short timeout
    obs = run_exit(hostile(behaviour, *args, timeout=WAITS if status == "timeout" else 30), VALID)
    assert obs.status == status and detail in obs.describe()
    assert obs.verdict is None  # never a pass, never a fail
    assert time.monotonic() - started < HANG_GUARD  # the hangs sleep an hour


def test_exit_at_once_survives_the_broken_pipe() -> None:
    obs = run_exit(hostile("exit-at-once"), VALID * 50_000)
    assert obs.ok and obs.verdict == "accept"


def test_report_mode_trickle_is_a_timeout_not_a_verdict() -> None:
    obs = run_report(hostile("trickle", mode="report", timeout=WAITS), VALID)
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
    waits = behaviour != "persistent-too-many"  # the other two never answer in time
    client = hostile(behaviour, *args, mode="persistent", timeout=1.5 if waits else HANG_GUARD)
    with PersistentSession(client) as s:
        _ready(s)
        first = s.run(VALID)
        _ready(s)
        second = s.run(VALID)  # the session recovers (restart + handshake) for the next case
    if behaviour == "persistent-too-many":
        # the extra summary arrives while the next case runs: caught on one of the two
        assert "protocol-error" in (first.status, second.status)
        bad = first if first.status == "protocol-error" else second
        assert detail in bad.detail or "case" in bad.detail
    else:
        assert first.status == status and detail in first.detail
        assert second.status == status


#: A persistent client that says on stderr which case it reads, and dies in its third.
CHATTY_PERSISTENT = """
import json, sys
def emit(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
emit({"kind": "hello", "protocol": 1, "client": {"name": "chatty"}, "profiles": ["reader"],
      "modes": ["persistent"]})
for n, raw in enumerate(sys.stdin.buffer, 1):
    message = json.loads(raw)
    if message.get("kind") == "shutdown":
        sys.exit(0)
    sys.stderr.write(f"reading case {n}\\n")
    sys.stderr.flush()
    if n == 3:
        sys.stderr.write(f"dying in case {n}\\n")
        sys.exit(3)
    emit({"kind": "summary", "id": message["id"], "verdict": "reject" if n == 2 else "accept",
          **({"rejected_line": 1} if n == 2 else {})})
"""


def test_a_persistent_case_shows_the_stderr_written_during_it() -> None:
    """One process answers every case in persistent mode, so each case's stderr excerpt is
    what the process wrote from the case's start, not its last bytes (which would quote
    the client's words about earlier cases as this one's), and a case the client crashed
    in shows its stderr (read before the dead process is thrown away)."""
    client = Client(argv=(sys.executable, "-c", CHATTY_PERSISTENT), mode="persistent",
                    timeout=HANG_GUARD, summary_only=True)  # fmt: skip
    with PersistentSession(client) as session:
        observed = [session.run(VALID) for _ in range(4)]
    statuses = [(obs.status, obs.verdict) for obs in observed]
    assert statuses == [("ok", "accept"), ("ok", "reject"), ("crash", None), ("ok", "accept")]
    tails = [obs.stderr_tail for obs in observed]
    assert tails[0] == "reading case 1\n"
    assert tails[1] == "reading case 2\n"  # the wrong verdict's case: its own words only
    assert tails[2] == "reading case 3\ndying in case 3\n"  # the crash, with its words
    assert tails[3] == "reading case 1\n"  # a new process for the next case


def _ready(session: PersistentSession) -> None:
    """Start (or restart) the session's client and read its hello with all the time a
    loaded machine needs, so that only the case's own answer meets its short timeout (a
    start counts in the case's timeout: a slow start would be "no hello", not "no
    summary")."""
    session._ensure(time.monotonic() + HANG_GUARD)


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


def _grade_on_a_busy_machine(tmp_path: Path, *command: str, timeout: str) -> dict:
    report = tmp_path / "r.json"
    out = kit(
        "run", "--mode", "persistent", "--only", "R1.valid-runs-accepted", "--examples", "3",
        "--no-database", "--timeout", timeout, "--json", str(report), "--", *command,
        cwd=tmp_path,
    )  # fmt: skip
    assert report.exists(), out.stdout + out.stderr
    doc = json.loads(report.read_text())
    doc["_exit"] = out.returncode
    return doc


def _timeout_for(*command: str) -> float:
    """A client timeout three times what one case takes this client here and now (a start,
    its hello and one answer, on this machine at this load; at least 1.5 s): the client
    answers well within it, and a stall longer than it is a stall on any machine."""
    client = Client(argv=command, mode="persistent", timeout=HANG_GUARD)
    started = time.monotonic()
    with PersistentSession(client) as session:
        assert session.run(VALID).ok
    return max(1.5, 3 * (time.monotonic() - started))


def test_a_client_starved_once_past_the_timeout_is_not_an_error(tmp_path: Path) -> None:
    """The timeout is wall-clock: a case that ran out of it while the client waited for a
    CPU is run again, and the client is graded on the second answer. (The timeout is
    calibrated: a fixed 1.5 s raced the client's own start on a loaded machine.)"""
    stall = Path(__file__).parent / "stall_once.py"
    marker = tmp_path / "stalled"
    calm = tmp_path / "calm"
    calm.touch()  # the wrapper as it runs after its stall: it answers at once
    timeout = _timeout_for(sys.executable, str(stall), str(calm), "0", "ONCE", *PY_REFERENCE)
    doc = _grade_on_a_busy_machine(
        tmp_path, sys.executable, str(stall), str(marker), f"{2 * timeout:.1f}", "ONCE",
        *PY_REFERENCE, timeout=f"{timeout:.1f}",
    )  # fmt: skip
    assert marker.exists()  # it did stall past the timeout
    [check] = doc["checks"]
    assert check["outcome"] == "pass", check
    assert doc["_exit"] == 0


def test_a_client_that_hangs_again_on_the_retry_is_an_error(tmp_path: Path) -> None:
    stall = Path(__file__).parent / "stall_once.py"
    marker = tmp_path / "stalled"
    doc = _grade_on_a_busy_machine(
        tmp_path, sys.executable, str(stall), str(marker), "3", "AGAIN", *PY_REFERENCE, timeout="1"
    )
    [check] = doc["checks"]
    assert check["outcome"] == "error"
    assert "twice" in check["message"], check


@pytest.mark.slow
def test_no_timeout_misfires_with_a_cpu_hog_beside_the_kit(tmp_path: Path) -> None:
    """Two busy loops compete with the kit and the client for this machine's cores."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        # what a case takes beside the hogs, three times over: a timeout that misfires
        # then is the kit's (a fixed 1 s would race the client's start on a loaded machine)
        timeout = _timeout_for(*PY_REFERENCE)
        doc = _grade_on_a_busy_machine(tmp_path, *PY_REFERENCE, timeout=f"{timeout:.1f}")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert [c["outcome"] for c in doc["checks"]] == ["pass"], doc["checks"]


def test_jobs_are_capped_at_a_few_per_cpu(tmp_path: Path) -> None:
    """-j 64 on this machine: a warning, and at most 4 workers per CPU (64 forked 64)."""
    cap = 4 * (os.cpu_count() or 1)
    out = kit(
        "run", "-j", str(cap * 8), "--only", "R1.valid-runs-accepted", "--examples", "0",
        "--no-database", "--", *PY_REFERENCE, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"-j {cap * 8} is more than 4 per CPU ({os.cpu_count()} here); using {cap}" in out.stderr
    assert f"with {cap} worker(s)" in out.stderr
    from stella_conform.cli.grading import cap_jobs

    assert cap_jobs(cap) == cap and cap_jobs(1) == 1


@pytest.mark.parametrize(("behaviour", "timeout"), [("slow", "5"), ("hang-counted", "1")])
def test_fuzz_for_bounds_the_whole_command(tmp_path: Path, behaviour: str, timeout: str) -> None:
    """Every case costs the client at least a second (it sleeps, or hangs into a 1 s
    timeout): within --for 5s at most 5 cases can start, and one more in flight. Before,
    the final "grade like run" pass ignored the budget (--for 10s took 298 s)."""
    log = tmp_path / "runs.log"
    args = ("1", str(log)) if behaviour == "slow" else (str(log),)
    out = kit(
        "fuzz", "--mode", "exit", "--for", "5s", "--timeout", timeout, "--no-database",
        "--only", "R1.*", "--json", "r.json", "--", sys.executable, str(HOSTILE), behaviour,
        *args, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr[-2000:]
    runs = log.read_text().count("run")
    assert 1 <= runs <= 6, (runs, out.stdout[-3000:])
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["fuzz"]["final_pass"].startswith("cut short by --for"), doc["fuzz"]
    assert any("the --for of 5 s ran out" in c["message"] for c in doc["checks"]), doc["checks"]


def test_fuzz_keeps_one_client_alive_at_a_time(tmp_path: Path) -> None:
    """Persistent mode, every reader check (one of them with a session of its own): each
    client that starts finds no other alive (fuzz kept 28 alive at once, 429 MiB)."""
    alive = tmp_path / "alive"
    alive.mkdir()
    counter = Path(__file__).parent / "count_alive.py"
    out = kit(
        "fuzz", "--for", "6s", "--no-database", "--no-feedback", "--max-shrinks", "0",
        "--json", "r.json", "--", sys.executable, str(counter), str(alive), *PY_REFERENCE,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr[-2000:]
    peaks = [int(n) for n in (alive / "peaks").read_text().split()]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert len(doc["fuzz"]["checks"]) > 10 and len(peaks) > 1, (peaks, doc["fuzz"]["checks"])
    assert max(peaks) == 0, peaks


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_a_client_that_fails_first_contact_still_gets_every_report(
    tmp_path: Path, command: str
) -> None:
    """A client that cannot answer a trivially valid stream: exit 2 as before, and every
    report asked for is written with the reason in it (there was none to upload)."""
    extra = ["--for", "5s"] if command == "fuzz" else []
    out = kit(
        command, "--mode", "exit", "--no-database", *extra, "--json", "r.json",
        "--junit-xml", "r.xml", "--markdown", "r.md", "--",
        sys.executable, str(HOSTILE), "exit", "2", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr[-2000:]
    said = "the client cannot be graded: it does not answer a trivially valid stream"
    assert said in out.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["exit_code"] == 2 and said in doc["error"] and doc["checks"] == []
    junit = (tmp_path / "r.xml").read_text()
    assert 'name="first-contact"' in junit and said in junit and 'errors="1"' in junit
    assert said in (tmp_path / "r.md").read_text()
