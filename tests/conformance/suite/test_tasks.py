"""The grading session tells every step: a check's start, each case, its end, in that order.

Progress, reports and the pytest plugin are handlers of these events, so a session that
drops a case, tells a check's end before its cases, or tells a worker's events out of
order misleads each of them.  The same run graded inline and in two workers must tell the
same cases with the same verdicts.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, PY_REFERENCE

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.report.events import CaseGraded, CheckFinished, CheckStarted
from stella_conform.conformance.suite import SuiteConfig, run_suite

CHECKS = ("R1.valid-runs-accepted", "R3.unknown-type-inert", "R3.no-loud-warning",
          "R6.torn-final-line")  # fmt: skip
#: Fails R3.unknown-type-inert: its failing case is shrunk, each try a case told.
RAISES = (sys.executable, str(ADAPTERS / "broken" / "raises_on_unknown_type.py"))


def _told(tmp_path: Path, argv: tuple[str, ...], jobs: int) -> tuple[list[Any], list[Any]]:
    config = SuiteConfig(
        client=Client(argv, mode="persistent", timeout=20.0),
        examples=4,
        database_dir=None,
        failures_dir=tmp_path / f"failures-{jobs}",
    )
    events: list[Any] = []
    results = run_suite([BY_ID[c] for c in CHECKS], config, jobs=jobs, tell=events.append)
    return events, results


def _per_check(events: list[Any]) -> dict[str, list[Any]]:
    by_check: dict[str, list[Any]] = defaultdict(list)
    for event in events:
        check = event.result.id if isinstance(event, CheckFinished) else event.check_id
        by_check[check].append(event)
    return by_check


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_check_is_told_started_then_its_cases_then_finished(tmp_path: Path, jobs: int) -> None:
    events, results = _told(tmp_path, PY_REFERENCE, jobs)
    by_check = _per_check(events)
    assert set(by_check) == set(CHECKS)
    for result in results:
        told = by_check[result.id]
        assert isinstance(told[0], CheckStarted) and told[0].total == len(CHECKS)
        assert isinstance(told[-1], CheckFinished) and told[-1].result is not None
        cases = told[1:-1]
        assert all(isinstance(e, CaseGraded) for e in cases), told
        assert [e.number for e in cases] == list(range(1, len(cases) + 1))
        # a passing check shrinks nothing: each case the report counts is told once
        assert result.outcome == "pass", result.message
        assert len(cases) == result.cases
        assert {e.verdict for e in cases} == {"pass"}
    finished = [e for e in events if isinstance(e, CheckFinished)]
    assert [e.done for e in finished] == list(range(1, len(CHECKS) + 1))
    assert {e.total for e in finished} == {len(CHECKS)}


def test_workers_tell_the_cases_one_process_tells(tmp_path: Path) -> None:
    inline, _ = _told(tmp_path, RAISES, 1)
    pooled, results = _told(tmp_path, RAISES, 2)
    failed = next(r for r in results if r.id == "R3.unknown-type-inert")
    assert failed.outcome == "fail"

    def verdicts(events: list[Any]) -> dict[str, list[str]]:
        return {
            check: [e.verdict for e in told if isinstance(e, CaseGraded)]
            for check, told in _per_check(events).items()
        }

    assert verdicts(pooled) == verdicts(inline)
    told = Counter(verdicts(inline)["R3.unknown-type-inert"])
    # the failing case and the shrinker's tries: more cases told than the report counts
    assert told["fail"] >= 1
    assert sum(told.values()) >= failed.cases
