"""The kit or one of its workers killed by SIGKILL: nothing outlives it (the watchdog ends
clients and grandchildren), a killed worker is named, and no folder is left behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    KIT_ARGV,
    SLEEP,
    SUPERVISED,
    _command,
    _escaped,
    _grandchildren,
    _ps,
    _settled,
    no_leaks,
)


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
    case-cache file left behind (not a BrokenProcessPool traceback, exit 3)."""
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_benchmark_s_worker_killed_from_outside_is_one_line(tmp_path: Path) -> None:
    """benchmarks/conforming.py (and power.py, the same pool) grades in -j workers too: one
    SIGKILLed mid-run is the same one line and exit 137, its client gone, not
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
    a temporary folder, which a SIGKILL (a CI hard cancel, the OOM killer) would leave
    behind with everything read so far: the watchdog starts with the first temporary
    folder too, and removes it."""
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_half_written_case_cache_file_goes_with_a_kit_killed_by_sigkill(
    tmp_path: Path,
) -> None:
    """The case cache is written to a temporary file, renamed into place when the check
    ends; a SIGKILL mid-check leaves it half-written.  Its path is relative to the kit's
    folder (``.stella-conform/cases``), and the watchdog, which runs in ``/``, removes it."""
    from conftest import PY_REFERENCE

    cases = tmp_path / ".stella-conform" / "cases"
    proc = subprocess.Popen(
        [*KIT_ARGV, "run", "-j", "1", "--examples", "200", "--no-database",
         "--", *PY_REFERENCE],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not list(cases.glob(".*.tmp")):  # a check's cases are being kept
            assert time.monotonic() < deadline and proc.poll() is None, "no cache file"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + KILLED_GUARD
    while list(cases.glob(".*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(cases.glob(".*.tmp"))


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
    returned (the watchdog, in a session of its own, would otherwise outlive every
    command by its three scans of /proc). Looked for once, as the command
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
    too; it is gone as the command returns, as after a command with clients."""
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
