"""The kit stopped by a signal (SIGINT, SIGTERM, SIGHUP) wherever it is: every command, its
workers, clients and their grandchildren end; what it writes is whole or marked incomplete."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import PY_REFERENCE, REPO
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    KIT_ARGV,
    MEASURED_KIT,
    SLEEP,
    SUPERVISED,
    _command,
    _escaped,
    _grandchildren,
    _ps,
    _settled,
    no_leaks,
)


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


@pytest.mark.slow
def test_a_stopped_10000_cell_matrix_is_written_in_linear_time(tmp_path: Path) -> None:
    """What a stopped matrix writes, at 10,000 cells with 60,000 results: a few CPU-seconds
    (finding each cell's results by scanning every task would take minutes)."""
    from stella_conform.cli.report import _json_text
    from stella_conform.conformance import matrix as m
    from stella_conform.conformance.matrix.document import matrix_document
    from stella_conform.conformance.matrix.run import cell_suite_config
    from stella_conform.conformance.suite import CheckResult

    client = '[[client]]\nname = "c{}"\ncommand = ["true"]\nmode = "exit"\n'
    vocabulary = '[[vocabulary]]\nname = "v{}"\nvocabulary = "stella-default"\n'
    config_text = ["[matrix]\nexamples = 0\n"]
    config_text += [client.format(i) for i in range(500)]
    config_text += [vocabulary.format(j) for j in range(20)]
    (tmp_path / "m.toml").write_text("\n".join(config_text))
    config = m.load_config(tmp_path / "m.toml")
    tasks = config.tasks()
    suites = [cell_suite_config(config, c, v) for c, v in config.cells()]
    results = {
        (cell, c.id): CheckResult(c.id, c.name, c.rule, c.tier, "pass", "1 case(s)", cases=1)
        for cell, c in tasks[: len(tasks) * 3 // 10]
    }
    started = time.process_time()
    doc = matrix_document(config, tasks, suites, results, None, "stopped by SIGTERM")
    written = [_json_text(doc), m.to_markdown(doc), m.to_html(doc)]
    cpu = time.process_time() - started
    assert len(doc["cells"]) == 10_000 and sum(
        len(c["report"]["checks"]) for c in doc["cells"]
    ) == len(results)
    assert all(written) and cpu < 5, f"{cpu:.1f} CPU-s"


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
    working folder (a worker's stop handler exits at once, so the file it writes is
    tracked, and removed; an untracked one could leave tens of MB). And the stop is
    prompt: within 60 s of the SIGTERM, even when the stop lands in a garbage collector
    callback, which would swallow it (see the test below)."""
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
#: Hypothesis would lose it: once a client is live, at the Nth garbage collection or
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
    # one's start (its engine mutating a case), recording it raises "Inconsistent data
    # generation!" in the stop's place (a KeyboardInterrupt alone is let through). A run
    # draws its random examples itself (generators/engine/examples.py; the engine runs when
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
    """A stop signal's exception raised in a collector callback is dropped by Python, and
    raised while Hypothesis draws a case it is replaced by Hypothesis's own error: unless
    the kit stops on the signal itself, it grades on with its clients killed, restarting
    them, and exits 0 when the run is done (minutes later, with a false "not
    deterministic" error in the report). The kit exits 143, the report marked incomplete,
    no traceback."""
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


def test_decode_stopped_mid_stream_removes_its_copy_of_stdin(tmp_path: Path) -> None:
    """``decode -`` keeps a private copy of its stdin (to read it again for the other
    readings): a command that starts no process has the stop handler too, so SIGTERM
    mid-stream ends it 143 with nothing left, not -15 with the copy in the temp folder."""
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
    """``validate`` and ``trace check`` blocked on a pipe that never ends start no process,
    yet have the stop handlers from their start, as every command does: 128 + the signal,
    no traceback, nothing left (not -15 on SIGTERM, or a traceback on Ctrl-C)."""
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


def _stop_signals_default() -> None:
    """The session under test starts as from a terminal: a suite started in the background
    or under ``nohup`` ignores SIGINT or SIGHUP, its children inherit that (an ignored
    signal stays ignored across exec), and the plugin rightly leaves an ignored signal
    ignored, so the signal would prove nothing and the session would never end."""
    for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


@pytest.mark.parametrize("stop", list(STOPS))
def test_the_plugin_stopped_mid_check_leaves_nothing(tmp_path: Path, stop: str) -> None:
    """SIGTERM or SIGHUP to a test session, which would kill pytest outright and leave the
    client it is grading and its escaped grandchild running, or two Ctrl-Cs, which unwind
    through pytest: either way nothing of the client is left (a signal nobody handles
    first kills them)."""
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
        preexec_fn=_stop_signals_default,
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
