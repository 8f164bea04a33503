"""A matrix says how far it is while it runs, and shows each cell as the same three numbers.

The handler is fed the session's events directly (a clock of the test's own stands for
time), so what a CI log and a terminal show is checked line by line.
"""

from __future__ import annotations

from typing import Any

import pytest

from stella_conform.conformance.matrix.counts import CellCounts, cell_status
from stella_conform.conformance.matrix.outputs import CellPlan, MatrixProgress
from stella_conform.conformance.matrix.renderers import cell_text
from stella_conform.conformance.report.events import (
    CaseGraded,
    CheckFinished,
    CheckStarted,
    RunStarted,
)
from stella_conform.conformance.report.progress import REWRITE
from stella_conform.conformance.suite import CheckResult


def _report(summary: dict[str, int], known: tuple[str, ...] = (), exit_code: int = 0) -> dict:
    checks = [{"id": k, "outcome": "fail", "known_failure": "listed"} for k in known]
    return {"summary": summary, "checks": checks, "exit_code": exit_code}


@pytest.mark.parametrize(
    ("summary", "known", "exit_code", "text"),
    [
        # twelve graded and eight skipped: not the same cell as twenty graded
        ({"pass": 12, "skip": 8}, (), 0, "✅ 12 graded · 0 failed · 8 skipped"),
        ({"pass": 20}, (), 0, "✅ 20 graded · 0 failed · 0 skipped"),
        (
            {"pass": 15, "fail": 1, "skip": 4},
            ("a",),
            0,
            "✅ 16 graded · 1 failed (1 known) · 4 skipped",
        ),
        (
            {"pass": 20, "fail": 1, "crash": 2, "error": 1, "warn": 1, "skip": 3},
            (),
            1,
            "❌ 25 graded · 4 failed (2 crash, 1 error) · 1 warn · 3 skipped",
        ),
        ({"pass": 5, "crash": 1}, (), 1, "💥 6 graded · 1 failed (1 crash) · 0 skipped"),
    ],
)
def test_a_cell_reads_graded_failed_and_skipped(
    summary: dict[str, int], known: tuple[str, ...], exit_code: int, text: str
) -> None:
    report = _report(summary, known, exit_code)
    if exit_code:  # the checks behind the summary's failures, so the icon can be chosen
        report["checks"] += [
            {"id": f"c{i}", "outcome": "crash"} for i in range(summary.get("crash", 0))
        ]
        report["checks"] += [{"id": "f", "outcome": "fail"}] * summary.get("fail", 0)
    assert cell_text(report) == text
    assert cell_text(report, icons=False) == text.split(" ", 1)[1]


def test_counts_from_outcomes_match_counts_from_a_report() -> None:
    outcomes = [("pass", False), ("fail", True), ("skip", False), ("crash", False), ("warn", False)]
    counts = CellCounts.of_outcomes(outcomes)
    assert counts == CellCounts(graded=4, failed=2, skipped=1, known=1, crash=1, warn=1)
    assert counts.to_json()["graded"] == 4
    assert cell_status(outcomes) == "crash"  # the known failure does not count against it
    assert cell_status([("fail", True), ("pass", False)]) == "pass"


class Lines:
    def __init__(self) -> None:
        self.said: list[tuple[str, bool]] = []

    def __call__(
        self, message: Any = None, *, err: bool = False, nl: bool = True, **_: Any
    ) -> None:
        assert err, "progress goes to stderr"
        self.said.append((str(message), nl))

    @property
    def text(self) -> list[str]:
        return [line for line, _ in self.said]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _result(check_id: str, outcome: str) -> CheckResult:
    return CheckResult(check_id, check_id, "R1", "MUST", outcome, "")


PLANS = {
    "ref × next": CellPlan(2),
    "raises × next": CellPlan(2, frozenset({"R3.b"})),
}


def _events() -> list[Any]:
    """Two cells of two checks each, finished in turn (as a pool of workers tells them)."""
    return [
        RunStarted("grading 2 client(s) x 1 vocabulary(ies)"),
        CheckStarted("R1.a", "a", 4, "ref × next"),
        CaseGraded("R1.a", 1, "pass", "ref × next"),
        CheckFinished(1, 4, _result("R1.a", "pass"), "ref × next"),
        CheckStarted("R1.a", "a", 4, "raises × next"),
        CheckFinished(2, 4, _result("R1.a", "pass"), "raises × next"),
        CheckFinished(3, 4, _result("R3.b", "skip"), "ref × next"),
        CheckFinished(4, 4, _result("R3.b", "fail"), "raises × next"),
    ]


def test_a_log_gets_a_line_per_cell_with_its_numbers() -> None:
    echo, clock = Lines(), Clock()
    progress = MatrixProgress(echo, tty=False, verbose=False, cells=PLANS, clock=clock)
    for event in _events():
        progress.handle(event)
    assert echo.text == [
        "grading 2 client(s) x 1 vocabulary(ies)",
        "[3/4] ref × next done: ✅ 1 graded · 0 failed · 1 skipped",
        "[4/4] raises × next done: ✅ 2 graded · 1 failed (1 known) · 0 skipped",
    ]


def test_verbose_adds_a_line_per_task() -> None:
    echo = Lines()
    progress = MatrixProgress(echo, tty=False, verbose=True, cells=PLANS, clock=Clock())
    for event in _events():
        progress.handle(event)
    assert "[1/4] ref × next: R1.a: pass" in echo.text
    assert len(echo.text) == 1 + 4 + 2


def test_a_long_task_is_named_in_a_log_once_a_while_has_passed_without_a_line() -> None:
    echo, clock = Lines(), Clock()
    progress = MatrixProgress(echo, tty=False, verbose=False, cells=PLANS, every=30, clock=clock)
    progress.handle(RunStarted("grading"))
    progress.handle(CheckStarted("R1.a", "a", 4, "ref × next"))
    clock.now = 29.0
    progress.handle(CaseGraded("R1.a", 7, "pass", "ref × next"))
    assert echo.text == ["grading"]  # not yet
    clock.now = 31.0
    progress.handle(CaseGraded("R1.a", 8, "pass", "ref × next"))
    clock.now = 40.0
    progress.handle(CaseGraded("R1.a", 9, "pass", "ref × next"))
    assert echo.text == ["grading", "[0/4] ref × next: R1.a, 8 case(s) …"]


def test_a_terminal_rewrites_one_line_and_keeps_each_cell_s() -> None:
    echo, clock = Lines(), Clock()
    progress = MatrixProgress(echo, tty=True, verbose=False, cells=PLANS, clock=clock)
    for event in _events():
        clock.now += 1
        progress.handle(event)
    rewritten = [(line, nl) for line, nl in echo.said[1:]]
    assert all(line.startswith(REWRITE) for line, _ in rewritten)
    kept = [line[len(REWRITE) :] for line, nl in rewritten if nl]
    assert kept == [
        "[3/4] ref × next done: ✅ 1 graded · 0 failed · 1 skipped",
        "[4/4] raises × next done: ✅ 2 graded · 1 failed (1 known) · 0 skipped",
    ]
    assert f"{REWRITE}[0/4] ref × next: R1.a …" in echo.text  # the task being graded
