"""A crash is always tallied as ``crash``: whichever case of a check it comes in (a later
fixture after a failing one, a generated case that shrinks into a wrong answer), the
check's outcome is ``crash`` and the crash is listed, its message the check's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.inprocess import Parser
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import SuiteConfig, run_check


class Rejected(ValueError):
    """The parser's rejection."""


def _lines(lines: Any) -> list[bytes]:
    return [line for line in lines if line.strip()]


def test_a_crash_in_a_later_fixture_after_a_failing_one_is_a_crash(tmp_path: Path) -> None:
    """R1.valid-runs-accepted's first fixture is rejected (a fail), a later one crashes the
    parser: the check is a crash, not a fail."""

    def read(lines: Any) -> None:
        got = _lines(lines)
        if b'"run_complete"' in got[-1] and len(got) == 3:  # minimal_run, the first fixture
            raise Rejected("three lines are too few")
        if any(b'"error"' in line for line in got):  # failed_run_ends_on_error, a later one
            raise KeyError("message")

    client = Client(argv=(), mode="exit", function=Parser(read, (Rejected,)))
    config = SuiteConfig(client, examples=0, database_dir=None, failures_dir=tmp_path)
    result = run_check(BY_ID["R1.valid-runs-accepted"], config)
    verdicts = [f.verdict for f in result.failures]
    assert "fail" in verdicts and "crash" in verdicts, result.failures
    assert result.outcome == "crash", (result.outcome, result.message)
    assert result.failures[0].verdict == "crash" and "KeyError" in result.message


def test_a_generated_crash_shrunk_into_a_wrong_answer_is_still_a_crash(tmp_path: Path) -> None:
    """The parser crashes on a failed run (one with an ``error`` event) and rejects a run of
    fewer than three events: the first failing generated case (seed 0) crashes, and
    shrinking it ends on a shorter run that is only rejected. The crash is still the
    check's outcome, and it is listed beside the wrong answer."""

    def read(lines: Any) -> None:
        got = _lines(lines)
        if any(b'"error"' in line for line in got):
            raise KeyError("type")
        if len(got) < 3:
            raise Rejected("a run of fewer than three events")

    client = Client(argv=(), mode="exit", function=Parser(read, (Rejected,)))
    # the first fixture (minimal_run) is answered: a client that has answered is never
    # stopped early for crashing (a crash on each of the first cases would stop the check)
    config = SuiteConfig(
        client, examples=10, database_dir=None, failures_dir=tmp_path, fixtures_per_check=1
    )
    result = run_check(BY_ID["R1.valid-runs-accepted"], config)
    verdicts = [f.verdict for f in result.failures]
    assert sorted(verdicts) == ["crash", "fail"], (result.outcome, verdicts, result.message)
    assert result.outcome == "crash", (result.outcome, verdicts, result.message)
    assert result.failures[0].verdict == "crash" and "KeyError" in result.message
