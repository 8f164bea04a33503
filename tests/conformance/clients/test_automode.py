"""``--mode auto`` (the default of ``run``, ``fuzz`` and the plugin): the hello decides.

Each client below is started once the way auto mode starts it, and the mode it gets is
the one its own behaviour calls for: persistent or report per its hello's ``modes``,
exit for a client that does not speak the protocol.  The reports say which and why.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import PY_REFERENCE, REPO, kit
from toolchains import missing

from stella_conform.conformance.clients import automode
from stella_conform.conformance.clients.automode import choose_mode
from stella_conform.conformance.clients.runner import Client

PY = sys.executable
NAIVE = (PY, str(REPO / "tests" / "crashing" / "naive_reader.py"))


def _script(tmp_path: Path, name: str, body: str) -> tuple[str, ...]:
    path = tmp_path / name
    path.write_text(body)
    return (PY, str(path))


def test_a_hello_listing_persistent_is_graded_in_persistent_mode() -> None:
    choice = choose_mode(Client(PY_REFERENCE))
    assert choice.mode == "persistent"
    assert choice.reason == "its hello lists the modes report, persistent"
    assert choice.hello is not None and choice.hello["client"]["name"] == "stella-reader-python"


def test_a_hello_listing_report_only_is_graded_in_report_mode(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        "report_only.py",
        "import sys\n"
        'hello = \'{"kind":"hello","protocol":1,"client":{"name":"x"},"profiles":["reader"],\'\n'
        'hello += \'"modes":["report"]}\'\n'
        "print(hello, flush=True)\n"
        "sys.stdin.read()\n",
    )
    choice = choose_mode(Client(argv))
    assert (choice.mode, choice.reason) == ("report", "its hello lists the modes report")


def test_a_hello_without_modes_is_graded_in_report_mode(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        "no_modes.py",
        "import sys\n"
        'hello = \'{"kind":"hello","protocol":1,"client":{"name":"x"},"profiles":["reader"]}\'\n'
        "print(hello, flush=True)\n"
        "sys.stdin.read()\n",
    )
    choice = choose_mode(Client(argv))
    assert choice.mode == "report"
    assert "lists no modes" in choice.reason


def test_a_client_waiting_for_its_stream_is_graded_in_exit_mode() -> None:
    """It reads stdin before writing anything: found asleep, long before the wait ends."""
    choice = choose_mode(Client(NAIVE), wait=60)
    assert (choice.mode, choice.hello) == ("exit", None)
    assert choice.reason == "no hello, it waited for input without writing one"


def test_the_probe_reads_other_processes_once_not_on_every_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each look (every 10 ms) read every process's ``/proc/PID/stat`` on the machine (up to
    1.4 CPU-s in a 10 s wait on a shared one): a process outside the client's session is
    read once, and only the session's own are looked at again."""
    others = [subprocess.Popen(["sleep", "60"]) for _ in range(5)]  # not the client's
    reads: Counter[str] = Counter()
    real = automode._stat

    def counted(path: str) -> list[str] | None:
        reads[path] += 1
        return real(path)

    monkeypatch.setattr(automode, "_stat", counted)
    try:
        choice = choose_mode(Client(NAIVE), wait=60)
    finally:
        for proc in others:
            proc.kill()
            proc.wait()
    assert choice.reason == "no hello, it waited for input without writing one"
    looks = max(reads.values())  # the client's own stat, read on every look
    assert looks >= 5, reads
    assert all(reads[f"/proc/{proc.pid}/stat"] == 1 for proc in others), reads


def test_a_slow_busy_start_still_gets_its_hello_read(tmp_path: Path) -> None:
    """A client using CPU (importing, compiling) is starting, not waiting: it has the
    whole wait, however long the idle test would take to fire."""
    argv = _script(
        tmp_path,
        "slow.py",
        "import runpy, sys, time\n"
        "end = time.process_time() + 0.6\n"
        "while time.process_time() < end: pass\n"  # 0.6 s of CPU before the hello
        f"sys.argv = [{PY_REFERENCE[1]!r}]\n"
        f"runpy.run_path({PY_REFERENCE[1]!r}, run_name='__main__')\n",
    )
    # as long a wait as the machine needs: the point is what the probe decides, not how fast
    assert choose_mode(Client(argv, timeout=600), wait=600).mode == "persistent"


def test_a_start_that_sleeps_before_its_hello_keeps_the_whole_wait() -> None:
    """Asleep is not waiting for input: a start script's ``sleep`` (as a container or a
    remote host would keep it) sits in no read of its stdin, so the hello that follows is
    read and the adapter gets its mode (before: exit mode after 0.25 s, "it waited for
    input")."""
    adapter = " ".join(shlex.quote(part) for part in PY_REFERENCE)
    argv = ("sh", "-c", f"sleep 1; exec {adapter}")
    choice = choose_mode(Client(argv, timeout=600), wait=600)
    assert (choice.mode, choice.reason) == (
        "persistent",
        "its hello lists the modes report, persistent",
    )


def test_a_node_client_waiting_in_its_event_loop_is_graded_in_exit_mode() -> None:
    """Node.js reads stdin through epoll, not a read: its epoll instance watching the
    stdin pipe is waiting for input too, so it is seen, not waited out."""
    if shutil.which("node") is None:
        missing("no node")
    reader = "require('readline').createInterface({input: process.stdin}).on('line', () => {})"
    choice = choose_mode(Client(("node", "-e", reader), timeout=600), wait=60)
    assert (choice.mode, choice.reason) == (
        "exit",
        "no hello, it waited for input without writing one",
    )


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("true",), "no hello, it ended without writing one"),
        (("cat", "{stream}"), "no hello, it ended without writing one"),  # an empty file
        (("sh", "-c", "echo hi; cat"), "no hello, its first line was something else: 'hi'"),
    ],
)
def test_other_clients_are_graded_in_exit_mode(argv: tuple[str, ...], reason: str) -> None:
    choice = choose_mode(Client(argv))
    assert (choice.mode, choice.reason) == ("exit", reason)


def test_an_invalid_hello_is_graded_in_report_mode_so_checks_show_it(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        "bad_hello.py",
        'import sys\nprint(\'{"kind":"hello","protocol":7}\', flush=True)\nsys.stdin.read()\n',
    )
    choice = choose_mode(Client(argv))
    assert choice.mode == "report"
    assert choice.reason.startswith("its hello is not valid")


def test_without_proc_the_wait_alone_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(automode, "_session_state", lambda session: None)
    choice = choose_mode(Client(NAIVE), wait=0.5)
    assert (choice.mode, choice.reason) == ("exit", "no hello, none within 0.5 s")


def test_run_defaults_to_auto_and_its_reports_say_why(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    args = ("--only", "R3.unknown-counted", "--examples", "1", "--no-database")
    out = kit("run", *args, "--json", str(report), "--", *PY_REFERENCE, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "in persistent mode (auto: its hello lists the modes report, persistent)" in out.stderr
    assert out.stdout.startswith("mode persistent (--mode auto: its hello lists the modes")
    client = json.loads(report.read_text())["client"]
    assert client["mode"] == "persistent"
    assert client["mode_chosen"] == "its hello lists the modes report, persistent"

    out = kit("run", *args, "--json", str(report), "--", *NAIVE, cwd=tmp_path)
    assert "in exit mode (auto: no hello, it waited for input without writing one)" in out.stderr
    assert "an adapter that starts slowly: --mode report or persistent" in out.stdout
    assert json.loads(report.read_text())["client"]["mode"] == "exit"
    # an explicit mode is the mode, with nothing chosen to explain
    out = kit(
        "run", *args, "--mode", "report", "--json", str(report), "--", *PY_REFERENCE, cwd=tmp_path
    )
    assert "mode_chosen" not in json.loads(report.read_text())["client"]


def test_fuzz_grades_an_exit_mode_client_in_exit_mode(tmp_path: Path) -> None:
    args = ("--for", "1s", "--only", "R3.missing-or-non-string-type", "--no-database")
    out = kit("fuzz", *args, "--no-feedback", "--", *NAIVE, cwd=tmp_path)
    assert "in exit mode (auto: no hello" in out.stderr
    assert "R3.missing-or-non-string-type" in out.stdout and out.returncode == 1
    # told to use persistent mode, it says which mode grades such a client
    out = kit("fuzz", *args, "--mode", "persistent", "--timeout", "0.5", "--", *NAIVE)
    assert out.returncode == 2
    assert "no hello within the timeout (a client that does not speak the adapter" in out.stderr
    assert "--mode exit" in out.stderr


pytest_plugins = ["pytester"]


def test_the_pytest_plugin_defaults_to_auto(pytester: pytest.Pytester) -> None:
    client = " ".join(PY_REFERENCE)
    args = ("--stella-examples", "1", "-k", "R5", "-p", "no:cacheprovider")
    result = pytester.runpytest_inprocess("--stella-client", client, *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["stella-conform: persistent mode (auto: its hello lists *)"])
    result = pytester.runpytest_inprocess("--stella-client", " ".join(NAIVE), *args)
    result.stdout.fnmatch_lines(["stella-conform: exit mode (auto: no hello, it waited *)"])
