"""A shared Redis database on every road that takes one: what a fuzz worker saved is
replayed by ``run`` with its default ``-j`` and by the pytest plugin's
``stella_database``, members far over the entry cap leave every kit process under the
memory cap, and a server that never answers leaves an honest client's fuzz run green.

(The matrix takes no database: a matrix is reproducible from its config and seed alone.)

Against a real ``redis-server`` (:mod:`redis_server`); every kit process is one whose
peak resident memory (``VmHWM``) is logged as it exits, forked ``-j`` workers included.
Sessions are bounded by a number of cases, never by how fast this machine is.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE
from redis_server import HungPeer, RedisServer, need_redis_package, running_server

from stella_conform.conformance.fuzz.records import SHARED_SUB_KEY
from stella_conform.conformance.store.shared import PREFIX

pytestmark = pytest.mark.slow

DEEP_R5 = (sys.executable, str(ADAPTERS / "deep" / "extra_fields_on_failed_tool.py"))
R5 = "R5.unknown-fields-ignored"
#: Two checks, so that ``run`` grades them in its default two ``-j`` workers.
TWO_CHECKS = ("--only", R5, "--only", "R6.torn-final-line")
DEEP_REASON = "reasoning lacks the fields of the failed call"
#: Peak resident memory any kit process may use (docs/reliability.md).
MEMORY_CAP_MIB = 150
MIB = 1024 * 1024

#: The kit's console script in an interpreter that appends its own peak resident memory
#: (``VmHWM``) to ``$STELLA_TEST_PEAKS`` as it exits, however it exits (a forked worker
#: ends with ``os._exit``).
MEASURED_KIT = textwrap.dedent("""
    import atexit, os, sys
    del sys.path[0]
    def peak():
        try:
            with open("/proc/self/status") as status:
                kib = next(int(l.split()[1]) for l in status if l.startswith("VmHWM"))
            with open(os.environ["STELLA_TEST_PEAKS"], "a") as log:
                log.write(f"{os.getpid()} {kib} {' '.join(sys.argv[1:2])}\\n")
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


@pytest.fixture(autouse=True)
def _redis_package() -> None:
    need_redis_package()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with running_server(tmp_path) as srv:
        yield srv


def kit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The kit in ``cwd``, its processes' peaks logged to ``cwd/peaks``."""
    cwd.mkdir(exist_ok=True)
    env = {**os.environ, "STELLA_TEST_PEAKS": str(cwd / "peaks")}
    return subprocess.run(
        [sys.executable, "-c", MEASURED_KIT, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def peaks_mib(cwd: Path) -> list[int]:
    """The peak of each kit process that ran in ``cwd``, in MiB."""
    lines = (cwd / "peaks").read_text().splitlines()
    return [int(line.split()[1]) // 1024 for line in lines]


def fuzz_finds_the_deep_bug(cwd: Path, url: str) -> str:
    """A fuzz worker that finds the rule-5 deep bug and shares it; its output."""
    found = kit(
        cwd,
        "fuzz", "--database", url, "--only", R5, "--stop-on-first", "--max-cases", "3000",
        "--max-shrinks", "0", "--for", "10m", "--", *DEEP_R5,
    )  # fmt: skip
    assert found.returncode == 1, found.stdout + found.stderr
    return found.stdout


def run_with(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return kit(
        cwd, "run", "--mode", "persistent", *TWO_CHECKS, "--examples", "1", "--max-shrinks", "0",
        *args,
    )  # fmt: skip


def test_a_fuzz_worker_s_find_is_replayed_by_run_and_by_the_plugin(
    tmp_path: Path, server: RedisServer
) -> None:
    """A fuzz worker saves the failure it found to the shared Redis; in other folders,
    with nothing local, ``run`` with its default ``-j`` (two workers here) fails the check
    on it, and so does the pytest plugin with ``stella_database`` naming the server;
    without the database both pass (the failure is one the seed's few cases miss); a
    conforming client passes ``run`` with the same database."""
    fuzz_finds_the_deep_bug(tmp_path / "worker", server.url)
    alone = run_with(tmp_path / "alone", "--", *DEEP_R5)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    shared = run_with(tmp_path / "shared", "--database", server.url, "--", *DEEP_R5)
    assert shared.returncode == 1, shared.stdout + shared.stderr
    assert "with 2 worker(s)" in shared.stderr, shared.stderr
    assert DEEP_REASON in shared.stdout
    assert "PASS          R6.torn-final-line" in shared.stdout

    def plugin(folder: str, *ini: str) -> subprocess.CompletedProcess[str]:
        cwd = tmp_path / folder
        cwd.mkdir()
        (cwd / "pytest.ini").write_text(
            "\n".join(
                [
                    "[pytest]",
                    f"stella_client = {shlex.join(DEEP_R5)}",
                    "stella_mode = persistent",
                    "stella_examples = 1",
                    *ini,
                ]
            )
            + "\n"
        )
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", R5]
        return subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )

    without = plugin("plugin-alone")
    assert without.returncode == 0 and "1 passed" in without.stdout, without.stdout
    replayed = plugin("plugin-shared", f"stella_database = {server.url}")
    assert replayed.returncode == 1 and "1 failed" in replayed.stdout, replayed.stdout
    assert DEEP_REASON in replayed.stdout
    # last: a conforming client passes the held entry, and the run drops it
    fixed = run_with(tmp_path / "fixed", "--database", server.url, "--", *PY_REFERENCE)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_members_of_40_mib_leave_every_kit_process_under_the_memory_cap(
    tmp_path: Path, server: RedisServer
) -> None:
    """Six 40 MiB members, two under each of three keys a fuzz worker and a run read
    (the check's failures, its failures not shrunk, and the corpus workers share), as
    anyone sharing the server can add them: a second fuzz worker and a ``run`` each stay
    under the memory cap, every forked worker too, and still replay the failure of the
    usual size saved beside them."""
    fuzz_finds_the_deep_bug(tmp_path / "worker", server.url)
    raw = server.client()
    (unshrunk,) = raw.scan_iter(match=PREFIX + b"*.secondary")
    key = unshrunk[: -len(b".secondary")]
    build = "return redis.call('SADD', KEYS[1], string.rep(ARGV[1], tonumber(ARGV[2])))"
    for i, name in enumerate((key, unshrunk, key + SHARED_SUB_KEY)):
        for fill in "ab":
            raw.eval(build, 1, name, f"{fill}{i}", 20 * MIB)  # 40 MiB, two bytes a time
    held = sum(raw.memory_usage(n, samples=0) or 0 for n in raw.scan_iter(match=b"*"))
    assert held > 6 * 40 * MIB
    second = kit(
        tmp_path / "second",
        "fuzz", "--database", server.url, "--only", R5, "--seed", "7", "--max-failures", "1",
        "--max-shrinks", "0", "--max-cases", "300", "--for", "10m", "--", *DEEP_R5,
    )  # fmt: skip
    assert second.returncode == 1, second.stdout + second.stderr
    assert DEEP_REASON in second.stdout
    shared = run_with(tmp_path / "run", "--database", server.url, "--", *DEEP_R5)
    assert shared.returncode == 1, shared.stdout + shared.stderr
    assert DEEP_REASON in shared.stdout
    for folder in ("second", "run"):
        peaks = peaks_mib(tmp_path / folder)
        assert peaks and max(peaks) < MEMORY_CAP_MIB, (folder, peaks)
    assert len(peaks_mib(tmp_path / "run")) == 3  # the run and its two workers


def test_a_server_that_never_answers_leaves_an_honest_client_green(tmp_path: Path) -> None:
    """A Redis that accepts the connection and never answers: ``fuzz`` and ``run`` (two
    workers) each wait on it once, warn once, and grade the conforming client as without
    it; no worker connects again (each wait would come out of the run's time)."""
    with HungPeer() as peer:
        fuzzed = kit(
            tmp_path / "fuzz",
            "fuzz", "--database", peer.url, "--only", "R6.*", "--max-cases", "200",
            "--for", "10m", "--", *PY_REFERENCE,
        )  # fmt: skip
        assert len(peer.accepted) == 1
        ran = run_with(tmp_path / "run", "--database", peer.url, "--", *PY_REFERENCE)
        assert len(peer.accepted) == 2
    for out in (fuzzed, ran):
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stderr.count("does not answer") == 1, out.stderr
        assert "ERROR" not in out.stdout
    assert "shared database lost after" in fuzzed.stdout
