"""One exit-status rule for every road: a run, a merged report and a matrix take the same
precedence (stop, then setup error, then verdict), so a client that cannot be graded is
exit 2 whether it is graded alone, in shards or in a matrix cell, and a stopped run is
128 + N whatever its parts said."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stella_conform.conformance.matrix.document import exit_code as matrix_exit_code
from stella_conform.conformance.report.compare import merge
from stella_conform.errors import (
    FAILED,
    PASSED,
    SETUP_ERROR,
    STOPPED,
    combined_exit_status,
    exit_status,
)


@pytest.mark.parametrize(
    ("error", "stopped", "failing", "expected"),
    [
        (False, None, False, PASSED),
        (False, None, True, FAILED),
        (False, STOPPED + 15, True, STOPPED + 15),
        (True, STOPPED + 15, True, STOPPED + 15),
        (True, None, False, SETUP_ERROR),
    ],
)
def test_one_run(error: bool, stopped: int | None, failing: bool, expected: int) -> None:
    assert exit_status(error=error, stopped=stopped, failing=failing) == expected


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], PASSED),
        ([0, 0], PASSED),
        ([0, 1], FAILED),
        ([1, 2], SETUP_ERROR),
        ([0, 2], SETUP_ERROR),
        ([1, STOPPED + 2, STOPPED + 15], STOPPED + 15),
        ([2, STOPPED + 15], STOPPED + 15),
    ],
)
def test_many_runs_taken_as_one(statuses: list[int], expected: int) -> None:
    assert combined_exit_status(statuses) == expected


def _report(exit_code: int, **extra: Any) -> dict[str, Any]:
    return {
        "format": "stella-conform/report/1",
        "exit_code": exit_code,
        "summary": {},
        "checks": [],
        **extra,
    }


def test_a_matrix_cell_that_cannot_be_graded_is_a_setup_error_as_run_says() -> None:
    cells = [{"report": _report(0)}, {"report": _report(2, error="does not start")}]
    assert matrix_exit_code({"cells": cells}) == SETUP_ERROR
    cells = [{"report": _report(0)}, {"report": _report(1)}]
    assert matrix_exit_code({"cells": cells}) == FAILED


def test_a_merged_report_takes_the_same_precedence(tmp_path: Any) -> None:
    from conftest import REPO  # noqa: F401  (the suite's conftest: kit on the path)

    from stella_conform.conformance.report import compare

    base = {
        "kit": {"name": "stella-conform"},
        "vocabulary": "v",
        "seed": 0,
        "examples": 1,
        "client": {"command": ["c"], "mode": "exit"},
        "claims": {},
        "known_failures_now_passing": [],
    }
    a = {**copy.deepcopy(base), **_report(STOPPED + 15, incomplete="stopped by SIGTERM")}
    b = {**copy.deepcopy(base), **_report(2, error="does not start")}
    merged: dict[str, Any] = {"checks": []}
    compare._totals(merged, [a, b])
    assert merged["exit_code"] == STOPPED + 15
    merged = {"checks": []}
    compare._totals(merged, [b, {**copy.deepcopy(base), **_report(1)}])
    assert merged["exit_code"] == SETUP_ERROR
    merged = {"checks": []}
    compare._totals(merged, [a, {**copy.deepcopy(base), **_report(0)}])
    assert merged["exit_code"] == STOPPED + 15
    assert merge is compare.merge


def test_an_output_whose_reader_left_is_a_cut_run_not_a_verdict() -> None:
    """``stella-conform … | head``: the output's reader left.  The status is the one a
    process the pipe's signal ends shows (128 + SIGPIPE), never 1, which reads as "the
    client fails", and no traceback is printed."""
    import os
    import signal
    import subprocess

    from conftest import KIT

    from stella_conform.errors import OUTPUT_CLOSED

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        done = subprocess.run(
            [str(KIT), "checks"], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write)
    assert OUTPUT_CLOSED == STOPPED + signal.SIGPIPE
    assert done.returncode == OUTPUT_CLOSED, done.stderr
    assert "Traceback" not in done.stderr
