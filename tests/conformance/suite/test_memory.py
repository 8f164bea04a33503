"""Memory is flat: nothing a run keeps grows with the cases it has graded.

A run that kept every generated case of a check alive until the check ended, or let a
check's garbage outlive it, would grow by about 105 KiB a case (a gigabyte on runs of
about 1,200 lines).  These tests count objects, not bytes or time, so they
hold on a loaded machine; the peak-RSS figures are benchmarks/bench_memory.py's.
"""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import pytest
from conftest import REPO

from stella_conform.conformance import suite
from stella_conform.conformance.checks import GradedCase, select
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import SuiteConfig, generated, run_check

CLIENT = (sys.executable, str(REPO / "adapters" / "python" / "reference_client.py"))


def _config(tmp_path: Path, examples: int) -> SuiteConfig:
    return SuiteConfig(
        client=Client(CLIENT, mode="persistent"),
        examples=examples,
        failures_dir=tmp_path / "failures",
        database_dir=None,
    )


def _check(check_id: str):  # type: ignore[no-untyped-def]
    (check,) = [c for c in select(("reader",)) if c.id == check_id]
    return check


def test_a_check_holds_one_generated_case_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a check grades its generated cases, the cases it has finished are gone
    (only a matrix, which shares them with the next client, keeps them)."""
    made_so_far: list[weakref.ref[GradedCase]] = []
    most = [0]
    made = suite.graded_case

    def tracked(*args, **kwargs):  # type: ignore[no-untyped-def]
        case = made(*args, **kwargs)
        gc.collect()  # what is only garbage does not count as kept
        most[0] = max(most[0], sum(1 for ref in made_so_far if ref() is not None))
        made_so_far.append(weakref.ref(case))
        return case

    monkeypatch.setattr(generated, "graded_case", tracked)
    result = run_check(_check("R3.unknown-type-inert"), _config(tmp_path, 30))
    assert result.outcome == "pass", result.message
    assert result.cases >= 30
    assert most[0] <= 2, f"{most[0]} earlier generated cases still alive during the check"


def test_a_check_holds_one_stratum_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check's strata are not all drawn before its first case and held to its end
    (R1.long-lines' two megabyte strata alone would be 14 MiB of a default run's peak).
    Each is drawn when graded and dropped after: the generated cases (strata and random
    examples alike) alive while a case is graded are at most that one and the one before."""
    made_so_far: list[weakref.ref[object]] = []
    most = [0]
    made = suite.graded_case

    def tracked(case, *args, **kwargs):  # type: ignore[no-untyped-def]
        gc.collect()  # what is only garbage does not count as kept
        most[0] = max(most[0], sum(1 for ref in made_so_far if ref() is not None))
        made_so_far.append(weakref.ref(case))
        return made(case, *args, **kwargs)

    monkeypatch.setattr(generated, "graded_case", tracked)
    check = _check("R1.long-lines")
    result = run_check(check, _config(tmp_path, suite.STRATA_FROM_EXAMPLES))
    assert result.outcome == "pass", result.message
    strata = len(suite.check_strata(check, _config(tmp_path, 1).vocabulary()))
    assert strata >= 3 and len(made_so_far) >= strata + suite.STRATA_FROM_EXAMPLES
    assert most[0] <= 2, f"{most[0]} earlier generated cases still alive during the check"


def test_a_run_keeps_no_garbage_of_the_checks_it_graded(tmp_path: Path) -> None:
    """After each check the objects the process tracks are back where they were: the
    check's garbage (Hypothesis's examples and their cycles) is collected with the
    check, not left to the collector's rare full passes over the whole heap."""
    config = _config(tmp_path, 15)
    check = _check("R3.unknown-type-inert")
    with suite.shared_sessions():
        run_check(check, config)  # warm-up: caches, strategies, the client process
        run_check(check, config)
        counts = []
        for _ in range(4):
            run_check(check, config)
            counts.append(len(gc.get_objects()))
    grown = counts[-1] - counts[0]
    assert grown < 300, f"{grown} more objects after three more checks: {counts}"


def test_the_fuzzer_keeps_what_an_input_reached_in_a_fraction_of_the_memory() -> None:
    """A fuzz session keeps, for every corpus input, what it reached (for its weight):
    hundreds of code edges and input shapes an input.  As a frozenset of Python integers
    that would be about 17 KiB an input; as 8-byte integers it is a fraction."""
    from stella_conform.conformance.fuzz.corpus import compact
    from stella_conform.conformance.fuzz.records import _HASHED

    reached = frozenset({70_000 + 13 * n for n in range(600)} | {_HASHED | 12345})
    kept = compact(reached)
    assert set(kept) == set(reached) and len(kept) == len(reached)
    as_set = sys.getsizeof(reached) + sum(sys.getsizeof(k) for k in reached)
    assert sys.getsizeof(kept.keys) * 5 < as_set
