"""A check's Hypothesis property: its example database and key, its random examples, and
a case drawn outside the engine handed over to Hypothesis to shrink."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    choices_to_bytes,
)
from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import Check
from stella_conform.conformance.suite.cases import GeneratedCase
from stella_conform.conformance.suite.config import SuiteConfig, check_seed
from stella_conform.generators.engine.examples import drawn
from stella_conform.generators.engine.internals import (
    ChoiceT,
    key_entries,
    property_digest,
    use_database,
)


def example_database(config: SuiteConfig) -> ExampleDatabase | None:
    """The example database a run (and a fuzz session) reads and writes, if any."""
    database: ExampleDatabase | None = config.database
    if database is None and config.database_dir is not None:
        database = DirectoryBasedExampleDatabase(str(config.database_dir))
    return database


#: Hypothesis's phases for a check's random examples, and for shrinking a case drawn
#: outside them (:func:`shrink_drawn`: it is replayed from the database, then shrunk).
GENERATING = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
SHRINKING = (Phase.reuse, Phase.shrink)


def check_property(
    check: Check,
    config: SuiteConfig,
    strategy: SearchStrategy[GeneratedCase],
    body: Callable[[GeneratedCase], None],
    *,
    phases: Sequence[Phase] = GENERATING,
    database: ExampleDatabase | bool | None = True,
) -> Any:
    """The Hypothesis property a check's generated cases run under.

    ``run`` and ``fuzz`` both build their property here, so they share its example
    database key: a failure ``fuzz`` saves is the first thing the next ``run`` replays.
    ``database``: ``True`` for the run's own (:func:`example_database`), or the one given.
    """

    @hypothesis_seed(check_seed(config.seed, check.id))
    @settings(
        max_examples=max(1, config.examples),
        deadline=None,
        derandomize=False,
        phases=list(phases),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(strategy)
    def property_(case: GeneratedCase) -> None:
        body(case)

    # @seed switches the example database off; the kit wants both, a reproducible draw
    # and the failures of earlier runs (and fuzz sessions) replayed first.
    use_database(property_, example_database(config) if database is True else database or None)
    # A stable database key per (check, client) so a failure replays first next run.
    fn = getattr(config.client.function, "read", config.client.function)  # inprocess.Parser
    who = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else shlex.join(config.client.argv)
    name = f"{check.id}|{who}|{config.client.mode}"
    if config.recordings and check.kind.recordings:
        from stella_conform.conformance.store.recordings import digest

        name += f"|recordings {digest(config.recordings)}"  # their cases' own keys
    key = name.encode()
    key_entries(property_, key)
    return property_


def random_examples(
    check: Check, config: SuiteConfig, strategy: SearchStrategy[GeneratedCase]
) -> Iterator[tuple[GeneratedCase, tuple[ChoiceT, ...]]]:
    """The random examples a run grades for a check (after its strata and a budget of what
    the example database holds for it:
    :func:`~stella_conform.conformance.suite.held.held_entries`): ``config.examples`` of
    them, drawn by the kit itself (:func:`~stella_conform.generators.engine.draw.drawn`,
    seeded by the run's seed and the check), each with the choices Hypothesis replays (and
    shrinks) if the client fails it."""
    for one in drawn(strategy, check_seed(config.seed, check.id), config.examples):
        yield one.case, one.choices


def database_key(check: Check, config: SuiteConfig) -> bytes:
    """The example-database key under which ``run`` keeps (and replays) a check's failures."""
    from hypothesis.strategies import nothing

    prop = check_property(check, config, nothing(), lambda case: None)
    return property_digest(prop.hypothesis.inner_test)


class HandedOver(ExampleDatabase):
    """The example database of a shrink (:func:`shrink_drawn`): Hypothesis reads from it
    one case drawn outside its engine, as the check's *secondary* entry, and nothing
    else; what it writes (the shrunk case, the ones it passed over) goes to the run's own
    database (``kept``).

    Secondary, not primary: Hypothesis replays its primary entries as cases it shrank
    before, and does not shrink one that replays exactly.  Nothing else read: the run
    has replayed what ``kept`` holds for the check
    (:func:`~stella_conform.conformance.suite.held.held_entries`: every primary entry)
    before it hands a case over, and those still held passed (a read-only database keeps
    them).  Read through, Hypothesis's reuse phase graded each primary one again before the
    handed-over case, and with as many as the run's examples (its reuse phase's size when it
    does not generate) never reached it: the failure was reported as "not deterministic".
    With no ``kept`` database nothing is kept (a stratum's choices replay only under its own
    strategy, not the check's, so the check's key must not hold them).
    """

    def __init__(self, key: bytes, choices: Sequence[Any], kept: ExampleDatabase | None) -> None:
        super().__init__()
        self.secondary = key + b".secondary"
        self.entry = choices_to_bytes(choices)
        self.kept = kept

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return [self.entry] if key == self.secondary else []

    def save(self, key: bytes, value: bytes) -> None:
        if self.kept is not None:
            self.kept.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        if self.kept is not None and not (key == self.secondary and value == self.entry):
            self.kept.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if self.kept is not None:
            self.kept.move(src, dest, value)


def shrink_drawn(
    check: Check,
    config: SuiteConfig,
    strategy: SearchStrategy[GeneratedCase],
    body: Callable[[GeneratedCase], None],
    choices: Sequence[Any],
    *,
    kept: ExampleDatabase | None,
) -> None:
    """Hand a failing case drawn outside Hypothesis's engine (its choice sequence for
    ``strategy``) to Hypothesis to shrink: replayed first, then shrunk, ``body`` judging
    each candidate as it judges every case; the failure Hypothesis ends with raises from
    here as any property's does.  The one way the kit hands a drawn case over (a failing
    stratum: :func:`~stella_conform.conformance.suite.generated.generated_judgments`)."""
    key = database_key(check, config)
    database = HandedOver(key, choices, kept)
    check_property(check, config, strategy, body, phases=SHRINKING, database=database)()
