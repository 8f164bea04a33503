"""A run draws a check's random examples itself (generators/engine/examples.py), without
Hypothesis's engine around each, and hands a failing one to Hypothesis to shrink."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from held_cases import (
    BUDGET,
    CHECK,
    UNSHRUNK,
    failed_run_left,
    graded_streams,
    held_entries,
    no_generation,
    own_cases,
    reader_config,
    reference_reader,
)
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    InMemoryExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
    choices_to_bytes,
)

from stella_conform.conformance import suite
from stella_conform.conformance.store.database import SharedDatabase
from stella_conform.conformance.suite import (
    check_strata,
    check_strategy,
    database_key,
    generated,
    grading,
    properties,
    random_examples,
    run_check,
)
from stella_conform.generators.engine.examples import drawn


def _a_seed_drawing(strategy: Any, count: int, wanted: Any) -> list[Any]:
    """``count`` examples of the first seed from 3 on whose draws hold what ``wanted``
    asks (a case long enough to fail a buffer, one short enough to pass it): a premise
    found, not tuned to one seed.  What a seed draws moves with the generators, and with
    the constants of the local modules the process has loaded, which Hypothesis mixes
    into a share of its draws (a user's code is meant to be a source,
    ``generators/engine/seeded.py``): in a test worker, whatever earlier tests imported.  With
    one fixed seed, the largest of 400 cases can be 89 lines in one order of the suite and
    over 90 in another."""
    for seed in range(3, 60):
        found = list(drawn(strategy, seed, count))
        if wanted(found):
            return found
    pytest.fail("no seed of 3..59 draws the cases this test needs")


def _plain_examples_one_over_90_lines(strategy: Any) -> list[Any]:
    """The examples without a mutation (a reading may let a client reject a ts of null) of
    the first seed whose 400 draws hold such an example of more than 90 lines."""
    found = _a_seed_drawing(
        strategy,
        400,
        lambda drawn_: any(
            not d.case.mutations and d.case.stream.count(b"\n") > 90 for d in drawn_
        ),
    )
    return [d for d in found if not d.case.mutations]


def test_a_passing_check_runs_no_hypothesis_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The strata and the random examples are graded without a ``@given`` run."""

    def no_engine(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a passing check ran Hypothesis's engine")

    for room in (generated, properties):  # where the property is built
        monkeypatch.setattr(room, "check_property", no_engine)
    graded = graded_streams(monkeypatch)
    result = run_check(CHECK, reader_config(reference_reader()))
    assert result.outcome == "pass", result.message
    strata = check_strata(CHECK, reader_config(reference_reader()).vocabulary())
    assert result.cases == len(strata) + 25 == len(graded)
    assert graded[: len(strata)] == [case.stream for case in strata]
    assert len(set(graded[len(strata) :])) == 25  # no example twice


def test_the_kit_draws_the_same_cases_for_a_seed_and_others_for_another() -> None:
    config = reader_config(reference_reader())
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None

    def streams(seed: int) -> list[bytes]:
        cfg = reader_config(reference_reader(), seed=seed)
        return [case.stream for case, _ in random_examples(CHECK, cfg, strategy)]

    assert streams(0) == streams(0)
    assert len(streams(0)) == 25
    assert set(streams(0)).isdisjoint(streams(1))


def test_a_drawn_example_s_choices_make_it_again() -> None:
    """What Hypothesis replays at a failure is the very case the kit graded."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    strategy = check_strategy(CHECK, reader_config(reference_reader()).vocabulary())
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
    read = reference_reader(most_lines=8)
    database = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    config = reader_config(read, database=database)
    strata = [case.stream for case in check_strata(CHECK, config.vocabulary())]
    assert all(s.count(b"\n") <= 8 for s in strata)  # none of them shows it
    graded = graded_streams(monkeypatch)
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


def _no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    real = suite.check_property

    def no_engine(check: Any, config: Any, strategy: Any, *args: Any, **kw: Any) -> Any:
        # (database_key builds the property of nothing() for its digest, and runs none)
        assert strategy.is_empty, "a passing check ran Hypothesis's engine"
        return real(check, config, strategy, *args, **kw)

    for room in (generated, properties):  # where the property is built
        monkeypatch.setattr(room, "check_property", no_engine)


def test_a_fixed_client_s_next_run_draws_the_seed_s_own_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run after the fix grades its strata, then a budget of what the shrink left
    (the shrunk case first, then cases it passed over, under ``.secondary``), dropping
    each as it passes, then the kit's own draws of its seed, without the engine, and
    keeps its strata and draws in the case cache.  The next runs grade the cache's cases
    with the next budget of entries after the strata, until none is left.  (Hypothesis
    replays three ``.secondary`` entries a run and drops only those, so left to it a fixed
    client's next six runs would be on the engine's path: other cases, no case cache.)"""
    database = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    cache = tmp_path / "cases"
    broken = reader_config(reference_reader(most_lines=8), database=database, case_cache=cache)
    assert run_check(CHECK, broken).outcome == "fail"
    key = database_key(CHECK, broken)
    left = held_entries(database, key)
    assert len(left[b""]) == 1 and len(left[UNSHRUNK]) > BUDGET  # more than one run replays
    assert not any(cache.iterdir())  # a failing run keeps no cases
    fixed = reader_config(reference_reader(), database=database, case_cache=cache)
    held = left[b""] | left[UNSHRUNK]
    strata, own = own_cases(fixed)

    _no_engine(monkeypatch)
    graded = graded_streams(monkeypatch)
    result = run_check(CHECK, fixed)
    assert result.outcome == "pass", result.message
    assert graded[: len(strata)] == strata
    assert graded[len(strata)].count(b"\n") == 9  # the shrunk one first
    assert graded[len(strata) + BUDGET :] == own
    assert result.cases == len(graded) == len(strata) + BUDGET + len(own)
    still = held_entries(database, key)
    assert not still[b""] and len(held - still[UNSHRUNK]) == BUDGET  # dropped as they passed
    assert any(cache.iterdir())  # the seed's own cases, kept

    no_generation(monkeypatch)
    while still[UNSHRUNK]:  # from the case cache, and the next entries, dropped in turn
        graded.clear()
        again = run_check(CHECK, fixed)
        assert again.outcome == "pass", again.message
        replayed = min(BUDGET, len(still[UNSHRUNK]))
        assert graded[: len(strata)] == strata and graded[len(strata) + replayed :] == own
        assert len(graded) == again.cases == len(strata) + len(own) + replayed
        before, still = still, held_entries(database, key)
        assert len(before[UNSHRUNK] - still[UNSHRUNK]) == replayed
    graded.clear()
    assert run_check(CHECK, fixed).outcome == "pass"  # nothing held: the cache alone
    assert graded == strata + own


def test_a_failure_fuzz_did_not_shrink_is_replayed_then_shrunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``fuzz`` found (kept as found, under ``.secondary``) is the first thing the
    next run grades after its strata; a ``.secondary`` entry that passes, before it, is
    dropped; the failure is handed to Hypothesis, which grades it again first, shrinks it
    and keeps the smallest as the check's primary entry.  (With 'failing' any case over
    twelve lines, one seed's was a run with a ts of null, which the buffer's rejection
    passes: dropped, the run drew its own and handed over a 25-line one.  And the two are
    picked in the order the run replays them, shortlex of their bytes, not lines.)"""
    database = InMemoryExampleDatabase()
    config = reader_config(reference_reader(most_lines=8), database=database)
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None

    def fails(d: Any) -> bool:
        # a plain valid run over the buffer: a mutation may have a reading under which
        # a client rejects the stream (a ts of null), and the buffer's rejection passes
        return not d.case.mutations and d.case.stream.count(b"\n") > 12

    def entries(found: list[Any]) -> tuple[Any, Any] | None:
        """A passing entry and a failing one after it in the order the run replays them
        (shortlex of their bytes; the smallest passing, the largest failing)."""
        found = sorted(found, key=lambda d: _shortlex(choices_to_bytes(d.choices)))
        passing = next((d for d in found if d.case.stream.count(b"\n") <= 8), None)
        failing = next((d for d in reversed(found) if fails(d)), None)
        if passing is None or failing is None or found.index(passing) > found.index(failing):
            return None
        return passing, failing

    picked = entries(_a_seed_drawing(strategy, 40, lambda found: entries(found) is not None))
    assert picked is not None
    passing, failing = picked
    key = database_key(CHECK, config)
    database.save(key + UNSHRUNK, choices_to_bytes(failing.choices))
    database.save(key + UNSHRUNK, choices_to_bytes(passing.choices))
    graded = graded_streams(monkeypatch)
    result = run_check(CHECK, config)
    assert result.outcome == "fail", result.message
    strata = len(check_strata(CHECK, config.vocabulary()))
    # the smaller entry first (as Hypothesis orders them), then the failure, graded again
    # by Hypothesis before it shrinks it
    expected = [passing.case.stream, failing.case.stream, failing.case.stream]
    assert graded[strata : strata + 3] == expected
    assert choices_to_bytes(passing.choices) not in set(database.fetch(key + UNSHRUNK))
    (failure,) = result.failures
    assert failure.stream is not None and failure.stream.count(b"\n") == 9  # shrunk
    (primary,) = database.fetch(key)
    assert primary != choices_to_bytes(failing.choices)


def _verdicts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, str]]:
    """Every stream the check grades, in order, with the verdict it was given."""
    judged: list[tuple[bytes, str]] = []
    real = generated.judge

    def judge(check: Any, g: Any, obs: Any, ctx: Any) -> Any:
        j = real(check, g, obs, ctx)
        judged.append((g.stream, j.verdict))
        return j

    for room in (grading, generated):  # the fixtures, the generated cases
        monkeypatch.setattr(room, "judge", judge)
    return judged


def _passing_entries(strategy: Any, count: int) -> list[bytes]:
    """``count`` entries of CHECK's strategy the buffer of eight passes (eight lines at
    most: the buffered reader reads them as the reference one), of seeds no test runs."""
    short = {
        choices_to_bytes(d.choices): d
        for seed in (97, 98, 99)
        for d in drawn(strategy, seed, 400)
        if d.case.stream.count(b"\n") <= 8
    }
    assert len(short) >= count
    return list(short)[:count]


@pytest.mark.parametrize("seed", range(3, 11))
def test_the_case_handed_over_is_the_first_hypothesis_grades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Whatever its size (each seed's first failure is another), the failing case the kit
    drew is the first one Hypothesis grades after it, even where a read-only database
    holds shrunk entries that pass, as many as the run's examples: the run has graded
    them already.  (Hypothesis read them through the hand-over and graded each again
    first; with as many as its reuse phase takes, max(2, examples) when it does not
    generate, it never reached the handed-over case: 'not deterministic', not a fail.)"""
    examples = 5
    config = reader_config(
        reference_reader(most_lines=8), seed=seed, examples=examples, shrink_budget=1
    )
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None
    folder = DirectoryBasedExampleDatabase(str(tmp_path / "artifact"))
    key = database_key(CHECK, config)
    held = _passing_entries(strategy, examples)
    for value in held:
        folder.save(key, value)
    judged = _verdicts(monkeypatch)
    result = run_check(CHECK, replace(config, database=ReadOnlyDatabase(folder)))
    assert result.outcome == "fail", result.message
    verdicts = [verdict for _, verdict in judged]
    assert verdicts[:examples] == ["pass"] * examples  # the held entries, by the kit
    first = verdicts.index("fail")  # the kit's own draw, handed over
    assert judged[first + 1] == judged[first]  # Hypothesis's first: that very case
    assert set(folder.fetch(key)) == set(held)  # read-only: kept as they were


def test_a_failure_handed_over_past_passing_shrunk_entries_is_shrunk(tmp_path: Path) -> None:
    """The run after such a hand-over: shrunk to the smallest stream over the buffer, as
    without the held entries (not reported 'not deterministic')."""
    config = reader_config(reference_reader(most_lines=8), examples=5)
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None
    folder = DirectoryBasedExampleDatabase(str(tmp_path / "artifact"))
    key = database_key(CHECK, config)
    for value in _passing_entries(strategy, 5):
        folder.save(key, value)
    result = run_check(CHECK, replace(config, database=ReadOnlyDatabase(folder)))
    assert result.outcome == "fail", result.message
    (failure,) = result.failures
    assert failure.stream is not None and failure.stream.count(b"\n") == 9


def test_a_failure_not_shrunk_is_kept_where_fuzz_keeps_one_and_shrunk_next_run(
    tmp_path: Path,
) -> None:
    """``--max-shrinks 0`` keeps the failing case as drawn under ``.secondary``, as
    ``fuzz`` keeps what it found: the next run with a shrink budget shrinks it.  (Kept
    under the check's key itself, Hypothesis took it for a case it had shrunk: replayed,
    never shrunk.)"""
    database = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    quick = reader_config(reference_reader(most_lines=8), database=database, shrink_budget=0)
    first = run_check(CHECK, quick)
    assert first.outcome == "fail", first.message
    drawn_stream = first.failures[0].stream
    assert drawn_stream is not None and drawn_stream.count(b"\n") > 9  # as drawn
    key = database_key(CHECK, quick)
    assert not list(database.fetch(key))
    (kept,) = database.fetch(key + UNSHRUNK)
    again = run_check(CHECK, quick)  # still no shrinking: the same case, still kept
    assert again.failures[0].stream == drawn_stream
    assert list(database.fetch(key + UNSHRUNK)) == [kept]
    shrunk = run_check(CHECK, reader_config(reference_reader(most_lines=8), database=database))
    assert shrunk.outcome == "fail"
    assert shrunk.failures[0].stream is not None
    assert shrunk.failures[0].stream.count(b"\n") == 9
    assert len(list(database.fetch(key))) == 1


def test_a_read_only_database_s_passing_entries_cost_a_budget_and_the_cache_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only database (a GitHub artifact, a directory mounted read-only) keeps
    every entry a fixed client passes, so every run meets them again: each replays only a
    budget of them (the shrunk one first), and from its second run on grades its own cases
    from the case cache, not generated again, the entries after the strata as in the
    first.  Replaying all of them every run, and never reading the cache while any is
    held, would make a run's cost grow with the database."""
    key, left = failed_run_left(tmp_path, "artifact")
    held = left[b""] | left[UNSHRUNK]
    assert len(held) > BUDGET
    artifact = ReadOnlyDatabase(DirectoryBasedExampleDatabase(str(tmp_path / "artifact")))
    cache = tmp_path / "cases"
    fixed = reader_config(reference_reader(), database=artifact, case_cache=cache)
    strata, own = own_cases(fixed)
    _no_engine(monkeypatch)
    graded = graded_streams(monkeypatch)
    first = run_check(CHECK, fixed)
    assert first.outcome == "pass", first.message
    assert first.cases == len(graded) == len(strata) + BUDGET + len(own)
    replayed = graded[len(strata) : len(strata) + BUDGET]
    assert replayed[0].count(b"\n") == 9  # the shrunk one
    no_generation(monkeypatch)
    for _ in range(2):
        graded.clear()
        again = run_check(CHECK, fixed)
        assert again.outcome == "pass", again.message
        assert graded == strata + replayed + own  # as the first, from the cache
        assert again.cases == len(graded)
    assert held_entries(DirectoryBasedExampleDatabase(str(tmp_path / "artifact")), key) == left


def test_a_shared_database_loses_no_more_than_hypothesis_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fixed client's run replays a budget of the held entries (max(2, 25 / 10) = 3,
    the primary one first, as Hypothesis's reuse phase) and drops each that passes from
    the user's own directory and a shared one (Redis): no more than Hypothesis would
    drop; from a read-only one none.  The next run replays the next ones."""
    key, left = failed_run_left(tmp_path, "local")
    local = DirectoryBasedExampleDatabase(str(tmp_path / "local"))
    artifact_dir = DirectoryBasedExampleDatabase(str(tmp_path / "artifact"))
    redis = SharedDatabase(InMemoryExampleDatabase(), "redis://test/0", (OSError,))
    for sub, values in left.items():
        for value in values:
            artifact_dir.save(key + sub, value)
            redis.save(key + sub, value)
    both = MultiplexedDatabase(local, ReadOnlyDatabase(artifact_dir), redis)
    _no_engine(monkeypatch)
    fixed = reader_config(reference_reader(), database=both)
    assert run_check(CHECK, fixed).outcome == "pass"
    assert held_entries(artifact_dir, key) == left
    for part in (local, redis):
        now = held_entries(part, key)
        assert not now[b""] and len(left[UNSHRUNK] - now[UNSHRUNK]) == BUDGET - 1
    # the artifact holds them all: the same seed replays the same budget of them
    assert run_check(CHECK, fixed).outcome == "pass"
    assert held_entries(redis, key) == held_entries(local, key) == now
    # without it, the next ones
    alone = reader_config(reference_reader(), database=MultiplexedDatabase(local, redis))
    assert run_check(CHECK, alone).outcome == "pass"
    for part in (local, redis):
        after = held_entries(part, key)
        assert len(now[UNSHRUNK] - after[UNSHRUNK]) == min(BUDGET, len(now[UNSHRUNK]))


def test_a_held_failure_fails_a_run_from_the_case_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the case cache read while the database holds entries, a failing entry still
    fails the run: graded after the cached strata, behind a passing primary entry, as
    when the cases are drawn, it is handed to Hypothesis and shrunk, and the read-only
    database keeps it."""
    cache = tmp_path / "cases"
    reader = reference_reader(most_lines=90)  # passes every case of the seed (86 lines at most)
    warm = reader_config(reader, case_cache=cache)
    strata, own = own_cases(warm)
    assert max(s.count(b"\n") for s in strata + own) <= 90
    assert run_check(CHECK, warm).outcome == "pass"  # the cache written
    strategy = check_strategy(CHECK, warm.vocabulary())
    assert strategy is not None
    plain = _plain_examples_one_over_90_lines(strategy)
    by_size = sorted(plain, key=lambda d: d.case.stream.count(b"\n"))
    failing, passing = by_size[-1], by_size[0]
    assert failing.case.stream.count(b"\n") > 90
    folder = DirectoryBasedExampleDatabase(str(tmp_path / "artifact"))
    key = database_key(CHECK, warm)
    folder.save(key, choices_to_bytes(passing.choices))
    folder.save(key + UNSHRUNK, choices_to_bytes(failing.choices))
    config = reader_config(reader, case_cache=cache, database=ReadOnlyDatabase(folder))
    no_generation(monkeypatch)
    graded = graded_streams(monkeypatch)
    result = run_check(CHECK, config)
    assert result.outcome == "fail", result.message
    assert graded[: len(strata)] == strata  # from the cache
    after = len(strata) + 2
    assert graded[len(strata) : after] == [passing.case.stream, failing.case.stream]
    (failure,) = result.failures
    assert failure.stream is not None and failure.stream.count(b"\n") == 91  # shrunk
    assert set(folder.fetch(key + UNSHRUNK)) == {choices_to_bytes(failing.choices)}
    monkeypatch.undo()
    cold = run_check(CHECK, replace(config, case_cache=None))
    assert _timeless(cold.to_json()) == _timeless(result.to_json())  # as without the cache


def test_every_held_shrunk_failure_is_replayed_the_budget_aside(tmp_path: Path) -> None:
    """The budget caps what a run replays of the entries not shrunk; every shrunk one
    (a flaw seen) is replayed, as Hypothesis's reuse phase does.  A read-only artifact
    holding more shrunk failures than the budget, of which only the largest still fails,
    fails the run.  (With the budget over all of them, the fixed ones, smaller, took the
    budget and the run passed: a flaw the database held, never graded.)"""
    reader = reference_reader(most_lines=90)  # passes every case of the seed (86 lines at most)
    config = reader_config(reader)
    strategy = check_strategy(CHECK, config.vocabulary())
    assert strategy is not None
    plain = _plain_examples_one_over_90_lines(strategy)
    failing = max(plain, key=lambda d: d.case.stream.count(b"\n"))
    assert failing.case.stream.count(b"\n") > 90
    size = len(choices_to_bytes(failing.choices))
    smaller = {
        choices_to_bytes(d.choices)
        for d in plain
        if d.case.stream.count(b"\n") <= 90 and len(choices_to_bytes(d.choices)) < size
    }
    passing = sorted(smaller, key=lambda v: (len(v), v))[:BUDGET]
    assert len(passing) == BUDGET  # the budget's worth, each before the failing one
    folder = DirectoryBasedExampleDatabase(str(tmp_path / "artifact"))
    key = database_key(CHECK, config)
    for value in [*passing, choices_to_bytes(failing.choices)]:
        folder.save(key, value)
    result = run_check(CHECK, replace(config, database=ReadOnlyDatabase(folder)))
    assert result.outcome == "fail", result.message
    (failure,) = result.failures
    assert failure.stream == failing.case.stream  # a shrunk entry is replayed as it is


def _shortlex(value: bytes) -> tuple[int, bytes]:
    return len(value), value


def _timeless(doc: Any) -> Any:
    """A report without its times."""
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_timeless(v) for v in doc]
    return doc


def test_a_failure_that_does_not_come_back_is_an_error_not_a_pass() -> None:
    """A client that fails a drawn case once and passes it when Hypothesis runs it again
    is not deterministic: the check says so, with the case, instead of passing."""
    conforming = reference_reader()
    buffered = reference_reader(most_lines=8)
    failed: list[int] = []

    def once(lines: Any) -> dict[str, Any]:
        lines = list(lines)
        if len(lines) > 8 and not failed:
            failed.append(1)
            return dict(buffered(iter(lines)))
        return dict(conforming(iter(lines)))

    result = run_check(CHECK, reader_config(once))
    assert failed
    assert result.outcome == "error", result.message
    assert "not deterministic" in result.message
    assert result.failures and result.failures[0].stream is not None
    assert result.failures[0].stream.count(b"\n") > 8
