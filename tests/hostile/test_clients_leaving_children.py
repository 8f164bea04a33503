"""Clients that leave children behind: grandchildren holding the pipes, in sessions of their
own, or outliving the case; each command, the auto-mode probe and the plugin reap them and
spare every process that is not theirs."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HANG_GUARD,
    HOSTILE,
    KIT_ARGV,
    SLEEP,
    SUPERVISED,
    VALID,
    _command,
    _escaped,
    _settled,
    hostile,
    kit,
    no_leaks,
)

from stella_conform.conformance.clients.runner import (
    Client,
    run_exit,
)


def test_grandchild_holding_the_pipes_is_killed_and_the_kit_returns() -> None:
    started = time.monotonic()
    obs = run_exit(hostile("grandchild", timeout=30), VALID)
    assert obs.verdict == "accept"
    assert time.monotonic() - started < HANG_GUARD  # not the grandchild's 987 s sleep


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


@pytest.mark.slow
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


def test_a_command_run_in_process_leaves_the_host_s_children_alone() -> None:
    """A command run inside another program (click's runner, in the tests) installs the
    kit's stop handling for its length, the subreaper with it, and its end reaps only what
    its clients left: a child of the host from before the command (the test session's own
    redis-server, under an in-process ``report merge``) is spared."""
    from conftest import kit_inline

    host_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        out = kit_inline("checks")
        assert out.returncode == 0, out.stderr
        assert host_child.poll() is None, "the command killed its host's child"
    finally:
        host_child.kill()
        host_child.wait()


@pytest.mark.slow
def test_the_plugin_leaves_no_grandchild_and_spares_the_session_s_own(tmp_path: Path) -> None:
    """The pytest plugin grades a client that puts a grandchild in a session of its own on
    every run. The plugin is no kit command, so each check is a subreaper for its length
    only: the grandchildren are killed, not left running one per case, and a process the
    session itself started before is left alone."""
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
    """The plugin's subreaper block kills only an orphan carrying the block's client mark,
    not every orphan reparented to the session while a check runs: a conftest's server
    whose launcher exits mid-check lives on."""
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
