"""What the fuzzer keeps, and why: a corpus per check of the inputs that did something new.

An input is kept when its case reached something no case had (a code edge, a shape of
input, an answer of the client); it is then mutated further, so a case that met two
conditions is the start of the search for the third.  Each input carries what the
mutators need (the shape of each choice, where the parts of its structure start) and what
it reached, for its weight: the next input to mutate is one of the newest, or one drawn by
how rare the rarest thing it reached still is.  The corpus is bounded; beyond the bound
the least productive of the older inputs go, from the database too.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis.database import ExampleDatabase, choices_to_bytes

from stella_conform.conformance.fuzz.records import (
    CORPUS_SUB_KEY,
    ENERGY_SUB_KEY,
    SHARED_SUB_KEY,
    _digest,
    _shared_record,
    energy_record,
)
from stella_conform.conformance.store.database import KitDatabase
from stella_conform.conformance.store.recordings import RECORDED_ONE_IN
from stella_conform.generators.engine.choices import ChoiceDraw

if TYPE_CHECKING:
    from stella_conform.conformance.fuzz.arms import Arm

#: Inputs kept per check; beyond that the least productive go.
CORPUS_CAP = 400
#: Share of mutated inputs picked among the newest (the rest by rarity, see :func:`pick`).
RECENT_SHARE = 0.5
#: Cases of a check between two recomputations of its corpus entries' weights.
REWEIGH_EVERY = 25

Choices = tuple[Any, ...]


@dataclass(frozen=True)
class Reached:
    """The things an input reached (code edges, input shapes), compactly."""

    keys: Sequence[int]

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class Entry:
    """One corpus input: its choices, the shape of each choice for point mutations, where
    each part of its top-level structure starts, and what it reached (for its weight)."""

    choices: Choices
    shapes: tuple[tuple[str, Any], ...]
    novel: int
    parts: tuple[int, ...] = ()
    pieces: tuple[tuple[int, int], ...] = ()
    reached: Reached | frozenset[int] = frozenset()
    picked: int = 0
    #: Where it came from: ``here``, ``resumed`` (the local database), ``shared`` (another
    #: worker's, through the shared database), ``failure`` (another worker's failure, run
    #: here); and whether a shared input is among its ancestors (its mutants build on
    #: another worker's find).
    origin: str = "here"
    from_shared: bool = False
    #: Whether it starts from a recording (``--seed-corpus``), as its ancestors did.
    recorded: bool = False
    #: How often other workers mutated it (their energy records), and what this worker
    #: last told them.
    shared_picked: int = 0
    told: int = -1
    #: Its choices as the database stores them, and their digest (energy records' key).
    blob: bytes = b""
    digest: bytes = b""
    #: This worker's record of it in the shared database (see
    #: :func:`~stella_conform.conformance.fuzz.records._shared_record`).
    record: bytes = b""


def compact(reached: frozenset[int]) -> Reached:
    """What an input reached, kept for its weight in a fraction of the memory: the code
    edges and input shapes (hundreds an input) as 8-byte integers rather than a frozenset
    of Python integers (about 17 KiB an input, for every input of a long session)."""
    keys = sorted(reached)
    try:
        return Reached(array("q", keys))
    except OverflowError:
        return Reached(tuple(keys))


def _weight(arm: Arm, entry: Entry) -> float:
    """How rare the rarest thing this input reached is, less for inputs mutated often.

    A rare thing that the input's own mutants do not reach again (the client's
    start-up code, reached by its first case only) is no lead: it counts as reached
    by at least a quarter as many cases as the input has had mutants.
    """
    rarest = min((arm.hits[k] for k in entry.reached), default=1)
    picked = entry.picked + entry.shared_picked  # other workers' mutants count too
    return 1.0 / (max(rarest, 1 + picked // 4) * (1 + picked))


def pick(arm: Arm, rnd: random.Random, recordings: bool) -> Entry:
    """A corpus input: one of the newest, or one drawn by how rare the rarest thing it
    reached still is (``recordings``: the session has a seed corpus, see :func:`lineage`).

    A new input is where the search just got to, so each gets a burst of mutants
    soon after it arrives.  Otherwise, an input that reached what few cases reach (a
    code edge, two kinds of line side by side, an answer) is where the next
    condition is most likely within reach; as its mutants reach the same thing too,
    the thing stops being rare and the search moves on.  (By rarity alone, the one
    input with a failed tool call and a text side by side drew 1% of the picks among
    a hundred inputs each kept for something rare.)  Weights are recomputed every
    few cases.
    """
    if len(arm.weights) != len(arm.corpus) or arm.cases - arm.weighed_at >= REWEIGH_EVERY:
        arm.weights = [_weight(arm, e) for e in arm.corpus]
        arm.weighed_at = arm.cases
    corpus, weights = arm.corpus, arm.weights
    if recordings:
        corpus, weights = lineage(arm, rnd)
    if rnd.random() < RECENT_SHARE:
        # the newest inputs first: each gets a burst of mutants soon after it arrives
        back = min(int(rnd.expovariate(0.3)), len(corpus) - 1)
        return corpus[-1 - back]
    (entry,) = rnd.choices(corpus, weights=weights)
    return entry


def lineage(arm: Arm, rnd: random.Random) -> tuple[list[Entry], list[float]]:
    """The inputs a pick is among: those that start from a recording one time in
    :data:`~stella_conform.conformance.store.recordings.RECORDED_ONE_IN` (as fresh runs
    are), the generated ones otherwise.

    Mutants of real recordings find new shapes at every turn (real bodies, real
    orders), so they would be most of the corpus and of its picks, and the generator's
    own structures that no short recording has (turns after the first) would starve:
    with ``--seed-corpus`` and picks by weight alone, the rule-3 deep bug was found on 3
    seeds of 5 in 3,000 cases, against 5 of 5 without.
    """
    recorded = rnd.randrange(RECORDED_ONE_IN) == 0
    picked = [
        (e, w) for e, w in zip(arm.corpus, arm.weights, strict=True) if e.recorded == recorded
    ]
    if not picked or len(picked) == len(arm.corpus):
        return arm.corpus, arm.weights
    return [e for e, _ in picked], [w for _, w in picked]


class Keeper:
    """Adds inputs to a check's corpus, saves them where the next session finds them, and
    drops the least productive beyond :data:`CORPUS_CAP`.

    ``worker`` and ``client`` name this worker and its client in a shared database's
    records; ``kept`` says whether the last case run was kept, ``seeds_kept`` how many
    of the cases started from a recording (``--seed-corpus``) were.
    """

    def __init__(self, database: ExampleDatabase | None, worker: bytes, client: bytes) -> None:
        self.database = database
        self.worker = worker
        self.client = client
        self.kept = False
        self.seeds_kept = 0
        #: Interned shapes of choices (see :meth:`_shape`).
        self._shapes: dict[Hashable, tuple[str, Any]] = {}

    def _shape(self, kind: str, constraints: Any) -> tuple[str, Any]:
        """One choice's shape, the same object for every equal one: an input's shapes are
        one per choice and repeat across the corpus (a few distinct among thousands)."""
        try:
            key: Hashable = (kind, repr(sorted(constraints.items())))
        except (AttributeError, TypeError):
            return kind, constraints
        found = self._shapes.get(key)
        if found is None:
            found = self._shapes[key] = (kind, constraints)
        return found

    def keep(
        self,
        arm: Arm,
        drawn: ChoiceDraw,
        novel: int,
        reached: frozenset[int],
        origin: str = "here",
        from_shared: bool = False,
        found: frozenset[int] = frozenset(),
        *,
        recorded: bool = False,
    ) -> Entry:
        """Add an input to the corpus (``found``: what it found that no case had, which
        its record in the shared database says; ``recorded``: it starts from a
        recording)."""
        shape = self._shape
        shapes = tuple(shape(kind, constraints) for kind, constraints in drawn.shapes())
        parts, pieces = drawn.parts()
        entry = Entry(tuple(drawn.choices), shapes, novel, parts, pieces, compact(reached))
        entry.origin, entry.from_shared = origin, from_shared
        entry.recorded = recorded
        entry.blob = choices_to_bytes(drawn.choices)
        entry.digest = _digest(entry.blob)
        self.kept = True
        if origin in ("shared", "failure"):
            # among the oldest: the bursts of mutants for the newest inputs stay with this
            # worker's own finds (the other worker gave its find its burst already); the
            # picks by rarity reach it wherever it stands
            arm.corpus.insert(0, entry)
        else:
            arm.corpus.append(entry)
        arm.known.add(entry.blob)
        self._save(arm, entry, origin, found)
        if len(arm.corpus) > CORPUS_CAP:
            # drop the least productive of the older half
            half = arm.corpus[: CORPUS_CAP // 2]
            worst = min(half, key=lambda e: (e.novel, -(e.picked + e.shared_picked)))
            arm.corpus.remove(worst)
            self.forget(arm, worst)
        return entry

    def _save(self, arm: Arm, entry: Entry, origin: str, found: frozenset[int]) -> None:
        """Save a kept input: the local database keeps its choices for the next session,
        a shared one gets its record at this worker's next look (an earlier session's
        input is shared now too)."""
        blob = entry.blob
        db = self.database
        key = arm.key + CORPUS_SUB_KEY
        if isinstance(db, KitDatabase) and origin in ("here", "resumed"):
            if origin == "here" and db.local is not None:
                db.local.save(key, blob)
            if db.shared is not None:
                entry.record = _shared_record(self.client, found, blob)
                arm.outbox.append(entry.record)
        elif db is not None and origin == "here":
            db.save(key, blob)

    def forget(self, arm: Arm, entry: Entry) -> None:
        """Drop an input from the local database; from the shared one only if it was this
        worker's own (another worker's input may still be worth something to it)."""
        db = self.database
        if db is None:
            return
        key = arm.key + CORPUS_SUB_KEY
        if not isinstance(db, KitDatabase):
            db.delete(key, entry.blob)
            return
        if db.local is not None:
            db.local.delete(key, entry.blob)
        if entry.record in arm.outbox:
            arm.outbox.remove(entry.record)  # never written
        elif entry.record and db.shared is not None:
            db.shared.delete(arm.key + SHARED_SUB_KEY, entry.record)
        if entry.record and entry.told >= 0 and db.shared is not None:
            db.shared.delete(arm.key + ENERGY_SUB_KEY, self.energy(entry, entry.told))

    def energy(self, entry: Entry, picked: int) -> bytes:
        """This worker's energy record of an input mutated ``picked`` times."""
        return energy_record(entry.digest, self.worker, entry.novel, picked)
