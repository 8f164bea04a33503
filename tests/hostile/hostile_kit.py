"""The kit as every hostile test starts it, and the leak check every one of them passes.

``no_leaks`` is autouse in each test module that imports it: every test gets a private temp
folder, its own copy of the hostile client (``HOSTILE``) and its own sleep token (``SLEEP``),
and afterwards no client process, no temp file and no kit process over the memory cap may
remain.  The helpers here are the ones tests of more than one kind of misbehaviour share.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stella_conform.conformance.clients.runner import (
    Client,
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
    # the test's module names them bare too (it imported them from here)
    for name, value in (("HOSTILE", HOSTILE), ("SLEEP", SLEEP)):
        if hasattr(request.module, name):
            monkeypatch.setattr(request.module, name, value)
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


def _ps() -> str:
    return subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout


def _grandchildren(token: str) -> int:
    """How many ``sleep TOKEN`` grandchildren (not clients, whose arguments hold it too)."""
    return sum(line.split(None, 1)[1:] == [f"sleep {token}"] for line in _ps().splitlines())


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
