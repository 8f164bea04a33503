"""The entries an example database holds for a check, replayed by a run before its random
examples (a budget of them), and dropped where they pass."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from random import Random

from hypothesis.database import (
    BackgroundWriteDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
    choices_from_bytes,
)

from stella_conform.conformance.checks import Check
from stella_conform.conformance.store.database import ENTRY_CAP, KEY_ENTRIES_CAP, valid_entry
from stella_conform.conformance.suite.config import SuiteConfig, check_seed
from stella_conform.conformance.suite.properties import database_key
from stella_conform.generators.engine.internals import ChoiceT

#: Where a failure found and not shrunk is kept, by ``run`` (``--max-shrinks 0``, a
#: timeout) and by ``fuzz`` alike: Hypothesis's secondary corpus, which it replays and
#: then shrinks (a primary entry it takes for a case it shrank before: one that replays
#: exactly is not shrunk again).  What a shrink passed over is kept there too.
UNSHRUNK = b".secondary"
#: The sub-keys of a check's key whose entries a run replays before drawing anything: the
#: shrunk failures (the key itself), :data:`UNSHRUNK`, and Hypothesis's pareto front
#: (which the kit does not write; an entry found there is replayed like the others).
HELD_SUB_KEYS = (b"", UNSHRUNK, b".pareto")


@dataclass(frozen=True)
class HeldEntry:
    """One entry an example database holds for a check: its bytes, its choices, and the
    sub-keys (:data:`HELD_SUB_KEYS`) it is under."""

    value: bytes
    choices: tuple[ChoiceT, ...]
    subs: tuple[bytes, ...]

    @property
    def primary(self) -> bool:
        """Under the key itself: a failure Hypothesis shrank (or an older kit's unshrunk one)."""
        return b"" in self.subs


def held_budget(examples: int) -> int:
    """How many of the entries an example database holds for a check a run replays, the
    shrunk ones aside (each of those is replayed, as Hypothesis's reuse phase does: each
    is a flaw seen, and few): ``max(2, ⌈examples / 10⌉)``, the size of Hypothesis's reuse
    phase in a run that also generates (``desired_size`` in its engine).  A bound, because
    where a passing entry cannot be dropped (a read-only artifact; a shared Redis, which
    keeps what other machines' clients may still fail) every run meets the same entries
    again, up to
    :data:`~stella_conform.conformance.store.database.KEY_ENTRIES_CAP` under each sub-key: a
    fleet or a CI restoring an old artifact would grade its whole backlog each run."""
    return max(2, math.ceil(0.1 * max(1, examples)))


def held_entries(database: ExampleDatabase, check: Check, config: SuiteConfig) -> list[HeldEntry]:
    """The entries of ``database`` a run replays for ``check``, as Hypothesis's reuse
    phase chooses them: every primary one (failures shrunk, each a flaw seen: a budget
    here would leave a still-failing flaw unreplayed behind fixed ones), smallest first;
    then, if :func:`held_budget` is not spent, a sample of the
    others (:data:`UNSHRUNK`: failures not shrunk, what a shrink passed over; the pareto
    front) drawn with the check's seed, smallest first.  Those left out stay where they
    are, for a run with a budget to spare (the held ones that pass are dropped where they
    may be: :class:`Dropping`) or another seed.

    Entries are input (another run, machine or fuzz session wrote them): at most
    :data:`~stella_conform.conformance.store.database.KEY_ENTRIES_CAP` are read under a sub-key,
    and only those that are what the kit stores there (a choice sequence of at most
    :data:`~stella_conform.conformance.store.database.ENTRY_CAP` bytes) are replayed."""
    budget = held_budget(config.examples)
    key = database_key(check, config)
    found: dict[bytes, list[bytes]] = {}
    for sub in HELD_SUB_KEYS:
        for value in itertools.islice(database.fetch(key + sub), KEY_ENTRIES_CAP):
            if isinstance(value, bytes) and len(value) <= ENTRY_CAP:
                found.setdefault(value, []).append(sub)
    primary = sorted((v for v, subs in found.items() if b"" in subs), key=_shortlex)
    others = sorted(v for v, subs in found.items() if b"" not in subs)  # the server's order aside
    Random(check_seed(config.seed, check.id)).shuffle(others)
    entries: list[HeldEntry] = []
    for value in itertools.chain(primary, others):
        subs = found[value]
        if b"" not in subs and len(entries) >= budget:
            break
        choices = choices_from_bytes(value) if valid_entry(key + subs[0], value) else None
        if choices is not None:
            entries.append(HeldEntry(value, choices, tuple(subs)))
    return sorted(entries, key=lambda e: (not e.primary, *_shortlex(e.value)))


def _shortlex(value: bytes) -> tuple[int, bytes]:
    return len(value), value


def _writable(database: ExampleDatabase) -> list[ExampleDatabase]:
    """The parts of ``database`` a run drops a passing entry from: every one but a
    read-only one (a GitHub artifact)."""
    if isinstance(database, ReadOnlyDatabase | GitHubArtifactDatabase):
        return []
    if isinstance(database, MultiplexedDatabase):
        return [part for wrapped in database._wrapped for part in _writable(wrapped)]
    if isinstance(database, BackgroundWriteDatabase):
        return _writable(database._db)
    return [database]


class Dropping:
    """Drops the held entries a client passes from every part of the database that is
    written (:func:`_writable`): the user's own directory, a shared Redis, a database the
    kit does not know; not a read-only one.  No more than Hypothesis's reuse phase would
    drop: the run replays every primary entry and the others up to :func:`held_budget`
    in all, as Hypothesis does, and drops each that passes."""

    def __init__(self, database: ExampleDatabase, key: bytes) -> None:
        self.written = _writable(database)
        self.key = key

    def drop(self, entry: HeldEntry) -> None:
        for database in self.written:
            for sub in entry.subs:
                database.delete(self.key + sub, entry.value)
