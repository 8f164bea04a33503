"""Hostile clients: the kit never crashes, hangs or leaks, and says what went wrong."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, KIT, PY_REFERENCE, REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from stella_conform.conformance.clients.runner import (
    Client,
    Observation,
    PersistentSession,
    run_exit,
    run_report,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir

sys.path.insert(0, str(Path(__file__).parent))
SOURCE = Path(__file__).parent / "hostile.py"
#: This test's private copy of the hostile client (set by ``no_leaks``): the process
#: check looks for its path, so hostile clients of tests running in parallel in other
#: workers are never mistaken for this test's leaks.
HOSTILE = SOURCE
#: This test's own sleep argument for the grandchildren hostile clients leave behind: the
#: leak check looks for it and nothing broader, so another xdist worker's test (with its own
#: token) can never be mistaken for this one's leak.
SLEEP = "987.654"
VALID = (bundled_fixtures_dir() / "minimal_run.jsonl").read_bytes()
#: Peak resident memory the kit may use while a client floods it (docs/reliability.md).
MEMORY_CAP_MIB = 150
#: Seconds a test gives what the kit must do at once or within a short timeout. Not a
#: speed: the kit takes well under a second (a few on a loaded machine), and the hostile
#: client's own wait, which a kit that hangs would share, is far longer (an hour's sleep,
#: a FIFO nobody opens, a client timeout of 120 s). Only a hang reaches it.
HANG_GUARD = 60.0

#: The kit as every test here starts it: its console script's ``main`` in an interpreter
#: that writes its own peak resident memory (``VmHWM``) to ``$STELLA_TEST_PEAKS`` as it
#: exits, however it exits: returning, ``sys.exit``, or ``os._exit`` (a stop signal's exit,
#: a forked ``-j`` worker's end), so the leak check holds every kit process of every test
#: to the memory cap. (Its own measure: a parent's ``RUSAGE_CHILDREN`` counts the clients.)
MEASURED_KIT = textwrap.dedent("""
    import atexit, os, sys
    del sys.path[0]  # not the working folder: a test's scratch files are not modules
    def peak():
        try:
            with open("/proc/self/status") as status:
                kib = next(int(l.split()[1]) for l in status if l.startswith("VmHWM"))
            with open(os.environ["STELLA_TEST_PEAKS"], "a") as log:
                log.write(f"{os.getpid()} {kib} {' '.join(sys.argv[1:3])}\\n")
        except (OSError, KeyError, StopIteration):
            pass
    real_exit = os._exit
    def measured_exit(code):
        peak()
        real_exit(code)
    os._exit = measured_exit
    atexit.register(peak)
    sys.argv[0] = "stella-conform"
    from stella_conform.cli import main
    main()
""")
KIT_ARGV = (sys.executable, "-c", MEASURED_KIT)


def kit(
    *args: str, cwd: Path | None = None, timeout: float = 600, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """conftest's ``kit()``, its peak memory measured (:data:`MEASURED_KIT`)."""
    return subprocess.run(
        [*KIT_ARGV, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        input=stdin.decode() if stdin is not None else None,
    )


#: The client timeout of a test whose client must time out: it waits far longer itself
#: (an hour's sleep, a never-ending trickle), so a slow machine only makes it time out
#: sooner. Every other hostile client gets HANG_GUARD: it must end on its own (crash, exit,
#: answer), and only a kit that hangs would wait that long.
WAITS = 2.0


def hostile(behaviour: str, *args: str, mode: str = "exit", timeout: float = HANG_GUARD) -> Client:
    return Client(
        argv=(sys.executable, str(HOSTILE), behaviour, *args),
        mode=mode,  # type: ignore[arg-type]
        timeout=timeout,
        line_timeout=min(timeout, HANG_GUARD),
    )


def leftovers(temp_dir: Path) -> tuple[set[str], list[str]]:
    """What is left in the test's temp folder (anything: the kit puts nothing else there),
    every half-written ``.*.tmp`` below the test's folder (the kit's atomic writes and the
    case cache), and the test's client processes still running."""
    temp = {p.name for p in temp_dir.iterdir()}
    temp |= {str(p) for p in temp_dir.parent.rglob(".*.tmp")}
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    procs = [line for line in ps.splitlines() if str(HOSTILE) in line or SLEEP in line]
    return temp, procs


#: Tests whose own process holds more than a client or a file can make the kit hold, by
#: design: the memory they use grows with the user's own configuration (held to CPU time
#: or bytes written instead).
OWN_PEAK_EXEMPT = {
    # 60,000 results of 10,000 cells, built by the test itself (227 MiB with pytest)
    "test_a_stopped_10000_cell_matrix_is_written_in_linear_time",
    # Hypothesis's 150 drawn conversations, each judged by every stream check in this
    # process: the test's own data and the checks' first imports (230 MiB once in a
    # clean-clone run), not what a client made the kit hold; the runner's bound on a
    # client's messages is held by the flood tests' kit processes
    "test_no_client_message_shape_raises_out_of_the_runner",
}


#: What a kit process holds once its modules are imported, before any work (measured:
#: 37 MiB): the in-process measure adds it to what a test made this process grow by.
KIT_IMPORTED_MIB = 40


def _own_kib(field: str) -> int | None:
    """This process's ``VmHWM`` (its peak since :func:`_reset_own_peak`) or ``VmRSS``, in
    KiB (``None``: not measurable here)."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(field))
    except (OSError, StopIteration):
        return None


def _reset_own_peak() -> bool:
    """Start this process's peak (VmHWM) again from its present size (Linux: clear_refs 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


@pytest.fixture(autouse=True)
def no_leaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    # A private temp directory per test: the kit's temp files (in-process through
    # tempfile.tempdir, in a kit subprocess through TMPDIR) land there and nowhere else,
    # so other tests running in parallel cannot be mistaken for leaks.
    global HOSTILE, SLEEP
    SLEEP = f"987.654{uuid.uuid4().int % 10**12:012d}"
    monkeypatch.setenv("HOSTILE_SLEEP", SLEEP)
    temp_dir = tmp_path / "tmp"
    temp_dir.mkdir()
    HOSTILE = tmp_path / "hostile_client.py"
    shutil.copyfile(SOURCE, HOSTILE)
    monkeypatch.setattr(tempfile, "tempdir", str(temp_dir))
    monkeypatch.setenv("TMPDIR", str(temp_dir))
    peaks = tmp_path / "kit-peaks.log"
    monkeypatch.setenv("STELLA_TEST_PEAKS", str(peaks))
    temp_before, _ = leftovers(temp_dir)
    measured_here = request.node.originalname not in OWN_PEAK_EXEMPT and _reset_own_peak()
    before = _own_kib("VmRSS") if measured_here else None
    yield
    # the kit run in this process (the runner, the supervisor): what it made this process
    # grow by, over a kit's own imported size (the worker's size before the test is other
    # tests' and pytest's: a worker that ran the rest of the suite first starts big)
    peak = _own_kib("VmHWM") if before is not None else None
    own = None if peak is None or before is None else KIT_IMPORTED_MIB * 1024 + peak - before
    deadline = time.monotonic() + 3
    while True:
        temp_after, procs = leftovers(temp_dir)
        if not procs or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not procs, f"client processes left running: {procs}"
    assert temp_after <= temp_before, f"temp files left: {temp_after - temp_before}"
    cap = MEMORY_CAP_MIB * 1024
    # every kit process the test started (MEASURED_KIT), and its forked workers
    logged = peaks.read_text().splitlines() if peaks.exists() else []
    kits = [line.split(None, 2) for line in logged]
    over = [k for k in kits if int(k[1]) >= cap]
    assert not over, f"kit processes over the {MEMORY_CAP_MIB} MiB cap (pid, KiB, command): {over}"
    assert own is None or own < cap, f"the kit in this process: {own // 1024} MiB (its size too)"


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


def test_grandchild_holding_the_pipes_is_killed_and_the_kit_returns() -> None:
    started = time.monotonic()
    obs = run_exit(hostile("grandchild", timeout=30), VALID)
    assert obs.verdict == "accept"
    assert time.monotonic() - started < HANG_GUARD  # not the grandchild's 987 s sleep


def test_report_mode_100_mib_line_is_a_protocol_error() -> None:
    obs = run_report(hostile("report-huge-line", mode="report"), VALID)
    assert obs.status == "protocol-error" and "longer than" in obs.detail


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
    """One process answers every case in persistent mode, and the stderr shown with a
    case was the process's last bytes: a failure quoted the client's words about earlier
    cases as its own; and a case the client crashed in showed no stderr at all (the dead
    process was thrown away before its stderr was read). Now each case's excerpt is what
    the process wrote from the case's start."""
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
    start counts in the case's timeout: a slow start was "no hello", not "no summary")."""
    session._ensure(time.monotonic() + HANG_GUARD)


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

    from stella_conform.conformance.checks import BY_ID, GradedCase
    from stella_conform.conformance.suite import CaseRunner, SuiteConfig

    token = f"task-{uuid.uuid4().hex}"
    client = Client(
        argv=(
            "sh",
            "-c",
            f"stella run --output-format stream-json {token} >/dev/null & sleep {SLEEP}",
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


# ---------------------------------------------------------------- round two (issue 18)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
TEMPLATES: dict[str, dict[str, object]] = {
    "hello": {"kind": "hello", "protocol": 1, "client": {"name": "p"}, "profiles": ["reader"]},
    "line": {"kind": "line", "line": 1, "outcome": "known", "type": "run_complete", "event": {}},
    "pending": {"kind": "pending", "line": 1},
    "summary": {
        "kind": "summary", "verdict": "accept", "rejected_line": None, "known_events": 1,
        "unrecognized_events": 0, "unrecognized_types": [], "final_text": None, "texts": [],
        "terminator": "run_complete", "turns_completed": 0, "stages": {"turn": [], "run": []},
        "elapsed_ms": 0, "preview": None, "tool_calls": [], "status": None, "text": None,
    },
}  # fmt: skip


@st.composite
def poisoned_conversations(draw: st.DrawFn, persistent: bool) -> list[bytes]:
    """A well-formed conversation with one position (or one whole message) replaced."""
    messages = [dict(TEMPLATES[k]) for k in ("hello", "pending", "line", "summary")]
    if persistent:
        for m in messages[1:]:
            m["id"] = "case-1"
    target = draw(st.integers(0, len(messages) - 1))
    value = draw(JSON_VALUES)
    if draw(st.booleans()):
        key = draw(st.sampled_from([*messages[target], "id", "extra"]))
        messages[target][key] = value
        lines = [json.dumps(m).encode() for m in messages]
    else:
        lines = [json.dumps(m).encode() for m in messages]
        lines[target] = json.dumps(value).encode()
    return lines


def _fake_run(monkeypatch: pytest.MonkeyPatch, lines: list[bytes], mode: str) -> Observation:
    from fake_peer import FakePeer

    from stella_conform.conformance.clients import runner

    monkeypatch.setattr(runner, "_start", lambda *a, **k: FakePeer(lines))
    client = Client(argv=("fake-peer",), mode=mode, timeout=1.0, line_timeout=0.5)  # type: ignore[arg-type]
    if mode == "report":
        return run_report(client, VALID)
    with PersistentSession(client) as session:
        return session.run(VALID)


@pytest.mark.parametrize("mode", ["report", "persistent"])
def test_no_client_message_shape_raises_out_of_the_runner(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Any JSON value in any message position: an Observation, a ProtocolError at worst."""
    from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge

    case = GradedCase("valid", VALID, "fixture")
    stream_checks = [c for c in BY_ID.values() if c.input == "stream"]

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(poisoned_conversations(persistent=mode == "persistent"))
    def prop(lines: list[bytes]) -> None:
        obs = _fake_run(monkeypatch, lines, mode)
        assert obs.status in ("ok", "protocol-error", "crash", "timeout")
        json.dumps(obs.to_json())  # the report can hold it
        obs.describe()
        for check in stream_checks:
            judge(check, case, obs, Context())

    prop()


def test_an_unhashable_kind_is_a_protocol_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in ("[]", "{}"):
        hello = json.dumps(TEMPLATES["hello"]).encode()
        obs = _fake_run(monkeypatch, [hello, b'{"kind":' + kind.encode() + b"}"], "report")
        assert obs.status == "protocol-error" and "unknown message kind" in obs.detail


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


def _run_report_kit(tmp_path: Path, behaviour: str) -> subprocess.CompletedProcess[str]:
    return kit(
        "run", "--mode", "report", "--examples", "0", "--only", "R1.valid-runs-accepted",
        "--no-database", "--json", "r.json", "--junit-xml", "r.xml", "--markdown", "r.md",
        "--failures-dir", "f", "--timeout", "60", "--line-timeout", "30",
        "--", sys.executable, str(HOSTILE), behaviour, cwd=tmp_path,
    )  # fmt: skip


def test_reports_survive_surrogates_nan_and_control_characters(tmp_path: Path) -> None:
    """Strict JSON (RFC 8259), XML 1.0 and UTF-8 Markdown, whatever the client wrote."""
    import xml.etree.ElementTree as ET

    out = _run_report_kit(tmp_path, "report-poison")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in report.json")

    doc = json.loads(
        (tmp_path / "r.json").read_bytes().decode("utf-8"), parse_constant=no_constants
    )
    check = doc["checks"][0]
    assert check["outcome"] == "fail"
    summary = check["failures"][0]["observed"]["summary"]
    assert summary["tool_calls"][0]["cost"] == "NaN" and summary["tool_calls"][0]["n"] == "Infinity"
    assert summary["final_text"].startswith("\ufffd")  # the lone surrogate, replaced
    ET.fromstring((tmp_path / "r.xml").read_bytes())  # well-formed XML 1.0
    (tmp_path / "r.md").read_bytes().decode("utf-8")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # written whole
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout


def is_one_code_span(text: str) -> bool:
    """CommonMark: a code span opens and closes with equal backtick runs, none inside."""
    import re

    fence = re.match(r"`+", text)
    if fence is None or not text.endswith(fence.group()):
        return False
    inner = text[len(fence.group()) : -len(fence.group())]
    return all(len(run) != len(fence.group()) for run in re.findall(r"`+", inner))


def test_client_text_cannot_inject_markdown_html_or_workflow_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTILE_FIRST_RUN_ANSWERS", str(tmp_path / "first"))  # the preflight
    out = _run_report_kit(tmp_path, "report-html")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    markdown = (tmp_path / "r.md").read_text()
    assert "<img" in markdown  # shown, but only inside a code span:
    for line in markdown.splitlines():
        if "<img" in line:
            detail = line.split(" | ")[2].split("<br>")[0]
            assert is_one_code_span(detail), detail
    assert not any(line.lstrip().startswith("::") for line in out.stdout.splitlines())
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    # the same client failing the preflight: one line on stderr, escaped too
    monkeypatch.delenv("HOSTILE_FIRST_RUN_ANSWERS")
    out = _run_report_kit(tmp_path, "report-html")
    assert out.returncode == 2 and "<img" in out.stderr
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    assert not any(line.lstrip().startswith("::") for line in out.stderr.splitlines())


# ------------------------------------------------------ hostile input files (issue 18, item 10)

PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sys.stderr.buffer.write(done.stderr)
    print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
""")


def kit_peak(*args: str, stdin: int | None = None, cwd: Path | None = None) -> tuple[int, int, str]:
    """Run the kit in a fresh parent: its exit status, its own peak MiB, its stderr.

    Some of these read a size (two million blank lines, 64 MiB of deltas: 10-30 CPU
    seconds): the guard is ten HANG_GUARDs, as the clean-clone run beside two CPU hogs
    took over 120 s for the blank lines (a fixed 120 s failed it, and left its copy of
    stdin behind, the kit still running)."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK, *KIT_ARGV, *args],
        stdin=stdin, capture_output=True, text=True, timeout=10 * HANG_GUARD, cwd=cwd,
    )  # fmt: skip
    code, peak = out.stdout.split()
    return int(code), int(peak), out.stderr


def hostile_inputs(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text('{"format":"stella-conform/report/1","checks":' + "[" * 100_000 + "\n")
    huge = tmp_path / "huge.json"
    huge.write_text('{"format":"stella-conform/report/1","n":' + "9" * 5000 + ',"checks":[]}\n')
    # a regular file whose read fails (EIO), as on a dying disk: decode was exit 3
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
    it was an OSError traceback and exit 3, "a bug in the kit"."""
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


# ------------------------------------------------------------ the file system (item 9)


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
    from stella_conform.conformance.matrix import (
        ClientSpec,
        MatrixConfig,
        VocabularySpec,
        _suite_config,
    )

    failures = tmp_path / "failures"
    config = MatrixConfig([], [], tmp_path, failures_dir=failures)
    suite = _suite_config(config, ClientSpec(name, ("true",)), VocabularySpec(name))
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


# ------------------------------------------------------------ the composite action (item 7)


def test_the_action_never_evaluates_its_inputs(tmp_path: Path) -> None:
    """$(…), backticks, ; and globs in every input: nothing runs, words arrive as written."""
    import yaml
    from test_ci_action import ACTION, github_outputs

    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "grade")
    assert "eval" not in step["run"] and "${{" not in step["run"]
    for other in ACTION["runs"]["steps"]:
        assert "${{" not in other.get("run", ""), other["name"]  # inputs only through env
    yaml.safe_dump(ACTION)
    (tmp_path / "decoy.txt").touch()  # an unquoted * would expand to it
    env = dict(os.environ)
    env["PATH"] = f"{KIT.parent}{os.pathsep}{env['PATH']}"
    env.update(
        CLIENT="'/no/such dir/$(touch pwned1)' `touch pwned2`; touch pwned3 | touch pwned4 *",
        MODE="exit",
        PROFILES="reader;touch${IFS}pwned5 $(touch pwned6) *",
        KNOWN="$(touch pwned7)",
        EXAMPLES="1",
        SEED="0",
        GITHUB_OUTPUT=str(tmp_path / "output"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary"),
    )
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("pwned*")), "an input was executed"
    assert github_outputs((tmp_path / "output").read_text()) == {"exit-code": "2"}
    assert "unknown profile 'reader;touch${IFS}pwned5'" in done.stderr
    # with good profiles, the first word reaches the kit whole, quotes honoured
    env.update(PROFILES="reader", KNOWN="")
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert "client not found: /no/such dir/$(touch pwned1)" in done.stderr
    assert not list(tmp_path.glob("pwned*"))


# ------------------------------------------- clients that follow the protocol (item 4)


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


# ------------------------------------------- report merge and the matrix page (item 8)

POISON = (
    '"><script>document.documentElement.setAttribute("data-pwned","script")</script>'
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
    " @octocat [x](https://evil.invalid) |"
)


def poisoned_matrix(shard: str) -> dict[str, object]:
    """A matrix shard that passes the schema, with markup in every string a page shows."""
    report = {
        "format": "stella-conform/report/1",
        "kit": {"name": "stella-conform", "version": POISON},
        "corpus_version": POISON, "vocabulary": POISON, "seed": 0, "examples": 0,
        "date": POISON, "client": {"command": [POISON], "mode": "exit"},
        "summary": {"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0},
        "exit_code": 0, "known_failures_now_passing": [], "shard": shard,
        "checks": [{"id": POISON + shard, "outcome": "pass", "message": POISON,
                    "known_failure": POISON, "failures": []}],
    }  # fmt: skip
    return {
        "format": "stella-conform/matrix/1",
        "kit": report["kit"], "corpus_version": POISON, "date": POISON, "seed": 0,
        "examples": 0, "shard": shard, "exit_code": 0,
        "clients": [{"name": POISON, "command": [POISON], "mode": "exit", "profiles": []}],
        "vocabularies": [{"name": POISON + "v", "ident": POISON, "wire_schema": POISON}],
        "cells": [{"client": POISON, "vocabulary": POISON + "v", "report": report}],
    }  # fmt: skip


def _elements(page: str) -> tuple[list[str], dict[str, str | None]]:
    """Every element's tag, and the root element's attributes, as a parser sees them."""
    from html.parser import HTMLParser

    tags: list[str] = []
    root: dict[str, str | None] = {}

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)
            if tag == "html":
                root.update(attrs)

    Parser().feed(page)
    return tags, root


def test_a_poisoned_shard_cannot_run_script_in_the_matrix_page(tmp_path: Path) -> None:
    """Markup in every name and message: the merged page and Markdown show it as text."""
    from click.testing import CliRunner
    from test_matrix import CHROMIUM, FLAGS

    from stella_conform.cli import main

    shards = []
    for shard in ("1/2", "2/2"):
        path = tmp_path / f"shard{shard[0]}.json"
        path.write_text(json.dumps(poisoned_matrix(shard)))
        shards.append(str(path))
    page, markdown = tmp_path / "m.html", tmp_path / "m.md"
    args = ["report", "merge", "--html", str(page), "--markdown", str(markdown)]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "m.json"), *shards])
    assert result.exit_code == 0, (result.output, result.exception)
    tags, root = _elements(page.read_text())
    assert "script" not in tags and "img" not in tags and "data-pwned" not in root
    for line in markdown.read_text().splitlines():
        outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line)  # text outside code spans
        outside = re.sub(r"<code>[^<]*</code>", "", outside)  # and names: no < inside them
        assert not [c for c in ("<", "@octocat", "](") if c in outside], line
    if CHROMIUM is None:
        if os.environ.get("STELLA_CONFORM_REQUIRE_BROWSER"):
            pytest.fail("no chromium, and STELLA_CONFORM_REQUIRE_BROWSER is set (.ci/run)")
        pytest.skip("no chromium (.ci/run installs Debian's)")
    short = Path(tempfile.mkdtemp(prefix="chromium-", dir="/tmp"))  # its socket path is short
    try:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={short / 'profile'}", "--dump-dom",
             page.as_uri()],
            capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(short)},
        )  # fmt: skip
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    tags, root = _elements(done.stdout)
    assert "script" not in tags and "img" not in tags, "the shard's markup became elements"
    assert "data-pwned" not in root, "a script from the shard ran in the browser"
    assert "data-pwned" in done.stdout  # the poison is on the page, as text


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("cells", 0, "report", "checks", 0, "outcome"), "<img src=x onerror=alert(1)>"),
        (("cells", 0, "report", "summary"), {"pass": 1}),
        (("clients", 0, "name"), ["not", "a", "string"]),
        (("cells", 0, "client"), "someone else"),
    ],
)
def test_a_tampered_shard_is_refused_in_one_line(
    tmp_path: Path, where: tuple[object, ...], value: object
) -> None:
    from click.testing import CliRunner

    from stella_conform.cli import main

    doc: Any = poisoned_matrix("1/1")
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    shard = tmp_path / "shard.json"
    shard.write_text(json.dumps(doc))
    out = tmp_path / "m.json"
    args = ["report", "merge", "--markdown", str(tmp_path / "m.md"), str(out), str(shard)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.startswith("stella-conform: malformed") and result.stderr.count("\n") == 1
    assert not out.exists()


# ------------------------------------------------------------ stopping the kit (item 5)


def _ps() -> str:
    return subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout


def _grandchildren(token: str) -> int:
    """How many ``sleep TOKEN`` grandchildren (not clients, whose arguments hold it too)."""
    return sum(line.split(None, 1)[1:] == [f"sleep {token}"] for line in _ps().splitlines())


@pytest.mark.parametrize(
    ("signum", "jobs"),
    [(signal.SIGTERM, "2"), (signal.SIGHUP, "2"), (signal.SIGINT, "2"), (signal.SIGTERM, "1")],
)
def test_a_stop_signal_stops_clients_workers_and_grandchildren(
    tmp_path: Path, signum: int, jobs: str
) -> None:
    """Clients hang with a setsid grandchild each: the signal ends all of it in 2 s."""
    token = f"{SLEEP}{signum}{jobs}"  # the leak check looks for SLEEP
    kit_proc = subprocess.Popen(
        [
            *KIT_ARGV, "run", "--mode", "exit", "--examples", "2", "--timeout", "60", "-j", jobs,
            "--no-database",
            "--json", "r.json", "--markdown", "r.md", "--junit-xml", "r.xml",
            "--", sys.executable, str(HOSTILE), "setsid-hang", token, str(tmp_path / "first"),
        ],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _grandchildren(token) < int(jobs):  # every worker's client has its grandchild
            assert time.monotonic() < deadline and kit_proc.poll() is None, "no client started"
            time.sleep(0.1)
        started = time.monotonic()
        kit_proc.send_signal(signum)
        out, err = kit_proc.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        if kit_proc.poll() is None:  # the test failed: leave nothing running
            kit_proc.kill()
            kit_proc.wait()
    assert kit_proc.returncode == 128 + signum, (kit_proc.returncode, err[-2000:])
    # the client hangs for 60 s (its --timeout), its grandchild for 987: the kit waited for
    # neither (docs/reliability.md gives the measured time to exit, a fraction of a second)
    assert took < HANG_GUARD / 2, f"took {took:.2f} s"
    assert "Traceback" not in err, err
    time.sleep(0.2)
    left = [line for line in _ps().splitlines() if token in line or str(HOSTILE) in line]
    assert not left, left
    doc = json.loads((tmp_path / "r.json").read_text())
    name = signal.Signals(signum).name
    assert doc["incomplete"].startswith(f"stopped by {name}"), doc.get("incomplete")
    assert doc["exit_code"] == 128 + signum  # a CI step reading the report sees the stop
    assert f"incomplete: stopped by {name}" in (tmp_path / "r.md").read_text()
    assert f"INCOMPLETE: stopped by {name}" in out
    assert not list(tmp_path.glob(".*.tmp"))


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_kit_leaves_no_worker_client_or_grandchild(tmp_path: Path) -> None:
    """SIGKILL cannot be handled: the kernel stops the -j workers, and they their clients."""
    token = f"{SLEEP}9"
    kit_proc = subprocess.Popen(
        [
            *KIT_ARGV, "run", "--mode", "exit", "--examples", "2", "--timeout", "60", "-j", "2",
            "--no-database",
            "--", sys.executable, str(HOSTILE), "setsid-hang", token, str(tmp_path / "first"),
        ],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _grandchildren(token) < 2:  # both workers' clients have their grandchild
            assert time.monotonic() < deadline and kit_proc.poll() is None, "no client started"
            time.sleep(0.1)
        with open(f"/proc/{kit_proc.pid}/task/{kit_proc.pid}/children") as fh:
            workers = [int(p) for p in fh.read().split() if not _the_watchdog(int(p))]
        assert len(workers) >= 2, workers
    finally:
        kit_proc.kill()
        kit_proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [pid for pid in workers if _alive(pid)]
        ours = [line for line in _ps().splitlines() if token in line or str(HOSTILE) in line]
        if not left and not ours:
            break
        time.sleep(0.1)
    for pid in left:  # the test failed: stop what the kit left (a worker kills its clients)
        os.kill(pid, signal.SIGTERM)
    assert not left and not ours, (left, ours)


def _the_watchdog(pid: int) -> bool:
    """Whether ``pid`` is a kit's watchdog (it outlives the kit a moment, by design)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"watchdog.py" in fh.read()
    except OSError:
        return False


def _children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _busy_worker(kit_pid: int, tmp_path: Path, cached: bool) -> int | None:
    """A -j worker of the kit in the middle of a check: its client is running (hanging)
    and, if the command keeps a case cache (``cached``), its file is half written (open,
    ``.*.tmp``)."""
    for worker in _children_of(kit_pid):
        try:
            fds = os.listdir(f"/proc/{worker}/fd")
            files = [os.readlink(f"/proc/{worker}/fd/{fd}") for fd in fds]
        except OSError:
            continue
        half_written = [f for f in files if f.startswith(str(tmp_path)) and f.endswith(".tmp")]
        if _children_of(worker) and (half_written or not cached):
            return worker
    return None


def _kill_a_worker(
    proc: subprocess.Popen[str], busy: Callable[[], int | None]
) -> tuple[int, list[int], str]:
    """SIGKILL the -j worker of ``proc`` that ``busy()`` names, once it names one: the
    worker, the clients it had, and what ``proc`` wrote on stderr by its end."""
    try:
        deadline = time.monotonic() + 120
        while (worker := busy()) is None:
            assert time.monotonic() < deadline and proc.poll() is None, "no worker mid-check"
            time.sleep(0.1)
        clients = _children_of(worker)
        os.kill(worker, signal.SIGKILL)
        _out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:  # the test failed: leave nothing running
            proc.kill()
            proc.wait()
    return worker, clients, err


#: The commands that grade with -j workers, and where each writes its report (a matrix
#: keeps no case cache).
WITH_WORKERS = {"run": "r.json", "matrix": "out/matrix.json"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("name", list(WITH_WORKERS))
def test_a_worker_killed_from_outside_is_named_and_leaves_nothing(
    tmp_path: Path, name: str
) -> None:
    """SIGKILL of one -j worker (the OOM killer's way) in the middle of a check: one line
    that says so, exit 137 (128 + 9), what was graded in the report marked incomplete, and
    neither its clients, their grandchildren, its {stream} folders nor its half-written
    case-cache file left behind (it was a BrokenProcessPool traceback, exit 3)."""
    token = f"{SLEEP}{len(name)}"
    # answers its first runs (the probe, some cases of each check), then hangs
    answers = "60" if name == "run" else "12"
    client = [
        sys.executable, str(HOSTILE), "answer-then-hang", token, str(tmp_path / "runs"),
        answers, "{stream}",
    ]  # fmt: skip
    if name == "run":
        command = [
            "run", "--mode", "exit", "--timeout", "60", "-j", "2", "--no-database",
            "--only", "R1.line-by-line", "--only", "R1.valid-runs-accepted",
            "--only", "R5.unknown-fields-ignored", "--json", "r.json", "--", *client,
        ]  # fmt: skip
    else:
        (tmp_path / "m.toml").write_text(
            f'[matrix]\nexamples = 25\njobs = 2\n\n[[client]]\nname = "c"\n'
            f'command = {json.dumps(client)}\nmode = "exit"\ntimeout = 60\n'
        )
        command = ["matrix", "m.toml", "--out", "out"]
    proc = subprocess.Popen(
        [*KIT_ARGV, *command], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def busy() -> int | None:  # a worker mid-check; a client hangs, its grandchild escaped
        worker = _busy_worker(proc.pid, tmp_path, name == "run")
        return worker if worker is not None and _grandchildren(token) >= 1 else None

    worker, _clients, err = _kill_a_worker(proc, busy)
    assert proc.returncode == 128 + signal.SIGKILL, (proc.returncode, err[-3000:])
    assert "Traceback" not in err and "internal error" not in err, err[-3000:]
    said = f"a -j worker process (pid {worker}) was killed by SIGKILL from outside the kit"
    [line] = [line for line in err.splitlines() if line.startswith("stella-conform:")]
    assert line.startswith(f"stella-conform: {said} after ") and "OOM killer" in line, err
    doc = json.loads((tmp_path / WITH_WORKERS[name]).read_text())
    assert doc["incomplete"].startswith(said), doc["incomplete"]
    assert doc["exit_code"] == 128 + signal.SIGKILL, doc["exit_code"]
    if name == "run":  # the check graded before the loss is kept
        assert [c["id"] for c in doc["checks"]] == ["R1.line-by-line"], doc["checks"]
    assert not _settled(token), _escaped(token)
    # (the leak check: no {stream} folder in TMPDIR, no .*.tmp below the test's folder)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_benchmark_s_worker_killed_from_outside_is_one_line(tmp_path: Path) -> None:
    """benchmarks/conforming.py (and power.py, the same pool) grades in -j workers too: one
    SIGKILLed mid-run is the same one line and exit 137, its client gone; it was
    BrokenProcessPool's traceback."""
    bench = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / "conforming.py"), "--seeds", "2", "-j", "2",
         "--clients", "python/reference_client.py"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    worker, clients, err = _kill_a_worker(
        bench, lambda: next((w for w in _children_of(bench.pid) if _children_of(w)), None)
    )
    assert bench.returncode == 128 + signal.SIGKILL, (bench.returncode, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    said = f"stella-conform: a -j worker process (pid {worker}) was killed by SIGKILL"
    assert said in err, err[-3000:]
    assert not [pid for pid in clients if _alive(pid)], "the killed worker's client lives on"


def test_a_setsid_grandchild_is_reaped_after_its_case() -> None:
    """The client exits, its grandchild left the group: the kit (a subreaper) kills it."""
    driver = textwrap.dedent("""
        import subprocess, sys
        from stella_conform import stopping
        from stella_conform.conformance.clients.runner import Client, run_exit
        assert stopping.become_subreaper()
        obs = run_exit(Client(argv=tuple(sys.argv[1:]), timeout=30), b"{}\\n")
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        print(obs.verdict, sys.argv[-1] in ps)
    """)
    token = f"{SLEEP}1"
    out = subprocess.run(
        [sys.executable, "-c", driver, sys.executable, str(HOSTILE), "setsid-exit", token],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["accept", "False"], out.stderr


def test_replay_shows_client_text_without_escape_sequences_or_workflow_commands() -> None:
    """A line ``type`` with a screen clear, stderr with ``::error::`` at a line start."""
    fixture = bundled_fixtures_dir() / "minimal_run.jsonl"
    args = ["replay", str(fixture), "--mode", "report", "--timeout", "60"]
    out = kit(*args, "--", sys.executable, str(HOSTILE), "report-poison")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "\\x1b[2J" in out.stdout and ":\u200b:error::x" in out.stdout  # shown, as text
    for bad in ("\x1b", "\x07", "\x9b"):
        assert bad not in out.stdout + out.stderr
    assert not any(line.lstrip().startswith("::") for line in out.stdout.splitlines())


def test_a_stop_signal_stops_a_matrix_and_writes_it_incomplete(tmp_path: Path) -> None:
    token = f"{SLEEP}0"
    command = [sys.executable, str(HOSTILE), "setsid-hang", token, str(tmp_path / "first")]
    (tmp_path / "m.toml").write_text(
        f'[matrix]\nexamples = 2\njobs = 2\n\n[[client]]\nname = "hangs"\n'
        f'command = {json.dumps(command)}\nmode = "exit"\n'
    )
    matrix = subprocess.Popen(
        [*KIT_ARGV, "matrix", "m.toml", "--out", "out"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _ps().count(token) < 2:
            assert time.monotonic() < deadline and matrix.poll() is None, "no client started"
            time.sleep(0.1)
        started = time.monotonic()
        matrix.send_signal(signal.SIGTERM)
        _out, err = matrix.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        if matrix.poll() is None:
            matrix.kill()
            matrix.wait()
    assert matrix.returncode == 143 and "Traceback" not in err, err[-2000:]
    # the client hangs for 60 s (its --timeout), its grandchild for 987: the kit waited for
    # neither (docs/reliability.md gives the measured time to exit, a fraction of a second)
    assert took < HANG_GUARD / 2, f"took {took:.2f} s"
    time.sleep(0.2)
    assert not [line for line in _ps().splitlines() if token in line or str(HOSTILE) in line]
    doc = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert doc["incomplete"].startswith("stopped by SIGTERM")
    assert doc["exit_code"] == 143 and doc["cells"][0]["report"]["exit_code"] == 143


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
        # then is the kit's (a fixed 1 s raced the client's start at load 20)
        timeout = _timeout_for(*PY_REFERENCE)
        doc = _grade_on_a_busy_machine(tmp_path, *PY_REFERENCE, timeout=f"{timeout:.1f}")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert [c["outcome"] for c in doc["checks"]] == ["pass"], doc["checks"]


# ------------------------------------- one supervisor for every command (issue 27, item 1)

#: Every command that starts processes, as (arguments before the client, how the client is
#: given). Each grades a client that puts a grandchild in a session of its own per run.
SUPERVISED = ("run", "fuzz", "replay", "smoke", "corpus-diff", "matrix")


def _command(name: str, client: list[str], tmp_path: Path, timeout: str) -> list[str]:
    """The command line of ``name`` grading ``client`` in exit mode, reports in tmp_path."""
    case = str(bundled_fixtures_dir() / "minimal_run.jsonl")
    reports = ["--json", "r.json", "--markdown", "r.md", "--junit-xml", "r.xml"]
    if name == "run":
        return [
            "run", "--mode", "exit", "--examples", "1", "--no-database", "--timeout", timeout,
            "-j", "1",
            "--only", "R1.*", *reports, "--", *client,
        ]  # fmt: skip
    if name == "fuzz":
        return [
            "fuzz", "--mode", "exit", "--for", "3s", "--no-database", "--timeout", timeout,
            "--only", "R1.valid-runs-accepted", "--max-shrinks", "0", *reports, "--", *client,
        ]  # fmt: skip
    if name == "replay":
        return ["replay", case, "--timeout", timeout, "--", *client]
    if name == "smoke":
        return ["smoke", "--timeout", timeout, "--", *client]
    if name == "corpus-diff":
        return [
            "corpus", "diff", "--oracle", shlex.join(client), "--generated", "2",
            "--timeout", timeout, "--json", "r.json",
        ]  # fmt: skip
    (tmp_path / "m.toml").write_text(
        f'[matrix]\nexamples = 1\njobs = 1\n\n[[client]]\nname = "c"\n'
        f'command = {json.dumps(client)}\nmode = "exit"\ntimeout = {timeout}\n'
    )
    return ["matrix", "m.toml", "--out", "out", "--examples", "1"]


def _escaped(token: str) -> list[str]:
    """Processes of this test still running: its clients and their setsid grandchildren."""
    return [line for line in _ps().splitlines() if token in line or str(HOSTILE) in line]


def _settled(token: str) -> list[str]:
    """What is left once the kit is gone (a killed process takes a moment to go)."""
    deadline = time.monotonic() + 3
    while (left := _escaped(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("name", SUPERVISED)
def test_no_grandchild_outlives_a_command_that_finished(tmp_path: Path, name: str) -> None:
    """Every run of the client starts a grandchild in a session of its own and exits; when
    the command is done, none is left (fuzz left 300 of 300, replay and smoke all)."""
    token = f"{SLEEP}{SUPERVISED.index(name)}"
    client = [sys.executable, str(HOSTILE), "setsid-exit", token]
    done = subprocess.run(
        [*KIT_ARGV, *_command(name, client, tmp_path, "30")], cwd=tmp_path,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not _settled(token), _escaped(token)


def _stopped(tmp_path: Path, name: str, signals: tuple[int, ...]) -> tuple[int, str, str]:
    """Start ``name`` on a client that hangs with a setsid grandchild, send ``signals``."""
    token = f"{SLEEP}{SUPERVISED.index(name)}{signals[0]}{len(signals)}"
    first = tmp_path / "first"
    if name not in ("run", "fuzz"):  # no probe run before the case: hang on the first one
        first.touch()
    client = [sys.executable, str(HOSTILE), "setsid-hang", token, str(first)]
    proc = subprocess.Popen(
        [*KIT_ARGV, *_command(name, client, tmp_path, "60")], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while _grandchildren(token) < 1:  # a client is running, its grandchild escaped
            assert time.monotonic() < deadline and proc.poll() is None, "no client started"
            time.sleep(0.1)
        for signum in signals:
            proc.send_signal(signum)
            time.sleep(0.3)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # the test failed: leave nothing running
            proc.kill()
            proc.wait()
    assert not _settled(token), _escaped(token)
    return proc.returncode, out, err


STOPS = {
    "SIGTERM": (signal.SIGTERM,),
    "SIGHUP": (signal.SIGHUP,),
    "two Ctrl-Cs": (signal.SIGINT, signal.SIGINT),
}


@pytest.mark.parametrize("stop", list(STOPS))
@pytest.mark.parametrize("name", SUPERVISED)
def test_every_command_stops_on_a_signal_leaving_nothing(
    tmp_path: Path, name: str, stop: str
) -> None:
    """SIGTERM, SIGHUP or two Ctrl-Cs while a client hangs with an escaped grandchild: the
    command exits 128 + N at once, nothing is left running, reports say incomplete."""
    signals = STOPS[stop]
    code, out, err = _stopped(tmp_path, name, signals)
    assert code == 128 + signals[0], (code, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    assert not list(tmp_path.glob(".*.tmp"))
    report = tmp_path / ("out/matrix.json" if name == "matrix" else "r.json")
    if name in ("run", "fuzz", "corpus-diff", "matrix") and report.exists():
        doc = json.loads(report.read_text())
        assert doc["incomplete"].startswith("stopped by"), out
        if name != "corpus-diff":  # (its document has no exit status of its own)
            assert doc["exit_code"] == code, (doc["exit_code"], code)
    if name == "fuzz" or (name in ("run", "corpus-diff", "matrix") and len(signals) == 1):
        assert report.exists(), (out, err[-2000:])  # a partial report, written whole
    if name == "fuzz":
        said = json.loads(report.read_text())["fuzz"]["stopped"]
        assert said == f"stopped by {signal.Signals(signals[-1]).name}", said


#: The commands a SIGKILL may hit mid-case: every supervised one, and ``run`` with workers.
KILLED = (*SUPERVISED, "run -j 2")
#: Seconds what a SIGKILLed kit left may take to go. Not a speed: the watchdog acts in well
#: under a second; without it the client sleeps an hour, so only a leak reaches it.
KILLED_GUARD = 30.0


def _ours(token: str) -> list[str]:
    """This test's processes still running, found in ``/proc`` by their whole argument
    vector (``ps`` cuts its lines at 80 columns when not writing to a terminal, past a
    long path): its client (its private copy's path) and what it started (the token)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if (token.encode() in argv or str(HOSTILE).encode() in argv) and _alive(int(name)):
            found.append(f"{name} {b' '.join(argv).decode(errors='replace')}")
    return found


def _watching(kit_pid: int) -> bool:
    """Whether the watchdog of the kit ``kit_pid`` is still at work (its token starts with
    the kit's pid)."""
    mark = f"STELLA_CONFORM_WATCHDOG={kit_pid}-".encode()
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if any(a.startswith(mark) for a in fh.read().split(b"\0")) and _alive(int(name)):
                    return True
        except (OSError, ValueError):
            continue
    return False


def _kill_what_is_left(token: str) -> None:
    """The test failed: SIGKILL what it left."""
    for line in _ours(token):
        pid = int(line.split(None, 1)[0])
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the scan reads /proc")
@pytest.mark.parametrize("name", KILLED)
def test_nothing_outlives_a_kit_killed_by_sigkill(tmp_path: Path, name: str) -> None:
    """SIGKILL runs none of the kit's clean-up. Its client ignores SIGTERM, SIGHUP, SIGINT
    and its stdin closing, and leaves a child in its group and a grandchild in a session
    of its own: none of them is left once the kit is gone (the watchdog). Without it, a
    ``-j 1`` run's (and fuzz's, replay's, smoke's, ...) ran on for the client's hour."""
    command = name.split()[0]
    token = f"{SLEEP}{KILLED.index(name)}7"
    first = tmp_path / "first"
    if command not in ("run", "fuzz"):  # no probe run before the case: hang on the first one
        first.touch()
    client = [sys.executable, str(HOSTILE), "stubborn", token, str(first)]
    argv = _command(command, client, tmp_path, "600")
    if name == "run -j 2":
        argv[argv.index("-j") + 1] = "2"
    proc = subprocess.Popen(
        [*KIT_ARGV, *argv], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while _grandchildren(token) < 2:  # a client runs, with its child and grandchild
            assert time.monotonic() < deadline and proc.poll() is None, "no client started"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + KILLED_GUARD
    # (and the kit's watchdog done: it removes the kit's temporary folders once no client
    # is left, which the leak check holds too)
    while ((left := _ours(token)) or _watching(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    _kill_what_is_left(token)
    assert not left, left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the scan reads /proc")
def test_a_kit_killed_by_sigkill_before_any_client_leaves_no_folder(tmp_path: Path) -> None:
    """``decode -`` starts no client: it keeps a copy of its stdin in
    a temporary folder, which a SIGKILL (a CI hard cancel, the OOM killer) left behind
    with everything read so far (review-6 R6-2): the watchdog starts with the first
    temporary folder too, and removes it."""
    temp = tmp_path / "temporary"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen(
        [*KIT_ARGV, "decode", "-"], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(b'{"type": "run_started", "ts": 1}\n')
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while not any(temp.iterdir()):  # the copy of stdin is being kept
            assert time.monotonic() < deadline and proc.poll() is None, "no folder made"
            time.sleep(0.05)
        time.sleep(0.5)  # (its watchdog told of it: the line follows the folder at once)
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
    deadline = time.monotonic() + KILLED_GUARD
    while any(temp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(temp.iterdir())


#: A client that notes its watchdog's token (in its environment), then reads its stream.
TOKEN_CLIENT = (
    "import os, sys\n"
    "with open(sys.argv[1], 'a') as log:\n"
    "    log.write(os.environ.get('STELLA_CONFORM_WATCHDOG', '') + '\\n')\n"
    "sys.stdin.buffer.read()\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the scan reads /proc")
@pytest.mark.parametrize("name", ["replay", "run", "run -j 2", "fuzz", "run stopped"])
def test_no_watchdog_outlives_a_command_that_ended(tmp_path: Path, name: str) -> None:
    """A command that ends (a verdict, or stopped by SIGTERM: its clean-up ran) tells its
    watchdog so and waits for it: no process of the kit is left once the command has
    returned (review-6 R6-7: the watchdog, in a session of its own, outlived every
    command by its three scans of /proc, ~100 ms). Looked for once, as the command
    returns (polling would wait for what the watchdog did before); that a watchdog ran
    is the token each client was given."""
    command = name.split()[0]
    (tmp_path / "token_client.py").write_text(TOKEN_CLIENT)
    log = tmp_path / "tokens"
    argv = _command(command, [sys.executable, "token_client.py", str(log)], tmp_path, "60")
    if name == "run -j 2":
        argv[argv.index("-j") + 1] = "2"
    proc = subprocess.Popen(
        [*KIT_ARGV, *argv], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if name == "run stopped":
        deadline = time.monotonic() + 120
        while not log.exists():  # a client has run: a case is under way
            assert time.monotonic() < deadline and proc.poll() is None, "no client started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    watching = _watching(proc.pid)
    assert proc.returncode in ((143,) if name == "run stopped" else (0, 1)), err.decode()
    tokens = set(log.read_text().split())
    assert len(tokens) == 1 and tokens.pop().startswith(f"{proc.pid}-"), log.read_text()
    assert not watching


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the scan reads /proc")
@pytest.mark.parametrize("lines", [b"=clean\n", b"=clean\n+g 999999\n-g 999999\n"])
def test_a_clean_kit_s_word_is_checked_not_trusted(lines: bytes) -> None:
    """The watchdog of a kit that said ``=clean`` still scans once: a process the kit's own
    clean-up missed (one carrying the kit's mark, out of its reach) is killed all the
    same; and a line after ``=clean`` (a worker still at work) takes it back."""
    from stella_conform.stopping import watchdog

    token = f"test-{os.getpid()}-{os.urandom(4).hex()}"
    env = {**os.environ, "STELLA_CONFORM_WATCHDOG": token}
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env)
    read_end, write_end = os.pipe()
    try:
        dog = subprocess.Popen(
            [sys.executable, "-I", "-S", watchdog.__file__, str(read_end),
             f"STELLA_CONFORM_WATCHDOG={token}"],
            pass_fds=(read_end,),
        )  # fmt: skip
        os.close(read_end)
        os.write(write_end, lines)
        os.close(write_end)
        assert dog.wait(timeout=120) == 0
        assert left.wait(timeout=120) == -signal.SIGKILL
    finally:
        left.kill()
        left.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the scan reads /proc")
def test_no_watchdog_outlives_a_command_without_a_client(tmp_path: Path) -> None:
    """``decode -`` keeps its copy of stdin in a temporary folder, which starts the watchdog
    (R6-2); it is gone as the command returns, as after a command with clients."""
    proc = subprocess.Popen(
        [*KIT_ARGV, "decode", "-"], cwd=tmp_path, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b'{"type": "run_complete", "model": "m", "cost_usd": 0}\n')
    proc.stdin.flush()
    deadline = time.monotonic() + 120
    while not _watching(proc.pid):
        assert time.monotonic() < deadline and proc.poll() is None, "no watchdog started"
        time.sleep(0.05)
    proc.stdin.close()
    assert proc.wait(timeout=300) == 0
    assert not _watching(proc.pid)


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
    from stella_conform.cli._common import cap_jobs

    assert cap_jobs(cap) == cap and cap_jobs(1) == 1


# ----------------------------------------------------- fuzz within its bounds (item 3)


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


def test_a_stopped_10000_cell_matrix_is_written_in_linear_time(tmp_path: Path) -> None:
    """What a stopped matrix writes, at 10,000 cells with 60,000 results: a few CPU-seconds
    (each cell's results were found by scanning every task: over nine minutes)."""
    from stella_conform.cli.report import _json_text
    from stella_conform.conformance import matrix as m
    from stella_conform.conformance.suite import CheckResult

    client = '[[client]]\nname = "c{}"\ncommand = ["true"]\nmode = "exit"\n'
    vocabulary = '[[vocabulary]]\nname = "v{}"\nvocabulary = "stella-default"\n'
    config_text = ["[matrix]\nexamples = 0\n"]
    config_text += [client.format(i) for i in range(500)]
    config_text += [vocabulary.format(j) for j in range(20)]
    (tmp_path / "m.toml").write_text("\n".join(config_text))
    config = m.load_config(tmp_path / "m.toml")
    tasks = config.tasks()
    suites = [m._suite_config(config, c, v) for c, v in config.cells()]
    results = {
        (cell, c.id): CheckResult(c.id, c.name, c.rule, c.tier, "pass", "1 case(s)", cases=1)
        for cell, c in tasks[: len(tasks) * 3 // 10]
    }
    started = time.process_time()
    doc = m._matrix_document(config, tasks, suites, results, None, "stopped by SIGTERM")
    written = [_json_text(doc), m.to_markdown(doc), m.to_html(doc)]
    cpu = time.process_time() - started
    assert len(doc["cells"]) == 10_000 and sum(
        len(c["report"]["checks"]) for c in doc["cells"]
    ) == len(results)
    assert all(written) and cpu < 5, f"{cpu:.1f} CPU-s"


@pytest.mark.parametrize(
    ("behaviour", "args"),
    [
        ("hang-no-read", ()),  # never reads, never writes: the wait, then exit mode
        ("trickle", ()),  # one byte a second, never a line
        ("report-huge-line", ()),  # a hello, then a 100 MiB line: the hello decides
        ("grandchild", ()),  # a grandchild holding the pipes
    ],
)
def test_the_auto_mode_probe_is_bounded_and_leaves_nothing(
    behaviour: str, args: tuple[str, ...]
) -> None:
    """``--mode auto`` starts every client once before grading: whatever it does then, the
    probe ends within its wait and takes the client's processes with it.  Only a client
    that never says hello nor reads stdin is given a short wait (nothing else can end its
    probe); the others get one only a hang reaches, so a slow start cannot race it."""
    from stella_conform.conformance.clients.automode import choose_mode

    args = args or (SLEEP,) if behaviour == "grandchild" else args
    waited = behaviour in ("hang-no-read", "trickle")
    started = time.monotonic()
    choice = choose_mode(
        hostile(behaviour, *args, timeout=120.0), wait=3.0 if waited else HANG_GUARD
    )
    if waited:
        assert time.monotonic() - started < HANG_GUARD  # the 3 s wait, not the 120 s timeout
    assert choice.mode == ("report" if behaviour == "report-huge-line" else "exit")
    # what ended it: the 3 s wait, the read of stdin, the hello
    ended = {
        "hang-no-read": "no hello, none within 3 s",  # asleep, but in no read of stdin
        "trickle": "no hello, none within 3 s",
        "report-huge-line": "its hello lists no modes (report: every adapter speaks it)",
        "grandchild": "no hello, it waited for input without writing one",
    }
    assert choice.reason == ended[behaviour]


def test_the_auto_mode_probe_reaps_a_grandchild_that_left_the_session(tmp_path: Path) -> None:
    """``run`` (a subreaper) probes a client that starts a grandchild in a session of its
    own: the probe's grandchild is killed with the probe, as every case's is."""
    out = kit(
        "run", "--examples", "0", "--only", "R1.valid-runs-accepted", "--no-database",
        "--", sys.executable, str(HOSTILE), "setsid-exit", SLEEP, cwd=tmp_path,
    )  # fmt: skip
    assert "in exit mode (auto: no hello, it waited for input" in out.stderr, out.stderr
    assert out.returncode == 0, out.stdout


# ---------------------------------------------- one safe reader, streaming (item 2)


def _peak_of(generator: list[str], *args: str) -> tuple[int, int, str]:
    gen = subprocess.Popen([sys.executable, *generator], stdout=subprocess.PIPE)
    assert gen.stdout is not None
    try:
        return kit_peak(*args, stdin=gen.stdout.fileno())
    finally:
        gen.stdout.close()
        gen.wait()


@pytest.mark.parametrize("kind", ["deltas", "tools"])
def test_decode_keeps_a_bounded_summary_of_a_huge_stream(kind: str) -> None:
    """64 MiB of text deltas (the preview) or of tool calls: decode stays flat (before:
    325 and 570 MiB after 150 MB) and says what its summary left out."""
    flood = str(Path(__file__).parent / "stream_flood.py")
    code, peak, stderr = _peak_of([flood, "64", kind], "decode", "-q", "-")
    assert code == 0, stderr
    assert peak < 80, f"{peak} MiB"


def test_blank_lines_after_a_bad_line_are_counted_not_held() -> None:
    """A corrupt line and then two million newlines: one torn line and blanks, counted."""
    script = (
        'import os; os.write(1, b\'{"type":"text","text":"a"}\\n{bad\\n\' + b\'\\n\' * 2000000)'
    )
    code, peak, stderr = _peak_of(["-c", script], "decode", "-q", "-")
    assert code == 0, stderr  # the corrupt line was the last one with anything on it
    assert peak < 80, f"{peak} MiB"


def test_trace_check_reads_a_journal_line_by_line() -> None:
    """A valid 16 MiB journal: flat memory (a 60 MB one took 661 MiB; now 57 MiB)."""
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


def test_replay_plays_no_link_and_no_case_over_the_cap(tmp_path: Path) -> None:
    """A symlinked case file (to a 0600 file) was played to the client; a 3 GiB one was a
    MemoryError. Both are one line and exit 2, the client never started."""
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
    """``replay --check`` read the case file through the safe reader (no link, at most the
    cap), then read it again, following links, to grade it: a case swapped for a link to
    a 0600 file in between was graded and printed. Now the bytes read once are graded."""
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


# ------------------------------------------------------------ smaller items (item 4)


@pytest.mark.parametrize("plant", ["dangling-link", "linked-secret", "fifo", "folder"])
def test_init_writes_no_template_through_a_link_or_onto_a_fifo(tmp_path: Path, plant: str) -> None:
    """A dangling link at the template's name created a file outside the folder; with
    --force a linked 0600 file was overwritten and made 0755; a FIFO hung init."""
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


def test_matrix_markdown_writes_no_name_raw(tmp_path: Path) -> None:
    """A client named with HTML, a mention and table syntax: matrix.md holds none of it raw
    (it kept ``<script>`` inside a code span, for any renderer that is not CommonMark's)."""
    from stella_conform.conformance import matrix as m
    from stella_conform.conformance.suite import CheckResult

    name = "<script>alert(1)</script> @octocat | [x](https://evil.invalid) *b*"
    (tmp_path / "m.toml").write_text(
        f'[matrix]\nexamples = 0\n\n[[client]]\nname = {json.dumps(name)}\ncommand = ["true"]\n'
        'mode = "exit"\n\n[[vocabulary]]\nname = "<img src=x>"\nvocabulary = "stella-default"\n'
    )
    config = m.load_config(tmp_path / "m.toml")
    tasks = config.tasks()
    suites = [m._suite_config(config, c, v) for c, v in config.cells()]
    cell, check = tasks[0]
    failed = CheckResult(check.id, check.name, check.rule, check.tier, "fail", "wrong")
    text = m.to_markdown(
        m._matrix_document(config, tasks, suites, {(cell, check.id): failed}, None)
    )
    for raw in ("<script", "<img", "@octocat", "](", "*b*", "| [x"):
        assert raw not in text, raw
    assert "&#60;script&#62;alert&#40;1&#41;&#60;/script&#62; &#64;octocat" in text


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


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) a process has used so far, from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop_and_measure(proc: subprocess.Popen[str], signum: int) -> tuple[float, str]:
    """Signal the kit and wait for it to exit: the CPU-seconds it spent after the signal
    (its own, not its clients'), and its stderr. A CPU measure, not a speed: a kit that
    goes on grading after a stop spends CPU on it however loaded the machine is."""
    before = _cpu_seconds(proc.pid) or 0.0
    proc.send_signal(signum)
    last = before
    deadline = time.monotonic() + HANG_GUARD
    while proc.poll() is None:  # sampled until it is gone (a zombie's counts stay readable)
        last = _cpu_seconds(proc.pid) or last
        assert time.monotonic() < deadline, f"not gone {HANG_GUARD} s after the signal"
        time.sleep(0.02)
    assert proc.stderr is not None
    return last - before, proc.stderr.read()


#: Seconds of CPU a stopped kit may spend before it exits: killing its clients, writing
#: the partial report, removing its files take a fraction of one.
STOP_CPU = 3.0


@pytest.mark.parametrize("jobs", ["2", "1"])
def test_a_stopped_run_leaves_no_half_written_case_cache(tmp_path: Path, jobs: str) -> None:
    """SIGTERM while workers write the case cache: no ``.*.tmp`` left anywhere below the
    working folder (a -j 2 run left 68 MB: a worker's stop handler exits at once, and the
    file was not known to it; now it is tracked, and removed). And the stop is prompt:
    at load 17 a ``-j 1`` run did not exit within 60 s of the SIGTERM (the stop had
    landed in a garbage collector callback, which swallowed it: see the test below)."""
    proc = subprocess.Popen(
        [
            *KIT_ARGV, "run", "-j", jobs, "--examples", "300", "--no-database",
            "--mode", "persistent", "--json", "r.json", "--", *PY_REFERENCE,
        ],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    cases = tmp_path / ".stella-conform" / "cases"
    try:
        deadline = time.monotonic() + 2 * HANG_GUARD
        while not list(cases.glob(".*.tmp")):  # a worker is writing a cache file
            assert time.monotonic() < deadline and proc.poll() is None, "no cache written"
            time.sleep(0.05)
        cpu, err = _stop_and_measure(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err[-2000:]
    assert cpu < STOP_CPU, f"{cpu:.2f} CPU-s after the SIGTERM"
    assert not list(tmp_path.glob("**/.*.tmp")), list(tmp_path.glob("**/.*.tmp"))


#: Code sent ahead of :data:`MEASURED_KIT` that makes a stop signal land where Python or
#: Hypothesis used to lose it: once a client is live, at the Nth garbage collection or
#: the Nth draw of a case, the kit signals itself SIGTERM and runs on right there, so its
#: stop handler raises in that place (and the place is marked, to show it did).
STOP_LANDS_IN = {
    # Python drops an exception raised in a collector callback ("Exception ignored in");
    # Hypothesis keeps such a callback in every process it runs in
    "a collector callback": """
        import gc
        def _landing(phase, info):
            if phase == "start":
                _land("a collector callback", 20)
        gc.callbacks.append(_landing)
    """,
    # Hypothesis records a case a draw left half-drawn: when the case replays an earlier
    # one's start (its engine mutating a case), recording it raised "Inconsistent data
    # generation!" in the stop's place (a KeyboardInterrupt alone is let through). A run
    # draws its random examples itself now (generators/engine/drawing.py; the engine runs when
    # the database holds a failure): the stop lands in the 40th draw with a client live
    "a draw": """
        from hypothesis.internal.conjecture.data import ConjectureData
        _draw = ConjectureData.draw
        def _drawing(self, *args, **kwargs):
            _land("a draw", 40)
            return _draw(self, *args, **kwargs)
        ConjectureData.draw = _drawing
    """,
}
STOP_LANDING = """
    import os, signal, sys
    _seen = []
    def _land(where, nth):
        stopping = sys.modules.get("stella_conform.stopping")
        if not getattr(stopping, "_groups", None):  # no client live yet
            return
        _seen.append(1)
        if len(_seen) != nth:
            return
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10000):  # the handler runs at the next bytecode: here
                pass
        except stopping.Stopped:
            with open("landed", "w") as mark:
                mark.write(where)
            raise
"""


@pytest.mark.parametrize(
    ("command", "where"),
    # (fuzz draws its cases itself: no engine mutating them)
    [("run", "a collector callback"), ("fuzz", "a collector callback"), ("run", "a draw")],
)
def test_a_stop_signal_stops_the_kit_wherever_it_lands(
    tmp_path: Path, command: str, where: str
) -> None:
    """A stop signal's exception raised in a collector callback was dropped by Python,
    and raised while Hypothesis drew a case it was replaced by Hypothesis's own error:
    either way the kit graded on with its clients killed, restarting them, and exited 0
    when the run was done (minutes later at load 17; a false "not deterministic" error
    in the report). Now: 143, the report marked incomplete, no traceback."""
    budget = (
        ["-j", "1", "--examples", "40", "--no-case-cache"]
        if command == "run"
        else ["--max-cases", "400"]
    )
    prelude = textwrap.dedent(STOP_LANDING) + textwrap.dedent(STOP_LANDS_IN[where])
    proc = subprocess.Popen(
        [
            sys.executable, "-c", prelude + MEASURED_KIT, command, *budget,
            "--no-database", "--mode", "persistent", "--json", "r.json", "--", *PY_REFERENCE,
        ],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _out, err = proc.communicate(timeout=10 * HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (tmp_path / "landed").read_text() == where, err[-2000:]
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]
    if (tmp_path / "r.json").exists():  # (no report if it landed in the first contact)
        doc = json.loads((tmp_path / "r.json").read_text())
        assert doc["incomplete"].startswith("stopped by SIGTERM"), doc["incomplete"]
        assert "not deterministic" not in json.dumps(doc)


@pytest.mark.parametrize("answer", ["huge", "deep"])
def test_an_oracle_answer_too_big_or_too_deep_is_a_disagreement_not_a_crash(
    tmp_path: Path, answer: str
) -> None:
    """corpus diff kept a whole answer (995 MiB for 1.5 GiB) and died on a 200k-deep one
    (RecursionError, exit 3): now the answer past 1 MiB is counted, not kept, and either is
    an unexplained disagreement that names what was wrong."""
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


def test_corpus_diff_plays_the_oracle_no_link_and_reads_one_recording_at_a_time(
    tmp_path: Path,
) -> None:
    """A recording is played to the oracle, a client: a link in the folder (here to a 0600
    file) is skipped with a warning, as ``--seed-corpus`` skips it (review-3 H4: it
    stopped the whole diff, exit 2, where --seed-corpus read it), nothing of it played;
    a FIFO likewise; and the recordings are read one at a time as the oracle is asked
    (they were all read, and held, before the first was compared: a FIFO second in the
    folder stopped the diff before the first was asked)."""
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


# ------------------------------------- the leak check over every command (issue 27, done-when)

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


def test_decode_stopped_mid_stream_removes_its_copy_of_stdin(tmp_path: Path) -> None:
    """``decode -`` keeps a private copy of its stdin (to read it again for the other
    readings): SIGTERM mid-stream left it in the temp folder and ended -15, as no stop
    handler was installed in a command that starts no process; now 143, nothing left."""
    temp = tmp_path / "tmp"
    proc = subprocess.Popen(
        [*KIT_ARGV, "decode", "-"], cwd=tmp_path, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"type":"text","delta":"hi"}\n' * 10)
        proc.stdin.flush()
        deadline = time.monotonic() + HANG_GUARD
        while not any(temp.iterdir()):  # the copy is being written
            assert time.monotonic() < deadline and proc.poll() is None, "no copy made"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, (proc.returncode, err[-2000:])
    assert not list(temp.iterdir())


def _reading_its_stdin(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the kit's main thread is blocked reading the pipe on its stdin (the auto
    mode's own test of a client waiting for input, from ``/proc``)."""
    from stella_conform.conformance.clients.automode import _reads_pipe

    assert proc.stdin is not None
    return _reads_pipe(proc.pid, str(proc.pid), os.fstat(proc.stdin.fileno()).st_ino)


#: Every command that reads a stream or a journal from its stdin, and a first line for it.
STDIN_READERS = {
    "validate": (["validate", "-"], b'{"type":"text","delta":"hi"}\n'),
    "trace check": (
        ["trace", "check", "-"],
        (REPO / "fixtures" / "trace" / "golden.jsonl").read_bytes().splitlines(True)[0],
    ),
    "decode --json": (["decode", "--json", "-"], b'{"type":"text","delta":"hi"}\n'),
}


@pytest.mark.parametrize(
    ("name", "signum"),
    [*((name, signal.SIGTERM) for name in STDIN_READERS),
     ("validate", signal.SIGINT), ("trace check", signal.SIGHUP)],
)  # fmt: skip
def test_a_command_reading_its_stdin_stops_like_every_other(
    tmp_path: Path, name: str, signum: int
) -> None:
    """``validate`` and ``trace check`` blocked on a pipe that never ends ended -15 on
    SIGTERM (and a traceback on Ctrl-C): as commands that start no process they had no
    stop handler. Every command now has them from its start: 128 + the signal, no
    traceback, nothing left."""
    args, first = STDIN_READERS[name]
    proc = subprocess.Popen(
        [*KIT_ARGV, *args], cwd=tmp_path, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdin is not None
        proc.stdin.write(first)
        proc.stdin.flush()
        deadline = time.monotonic() + HANG_GUARD
        while not _reading_its_stdin(proc):  # it read the line and waits for the next
            assert time.monotonic() < deadline and proc.poll() is None, "not reading stdin"
            time.sleep(0.02)
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, (proc.returncode, err[-2000:])
    assert b"Traceback" not in err, err[-2000:]


def test_a_command_run_in_process_leaves_the_host_s_children_alone() -> None:
    """A command run inside another program (click's runner, in the tests) installs the
    kit's stop handling for its length, the subreaper with it, and its end reaped every
    child of the process that was no client: the test session's own redis-server died
    under an in-process ``report merge``. A child from before the command is spared."""
    from conftest import kit_inline

    host_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        out = kit_inline("checks")
        assert out.returncode == 0, out.stderr
        assert host_child.poll() is None, "the command killed its host's child"
    finally:
        host_child.kill()
        host_child.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_borrowed_process_gets_its_stop_state_back() -> None:
    """The plugin's block (``reaped``) and a command run in-process each change the host's
    stop state for their length (handlers, the unraisable hook, the subreaper flag) and
    put all of it back: one saved stop state serves both (``stopping._as_before``)."""
    script = textwrap.dedent("""
        import ctypes, signal, sys
        from click.testing import CliRunner
        from stella_conform import stopping
        from stella_conform.cli import main

        def state():
            flag = ctypes.c_int()
            ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
            stops = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
            return [signal.getsignal(s) for s in stops], sys.unraisablehook, flag.value

        def host_hook(unraisable): pass
        sys.unraisablehook = host_hook
        signal.signal(signal.SIGHUP, lambda *a: None)
        before = state()
        with stopping.reaped():
            inside = state()
        after_block = state()
        assert CliRunner().invoke(main, ["checks"]).exit_code == 0
        after_command = state()
        same = after_block == before, after_command == before
        print(inside[2], inside[0][0] is before[0][0], *same)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD
    )
    # inside the block: a subreaper with a handler of its own; after either: as before
    assert done.stdout.split() == ["1", "False", "True", "True"], done.stdout + done.stderr


def test_the_plugin_leaves_no_grandchild_and_spares_the_session_s_own(tmp_path: Path) -> None:
    """The pytest plugin graded a client that puts a grandchild in a session of its own on
    every run: each was left running (one per case), as the plugin is no kit command (no
    subreaper). Now each check is a subreaper for its length only: the grandchildren are
    killed, and a process the session itself started before is left alone."""
    token = f"{SLEEP}7"
    spared = f"{SLEEP}8"
    client = shlex.join([sys.executable, str(HOSTILE), "setsid-exit", token])
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\nstella_client = {client}\nstella_mode = exit\nstella_examples = 1\n"
    )
    (tmp_path / "conftest.py").write_text(
        "import pathlib, subprocess\n"
        "def pytest_configure(config):\n"
        f"    config.own = subprocess.Popen(['sleep', {spared!r}])\n"
        "def pytest_unconfigure(config):\n"
        "    pathlib.Path('spared').write_text(str(config.own.poll() is None))\n"
        "    config.own.kill()\n"
        "    config.own.wait()\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "-k", "R1.valid-runs-accepted or R3.unknown-type-inert"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "spared").read_text() == "True"  # the session's own child lived on
    assert not _settled(token), _escaped(token)


def test_a_reaped_block_kills_only_what_its_clients_left(tmp_path: Path) -> None:
    """The plugin's subreaper block killed every orphan reparented to the session while a
    check ran (review-3 H3): a conftest's server whose launcher exits mid-check died with
    the clients' leftovers. Now only an orphan carrying the block's client mark is killed."""
    theirs, mine = f"{SLEEP}61", f"{SLEEP}62"
    script = (
        "import subprocess, sys, time\n"
        "from stella_conform import stopping\n"
        "from stella_conform.conformance.clients.process import ClientProcess\n"
        "with stopping.reaped():\n"
        f"    subprocess.run(['sh', '-c', 'sleep {mine} >/dev/null 2>&1 &'], check=True)\n"
        f"    argv = [sys.executable, {str(HOSTILE)!r}, 'setsid-exit', {theirs!r}]\n"
        "    client = ClientProcess(argv)\n"
        "    client.close_stdin()\n"
        f"    client.wait(time.monotonic() + {HANG_GUARD})\n"
        "    client.kill()\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
            timeout=HANG_GUARD,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert not _settled(theirs), _escaped(theirs)  # the client's grandchild: reaped
        assert _escaped(mine), "the session's own orphan was killed"
    finally:
        subprocess.run(["pkill", "-f", f"sleep {mine}"], check=False)


@pytest.mark.parametrize("stop", list(STOPS))
def test_the_plugin_stopped_mid_check_leaves_nothing(tmp_path: Path, stop: str) -> None:
    """SIGTERM or SIGHUP to a test session killed pytest outright and left the client it
    was grading and its escaped grandchild running; two Ctrl-Cs unwind through pytest.
    Either way nothing of the client is left (a signal nobody handles first kills them)."""
    signals = STOPS[stop]
    token = f"{SLEEP}9{signals[0]}{len(signals)}"
    first = tmp_path / "first"
    client = shlex.join([sys.executable, str(HOSTILE), "setsid-hang", token, str(first)])
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\nstella_client = {client}\nstella_mode = exit\nstella_examples = 1\n"
        "stella_timeout = 600\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k",
         "R1.valid-runs-accepted"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while _grandchildren(token) < 1:  # a client hangs, its grandchild escaped
            assert time.monotonic() < deadline and proc.poll() is None, "no client started"
            time.sleep(0.1)
        for signum in signals:
            proc.send_signal(signum)
            time.sleep(0.3)
        out, _ = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:  # the test failed: leave nothing running
            proc.kill()
            proc.wait()
    assert proc.returncode != 0, out[-2000:]
    assert not _settled(token), _escaped(token)
