"""A run draws a check's random examples itself (conformance/drawing.py), without
Hypothesis's engine around each, and hands a failing one to Hypothesis to shrink."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from stella_conform.conformance import suite
from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.drawing import drawn
from stella_conform.conformance.inprocess import Parser
from stella_conform.conformance.runner import Client
from stella_conform.conformance.suite import (
    SuiteConfig,
    check_strata,
    check_strategy,
    database_key,
    random_examples,
    run_check,
)

ADAPTERS = Path(__file__).resolve().parents[1] / "adapters" / "python"
CHECK = BY_ID["R1.valid-runs-accepted"]


def _reader(most_lines: int | None = None) -> Any:
    """The reference reader, in process; ``most_lines``: it rejects a longer stream (a
    fixed buffer), a bug the strata (each the simplest run) do not show."""
    sys.path.insert(0, str(ADAPTERS))
    try:
        from stella_reader import Reader
    finally:
        sys.path.remove(str(ADAPTERS))

    def read(lines: Any) -> dict[str, Any]:
        reader = Reader()
        for number, raw in enumerate(lines, 1):
            if most_lines is not None and number > most_lines:
                raise ValueError(f"line {number}: over the buffer")
            reader.push(number, raw[:-1] if raw.endswith(b"\n") else raw)
            if reader.rejected:
                raise ValueError(reader.rejected[1])
        reader.finish()
        if reader.rejected:
            raise ValueError(reader.rejected[1])
        summary = reader.summary()
        return {k: summary[k] for k in ("unrecognized_events", "final_text")}

    return read


def _config(read: Any, **kw: Any) -> SuiteConfig:
    client = Client(argv=(), mode="exit", function=Parser(read, (ValueError,)))
    return SuiteConfig(client, **{"database_dir": None, "fixtures_per_check": 0, **kw})


def _graded(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every stream the check grades, in order."""
    streams: list[bytes] = []
    real = suite.CaseRunner.run

    def run(self: Any, case: Any) -> Any:
        streams.append(case.stream)
        return real(self, case)

    monkeypatch.setattr(suite.CaseRunner, "run", run)
    return streams


def test_a_passing_check_runs_no_hypothesis_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The strata and the random examples are graded without a ``@given`` run."""

    def no_engine(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a passing check ran Hypothesis's engine")

    monkeypatch.setattr(suite, "check_property", no_engine)
    graded = _graded(monkeypatch)
    result = run_check(CHECK, _config(_reader()))
    assert result.outcome == "pass", result.message
    strata = check_strata(CHECK, _config(_reader()).vocabulary())
    assert result.cases == len(strata) + 25 == len(graded)
    assert graded[: len(strata)] == [case.stream for case in strata]
    assert len(set(graded[len(strata) :])) == 25  # no example twice


def test_the_kit_draws_the_same_cases_for_a_seed_and_others_for_another() -> None:
    config = _config(_reader())
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None

    def streams(seed: int) -> list[bytes]:
        cfg = _config(_reader(), seed=seed)
        return [case.stream for case, _ in random_examples(CHECK, cfg, strategy)]

    assert streams(0) == streams(0)
    assert len(streams(0)) == 25
    assert set(streams(0)).isdisjoint(streams(1))


def test_a_drawn_example_s_choices_make_it_again() -> None:
    """What Hypothesis replays at a failure is the very case the kit graded."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    strategy = check_strategy(CHECK, _config(_reader()).vocabulary())
    assert strategy is not None
    for one in drawn(strategy, 7, 5):
        data = ConjectureData.for_choices(one.choices)
        with BuildContext(data, is_final=False, wrapped_test=drawn):
            again = data.draw(strategy)
        assert again.stream == one.case.stream


def test_a_failure_the_kit_drew_is_replayed_by_hypothesis_shrunk_and_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failing example goes to Hypothesis's reuse phase first, is shrunk to the
    smallest stream over the buffer, saved in the example database, and the next run
    replays the saved one before anything else."""
    read = _reader(most_lines=8)
    database = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    config = _config(read, database=database)
    strata = [case.stream for case in check_strata(CHECK, config.vocabulary())]
    assert all(s.count(b"\n") <= 8 for s in strata)  # none of them shows it
    graded = _graded(monkeypatch)
    result = run_check(CHECK, config)
    assert result.outcome == "fail", result.message
    first_failing = next(s for s in graded if s.count(b"\n") > 8)
    # the strata, the kit's own draws up to the failure, then Hypothesis: the failure again
    assert graded[: len(strata)] == strata
    after = graded.index(first_failing) + 1
    assert graded[after] == first_failing
    (failure,) = result.failures
    assert failure.stream is not None and failure.stream.count(b"\n") == 9  # shrunk
    assert len(failure.stream) < len(first_failing)
    saved = list(database.fetch(database_key(CHECK, config)))
    assert len(saved) == 1  # the shrunk case, for the next run
    graded.clear()
    again = run_check(CHECK, config)
    assert again.outcome == "fail"
    assert graded[len(strata)] == failure.stream  # replayed first, by Hypothesis
    assert again.failures[0].stream == failure.stream


def test_a_failure_that_does_not_come_back_is_an_error_not_a_pass() -> None:
    """A client that fails a drawn case once and passes it when Hypothesis runs it again
    is not deterministic: the check says so, with the case, instead of passing."""
    conforming = _reader()
    buffered = _reader(most_lines=8)
    failed: list[int] = []

    def once(lines: Any) -> dict[str, Any]:
        lines = list(lines)
        if len(lines) > 8 and not failed:
            failed.append(1)
            return dict(buffered(iter(lines)))
        return dict(conforming(iter(lines)))

    result = run_check(CHECK, _config(once))
    assert failed
    assert result.outcome == "error", result.message
    assert "not deterministic" in result.message
    assert result.failures and result.failures[0].stream is not None
    assert result.failures[0].stream.count(b"\n") > 8
