"""One check's runs on the reference reader in process, and what they leave in an example
database for the next run to replay (the kit-drawn and shared-database tests)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from hypothesis.database import DirectoryBasedExampleDatabase

from stella_conform.conformance import suite
from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.inprocess import Parser
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import (
    SuiteConfig,
    check_strata,
    check_strategy,
    database_key,
    generated,
    random_examples,
    run_check,
)

PYTHON_ADAPTERS = REPO / "adapters" / "python"
CHECK = BY_ID["R1.valid-runs-accepted"]
#: Where Hypothesis, a run and fuzz keep a failure not shrunk (and what a shrink passed
#: over); the sub-keys of a check's key that a run replays.
UNSHRUNK = b".secondary"
HELD_SUB_KEYS = (b"", UNSHRUNK, b".pareto")


def reference_reader(most_lines: int | None = None) -> Any:
    """The reference reader, in process; ``most_lines``: it rejects a longer stream (a
    fixed buffer), a bug the strata (each the simplest run) do not show."""
    sys.path.insert(0, str(PYTHON_ADAPTERS))
    try:
        from stella_reader import Reader
    finally:
        sys.path.remove(str(PYTHON_ADAPTERS))

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


def reader_config(read: Any, **kw: Any) -> SuiteConfig:
    """A run of ``read`` in process, without fixtures or a database folder unless asked."""
    client = Client(argv=(), mode="exit", function=Parser(read, (ValueError,)))
    return SuiteConfig(client, **{"database_dir": None, "fixtures_per_check": 0, **kw})


def graded_streams(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every stream the check grades, in order."""
    streams: list[bytes] = []
    real = suite.CaseRunner.run

    def run(self: Any, case: Any) -> Any:
        streams.append(case.stream)
        return real(self, case)

    monkeypatch.setattr(suite.CaseRunner, "run", run)
    return streams


def held_entries(database: Any, key: bytes) -> dict[bytes, set[bytes]]:
    """What ``database`` holds under each sub-key of ``key`` that a run replays."""
    return {sub: set(database.fetch(key + sub)) for sub in HELD_SUB_KEYS}


def no_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on a check draws neither a stratum nor a random example: a run must
    grade its own cases from the case cache."""

    def drawn_again(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a run generated its cases: the case cache was not read")

    monkeypatch.setattr(generated, "check_stratum_list", drawn_again)
    monkeypatch.setattr(generated, "random_examples", drawn_again)


def own_cases(config: SuiteConfig) -> tuple[list[bytes], list[bytes]]:
    """The seed's own cases for CHECK: its strata, its random examples."""
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None
    strata = [case.stream for case in check_strata(CHECK, config.vocabulary())]
    return strata, [case.stream for case, _ in random_examples(CHECK, config, strategy)]


#: How many held entries a run of 25 examples replays: max(2, ⌈25 / 10⌉), as Hypothesis's
#: reuse phase (suite.held_budget).
BUDGET = 3


def failed_run_left(tmp_path: Path, name: str) -> tuple[bytes, dict[bytes, set[bytes]]]:
    """The check's key, and what a failing run (the buffer of eight) left for it."""
    folder = DirectoryBasedExampleDatabase(str(tmp_path / name))
    broken = reader_config(reference_reader(most_lines=8), database=folder)
    assert run_check(CHECK, broken).outcome == "fail"
    key = database_key(CHECK, broken)
    return key, held_entries(folder, key)
