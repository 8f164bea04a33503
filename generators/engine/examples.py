"""A check's random examples, drawn by the kit without Hypothesis's engine around each.

Under ``@given`` every example pays for the engine: its tree of every choice made so far
(to draw a novel prefix, and to record the example), its cache, its mutation of earlier
examples, its reports.  That is about half a millisecond an example, a quarter of what a
default run's generation costs, to prepare for a failure that, for a client worth
shipping, never comes.  So a run draws its examples here: each from the check's own
strategy in a ``ConjectureData`` of Hypothesis's own, whose choices come from Hypothesis's
provider (the same weighting, the same boundary values and constants as under
``@given``), from a ``random.Random`` seeded by the run's seed and the check (the same
cases every time), no two with the same choices.  The strata are drawn the same way
(:func:`stella_conform.generators.engine.draw.drawn`, every choice the simplest).

Each example keeps its choice sequence.  When a client fails one, the run hands that
sequence to Hypothesis (:func:`~stella_conform.conformance.suite.properties.shrink_drawn`), which
replays it, shrinks it and saves the smallest in the run's example database, as for a
failure Hypothesis had drawn itself.

The entries an example database holds for a check (the failures of earlier runs and fuzz
sessions, the cases a shrink passed over) are replayed the same way, from their choices
(:func:`redrawn`), after the check's strata and before its random examples
(:func:`~stella_conform.conformance.suite.held_entries`): every shrunk entry, and of the
others at most :func:`~stella_conform.conformance.suite.held_budget`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from random import Random
from typing import Any

from hypothesis.internal.conjecture.choice import ChoiceT, choices_key
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.strategies import SearchStrategy

from stella_conform.generators.engine.draw import Drawn, drawn_in
from stella_conform.generators.engine.draw import drawn as draw_once

#: Draws a check may make per example it wants (rejected or repeated ones included), as
#: Hypothesis gives up on a strategy after ten calls an example.
TRIES_PER_EXAMPLE = 10


def drawn(strategy: SearchStrategy[Any], seed: int, count: int) -> Iterator[Drawn]:
    """Up to ``count`` distinct examples of ``strategy`` (fewer when it has fewer, or
    rejects most draws), the same ones for the same seed."""
    random = Random(seed)
    seen: set[Any] = set()
    for _ in range(TRIES_PER_EXAMPLE * count):
        if len(seen) >= count:
            return
        one = draw_once(strategy, random)
        if one is None:
            continue  # rejected (a filter, an assumption) or over the size limit
        key = choices_key(one.choices)
        if key in seen:
            continue
        seen.add(key)
        yield one


def redrawn(
    strategy: SearchStrategy[Any], choices: Sequence[ChoiceT], random: Random
) -> Drawn | None:
    """The example ``choices`` make of ``strategy``, as Hypothesis's reuse phase replays
    a database entry: a choice the strategy no longer makes there is replaced by its
    simplest, and choices past the entry's end are drawn from ``random`` (an entry of
    another version of the kit).  ``None`` when the strategy rejects it or it is over the
    size limit (Hypothesis would drop such an entry)."""
    data = ConjectureData(prefix=choices, random=random, max_choices=None)
    return drawn_in(data, strategy, redrawn)


__all__ = ["TRIES_PER_EXAMPLE", "drawn", "redrawn"]
