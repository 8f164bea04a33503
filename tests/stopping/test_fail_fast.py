"""Fail fast: a client that never answers costs one timeout per check, not one per case."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import pytest
from conftest import PY_REFERENCE, kit

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import FAIL_FAST_CRASHES, SuiteConfig, run_check

#: A client that answers its first N runs (exit 0) and then behaves as told: hang or crash.
#: It appends a digest of each input it reads to ``inputs`` (next to the counter).
COUNTING = """
import hashlib, pathlib, sys, time
counter = pathlib.Path(sys.argv[1])
runs = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(runs + 1))
digest = hashlib.sha256(sys.stdin.buffer.read()).hexdigest()
with open(counter.with_name("inputs"), "a") as log:
    log.write(digest + "\\n")
with open(counter.with_name("starts"), "a") as log:  # the machine's monotonic clock
    log.write(f"{time.monotonic()}\\n")
if runs < int(sys.argv[2]):
    sys.exit(0)
if sys.argv[3] == "hang":
    time.sleep(60)
sys.stderr.write("fatal: cannot open the cache\\n")
sys.exit(3)
"""


def counting_client(tmp_path: Path, answers: int, then: str, timeout: float = 10.0) -> Client:
    script = tmp_path / "counting.py"
    script.write_text(COUNTING)
    counter = tmp_path / "runs"
    return Client(
        argv=(sys.executable, str(script), str(counter), str(answers), then), timeout=timeout
    )


def runs(tmp_path: Path) -> int:
    return int((tmp_path / "runs").read_text())


def config(client: Client, tmp_path: Path, **more: object) -> SuiteConfig:
    return SuiteConfig(
        client=client,
        database_dir=None,
        failures_dir=tmp_path / "failures",
        **more,  # type: ignore[arg-type]
    )


VALID_RUNS = BY_ID["R1.valid-runs-accepted"]  # ten fixtures, then generated valid runs


def test_a_check_stops_at_its_first_timeout_when_nothing_answered(tmp_path: Path) -> None:
    client = counting_client(tmp_path, 0, "hang", timeout=1.0)
    result = run_check(VALID_RUNS, config(client, tmp_path))
    assert runs(tmp_path) == 1 and result.cases == 1  # not ten fixtures and 25 examples
    assert result.outcome == "error"
    assert result.message.startswith("stopped after the first case without an answer: ")
    assert "timeout" in result.message and "(1 s)" in result.message
    assert result.failures and result.failures[0].replay


def test_a_check_stops_after_three_crashes_naming_the_client_s_last_words(tmp_path: Path) -> None:
    result = run_check(VALID_RUNS, config(counting_client(tmp_path, 0, "crash"), tmp_path))
    assert runs(tmp_path) == FAIL_FAST_CRASHES == 3
    assert result.outcome == "crash"  # the client's own failure, not the kit's error
    assert result.message == (
        "stopped after 3 cases without an answer: client crash: exit status 3 (only 0 = accept "
        "and 1 = reject are verdicts); client stderr: fatal: cannot open the cache"
    )
    assert result.failures[0].observed["stderr_tail"] == "fatal: cannot open the cache\n"


def test_once_the_client_answered_crashes_are_ordinary_crashes(tmp_path: Path) -> None:
    check = dataclasses.replace(VALID_RUNS, fixtures=VALID_RUNS.fixtures[:6])
    result = run_check(check, config(counting_client(tmp_path, 1, "crash"), tmp_path, examples=0))
    assert runs(tmp_path) == 6  # every case ran
    assert result.outcome == "crash" and not result.message.startswith("stopped")


def _answering_timeout(tmp_path: Path) -> float:
    """Three times what one answered run of the counting client takes here and now (its
    start on this machine at this load; at least 2 s): an answer fits in it on any machine,
    and the hang (60 s) never does."""
    from stella_conform.conformance.clients.runner import run_exit

    calibration = tmp_path / "calibration"
    calibration.mkdir()
    started = time.monotonic()
    assert run_exit(counting_client(calibration, 1, "hang", timeout=60), b"").ok
    return max(2.0, 3 * (time.monotonic() - started))


def test_a_timeout_is_not_shrunk(tmp_path: Path) -> None:
    check = dataclasses.replace(VALID_RUNS, fixtures=("minimal_run",))
    # the answer must fit in the timeout: a fixed 2 s raced the client's start under load
    client = counting_client(tmp_path, 1, "hang", timeout=_answering_timeout(tmp_path))
    result = run_check(check, config(client, tmp_path, examples=10))
    # one answered fixture, then one generated case that hangs: it is run once more (a
    # timeout after an answer is retried in case the machine was busy) and then reported,
    # with no shrinking runs at all (a shrink step would be a different input)
    fixture, *generated_runs = (tmp_path / "inputs").read_text().split()
    assert runs(tmp_path) == 3, runs(tmp_path)
    assert len(generated_runs) == 2 and generated_runs[0] == generated_runs[1] != fixture
    assert result.outcome == "error" and "timeout" in result.message
    assert "twice: the case was run again" in result.message
    generated = result.failures[0]
    assert generated.source == "generated" and generated.saved and Path(generated.saved).exists()


def test_the_time_budget_stops_new_cases(tmp_path: Path) -> None:
    client = counting_client(tmp_path, 1000, "hang")
    past = config(client, tmp_path, deadline=time.monotonic() - 1, time_budget=5.0)
    result = run_check(VALID_RUNS, past)
    assert result.outcome == "error" and result.cases == 0
    assert result.message == "not graded: the --time-budget of 5 s ran out before it started"
    deadline = time.monotonic() + 1.5
    soon = config(client, tmp_path, examples=500, deadline=deadline, time_budget=1.5)
    result = run_check(VALID_RUNS, soon)
    # no case starts after the deadline: one case at a time, so at most the one the kit
    # started just before it can have had its process running only after it (a count,
    # whatever the machine's speed)
    starts = [float(t) for t in (tmp_path / "starts").read_text().split()]
    assert sum(1 for t in starts if t > deadline) <= 1, (deadline, starts[-3:])
    assert result.outcome == "error", result.message
    assert result.message.startswith("not graded in full: the --time-budget of 1.5 s ran out")
    assert 0 < result.cases < 500


@pytest.mark.slow
def test_a_client_that_cannot_start_is_reported_once_with_its_own_words(tmp_path: Path) -> None:
    for mode in ("exit", "report"):
        out = kit("run", "--mode", mode, "--", sys.executable, "nonexistent.py", cwd=tmp_path)
        assert out.returncode == 2 and out.stdout == "", out.stdout
        assert (
            "\nstella-conform: the client cannot be graded: it does not answer a trivially "
            "valid stream" in out.stderr
        )
        assert "[1/" not in out.stderr  # no check ran
        assert "can't open file" in out.stderr and "nonexistent.py" in out.stderr
        assert " replay fixture:minimal_run --mode " in out.stderr
        assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_a_hung_client_is_warned_about_once_then_each_check_costs_one_timeout(
    tmp_path: Path,
) -> None:
    out = kit(
        "run", "--timeout", "0.3", "-j", "1", "--no-database", "--", "sleep", "1000",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.count("did not answer a trivially valid stream") == 1
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR")]
    assert errors and all("stopped after the first case" in line for line in errors)
    # each check stopped at its first timeout (above): one timeout per check and the probe,
    # which the messages count; a wall-clock bound would only measure the machine's load


def test_run_time_budget_bounds_the_whole_run(tmp_path: Path) -> None:
    out = kit(
        "run", "--time-budget", "1", "--examples", "1000", "--no-database", "-j", "1",
        "--only", "R1.valid-runs-accepted", "--only", "R1.object-per-line", "--", *PY_REFERENCE,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2 and all("the --time-budget of 1 s ran out" in e for e in errors)
