"""One example of a strategy, drawn the way Hypothesis's engine draws one, without the engine.

A run draws about 120 strata and hundreds of random examples; the engine's set-up around
each (its tree of choices, its cache, its reports) would cost more than the draw.  Each
example is drawn here instead, in a ``ConjectureData`` of Hypothesis's own (or
:mod:`leaves`' faster equivalent where it provably draws the same), under the build
context and seeded randoms the engine would use, so the same choices give the same case as
under ``@given`` and a failing example's choices can be handed to Hypothesis to shrink.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from random import Random
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import ChoiceT, ChoiceTemplate
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import HypothesisProvider
from hypothesis.internal.entropy import deterministic_PRNG

T = TypeVar("T")


@dataclass(frozen=True)
class Drawn:
    """A drawn example: the case, and the choices that replay it (a stratum's under
    :meth:`~stella_conform.generators.strata.Stratum.shrinking`)."""

    case: Any
    choices: tuple[ChoiceT, ...]


@lru_cache(maxsize=1)
def drawing() -> tuple[type[ConjectureData], type[HypothesisProvider]]:
    """The data and provider classes the kit draws with: :mod:`leaves`' faster ones where
    they draw exactly what Hypothesis's own do on the installed Hypothesis (they read its
    internals, which move between releases), else Hypothesis's own."""
    try:
        from stella_conform.generators.engine import leaves
    except ImportError:  # a Hypothesis without the internals leaves.py reads
        return ConjectureData, HypothesisProvider
    if not leaves.agrees():
        return ConjectureData, HypothesisProvider
    return leaves.Drawing, leaves.Provider


def drawn(strategy: st.SearchStrategy[T], random: Random | None = None) -> Drawn | None:
    """:func:`simplest`, with the choice sequence it was drawn from; or, given ``random``,
    an example whose choices Hypothesis's provider draws from it, as under ``@given``
    (``generators/engine/examples.py``: a run's random examples)."""
    simplest_choices = (ChoiceTemplate("simplest", count=None),) if random is None else None
    data_class, provider = drawing()
    data = data_class(
        prefix=simplest_choices, random=random or Random(0), max_choices=None, provider=provider
    )
    return drawn_in(data, strategy, simplest)


def drawn_in(data: ConjectureData, strategy: st.SearchStrategy[T], test: Any) -> Drawn | None:
    """``strategy``'s example from ``data``'s choices, drawn as Hypothesis's engine draws
    one for ``test`` (every registered random seeded, in a build context), without the
    engine; ``None`` when it is rejected (a filter, an assumption) or over the size limit.
    A run's strata and random examples, the database entries it replays
    (``generators/engine/examples.py``) and the probe that holds the kit's fast drawing to
    Hypothesis's own (``leaves.agrees``) are all drawn here, so that they draw alike."""
    with deterministic_PRNG(), BuildContext(data, is_final=False, wrapped_test=test):
        try:
            value = data.draw(strategy)
        except (StopTest, UnsatisfiedAssumption):
            return None
    return Drawn(value, tuple(data.choices))


def simplest(strategy: st.SearchStrategy[T]) -> T | None:
    """The first example Hypothesis tries for ``strategy``: every choice its simplest.

    Repeatable (no randomness reaches it); ``None`` if that example is rejected.  Drawn as
    Hypothesis's engine draws it (a ``ConjectureData`` whose every choice comes from the
    ``simplest`` template), without a ``@given`` run around each: a run draws about 120
    strata, and the engine's set-up for each would cost more than drawing it.
    ``tests/generators/test_strata.py`` holds it to the first example of a ``@given`` run.
    """
    got = drawn(strategy)
    return None if got is None else got.case


__all__ = ["Drawn", "drawing", "drawn", "drawn_in", "simplest"]
