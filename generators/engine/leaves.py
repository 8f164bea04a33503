"""The kit's own draws: a ``ConjectureData`` whose one-choice draws skip the bookkeeping.

A run draws its strata and its random examples itself
(:func:`~stella_conform.generators.engine.draw.drawn`), each in a
``ConjectureData``, through the generators' ``draw(st.integers(0, n))``,
``draw(st.booleans())`` and ``draw(st.sampled_from(...))``: about thirty draws a case,
most of them one integer or one boolean.  ``ConjectureData.draw`` spends more on each
than the choice itself costs: it validates the strategy, unwraps it, computes its label,
opens and closes a span for it, records the value for the explain phase.  None of that
changes the choice, which comes from the same provider call either way.

:class:`Drawing` makes the same provider calls with the same constraints for a strategy
it knows to be one choice (bounded or not ``integers`` with the weighting
``IntegersStrategy`` gives a range wider than 127, ``booleans``, ``sampled_from`` with
no ``map`` or ``filter``, ``just``, a stratum's site, and a ``map`` of one of these),
without the span around it, calls an ``st.composite`` function with its own ``draw``
as ``CompositeStrategy.do_draw`` does (without the span), and hands every other
strategy to ``ConjectureData.draw``;
its :class:`Provider` is Hypothesis's, with fewer steps to the same integers.  So the
choice sequence, and the case, are exactly the ones the plain ``ConjectureData`` draws
(``tests/generators/engine/test_leaves.py`` holds it to them, for every check's strata and random
examples), and Hypothesis replays and shrinks them as before: a shrink runs under
Hypothesis's engine, whose data draws every strategy itself.  What a leaf loses is its
span, which only Hypothesis's shrinker and explain phase read, and neither runs here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import BooleanConstraints, IntegerConstraints
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import INTEGERS_DISTRIBUTION, HypothesisProvider
from hypothesis.internal.conjecture.utils import compute_sampler_table
from hypothesis.internal.floats import clamp
from hypothesis.strategies import SearchStrategy
from hypothesis.strategies._internal.core import CompositeStrategy
from hypothesis.strategies._internal.lazy import unwrap_strategies
from hypothesis.strategies._internal.misc import BooleansStrategy, JustStrategy
from hypothesis.strategies._internal.numbers import IntegersStrategy
from hypothesis.strategies._internal.strategies import MappedStrategy, SampledFromStrategy

from stella_conform.generators.engine.picks import _Site

Leaf = Callable[[ConjectureData], Any]

#: Per strategy object: how to draw it as one choice (``None``: not one we know).
#: Strategies are hashed by identity; most a run draws are built once (module constants,
#: ``@cacheable`` ones), and the few built per case are let go when the table fills.
_LEAVES: dict[SearchStrategy[Any], Leaf | None] = {}
_MOST = 4096


def _integers(s: IntegersStrategy) -> Leaf:
    lo, hi = s.start, s.end
    weights = None
    if lo is not None and hi is not None and hi - lo > 127:
        # IntegersStrategy.do_draw's weighting: the bounds and next to them more often
        weights = {lo: 2 / 128, lo + 1: 1 / 128, hi - 1: 1 / 128, hi: 2 / 128}
    # the constraints ConjectureData.draw_integer makes (and checks) for these arguments
    constraints: IntegerConstraints = {
        "min_value": lo,
        "max_value": hi,
        "weights": weights,
        "shrink_towards": 0,
    }
    return lambda data: data._draw("integer", constraints, observe=True, forced=None)


_HALF: BooleanConstraints = {"p": 0.5}


def _boolean(data: ConjectureData) -> bool:
    return data._draw("boolean", _HALF, observe=True, forced=None)


#: Per (min_value, max_value): the bounds and CDF interval the provider computes for them
#: on every draw (a pure function of the two, so computed once).
_SPANS: dict[tuple[int | None, int | None], tuple[int, int, float, float, bool]] = {}


def _span(min_value: int | None, max_value: int | None) -> tuple[int, int, float, float, bool]:
    """HypothesisProvider._draw_integer_from_distribution's set-up, as it computes it."""
    dist = INTEGERS_DISTRIBUTION
    if min_value is None and max_value is None:
        min_value, max_value = -(2**128), 2**128
    elif min_value is None:
        assert max_value is not None
        min_value = -max(2**128, 2 * abs(max_value))
    elif max_value is None:
        max_value = max(2**128, 2 * abs(min_value))
    lo, hi, safe = 0.0, 1.0, True
    try:
        cdf_min, cdf_max = min_value - 0.5, max_value + 0.5
    except OverflowError:
        safe = False
    else:
        lo, hi = dist.cdf(cdf_min), dist.cdf(cdf_max)
        if hi - lo < 1e-13:
            safe = False
    return min_value, max_value, lo, hi, safe


class Provider(HypothesisProvider):
    """Hypothesis's provider, its integers drawn with fewer steps: the same calls on the
    same ``random.Random`` in the same order, so the same choices
    (``tests/generators/engine/test_leaves.py``).  A weighted integer draws its sampler's index and
    alternative from the provider directly, not through the data's bookkeeping (which
    does nothing for a draw it does not record), and the distribution's bounds are
    computed once per range."""

    def draw_integer(
        self,
        min_value: int | None = None,
        max_value: int | None = None,
        *,
        weights: dict[int, float] | None = None,
        shrink_towards: int = 0,
    ) -> int:
        if weights is None:
            return super().draw_integer(min_value, max_value, shrink_towards=shrink_towards)
        constant = self._maybe_draw_constant(
            "integer",
            {
                "min_value": min_value,
                "max_value": max_value,
                "weights": weights,
                "shrink_towards": shrink_towards,
            },
        )
        if constant is not None:
            assert isinstance(constant, int)
            return constant
        # Sampler([1 - sum, *weights]).sample(data): data.choice(table) and
        # data.draw_boolean(chance), neither recorded (observe=False)
        values = tuple(weights.values())
        table = compute_sampler_table((1 - sum(values), *values))
        base, alternate, chance = table[self.draw_integer(0, len(table) - 1)]
        index = alternate if self.draw_boolean(chance) else base
        if index == 0:
            return self._draw_integer_from_distribution(min_value, max_value)
        return list(weights)[index - 1]

    def _draw_integer_from_distribution(self, min_value: int | None, max_value: int | None) -> int:
        key = (min_value, max_value)
        span = _SPANS.get(key)
        if span is None:
            if len(_SPANS) >= _MOST:
                _SPANS.clear()
            span = _SPANS[key] = _span(min_value, max_value)
        low, high, lo, hi, safe = span
        random = self._random
        assert random is not None
        if safe:
            while (p := lo + random.random() * (hi - lo)) in {0, 1}:
                pass  # pragma: no cover
            return clamp(low, round(INTEGERS_DISTRIBUTION.inverse_cdf(p)), high)
        return random.randint(low, high)


def _mapped(inner: Leaf, pack: Callable[[Any], Any]) -> Leaf:
    def draw(data: ConjectureData) -> Any:
        failed: UnsatisfiedAssumption | None = None
        for _ in range(3):  # MappedStrategy.do_draw's tries
            try:
                return pack(inner(data))
            except UnsatisfiedAssumption as err:
                failed = err
        assert failed is not None
        raise failed

    return draw


def leaf(strategy: SearchStrategy[Any]) -> Leaf | None:
    """How :class:`Drawing` draws ``strategy`` itself, or ``None`` (``ConjectureData``
    draws it)."""
    s = unwrap_strategies(strategy)  # type: ignore[no-untyped-call]
    kind = type(s)
    if kind is IntegersStrategy:
        return _integers(s)
    if kind is BooleansStrategy:
        return _boolean
    if kind is JustStrategy and not s._transformations:
        value = s.value
        return lambda data: value
    if kind is SampledFromStrategy and not s._transformations:
        elements, last = s.elements, len(s.elements) - 1
        constraints: IntegerConstraints = {
            "min_value": 0,
            "max_value": last,
            "weights": None,
            "shrink_towards": 0,
        }
        return lambda data: elements[data._draw("integer", constraints, observe=True, forced=None)]
    if kind is _Site:
        n, at = s.n, s.at
        return lambda data: data.draw_integer(0, n - 1, forced=at)
    if kind is CompositeStrategy:
        # its function, given this data's draw (CompositeStrategy.do_draw), without the span
        definition, args, kwargs = s.definition, s.args, s.kwargs
        return lambda data: definition(data.draw, *args, **kwargs)
    if kind is MappedStrategy and not isinstance(s.pack, type):
        inner = leaf(s.mapped_strategy)
        return None if inner is None else _mapped(inner, s.pack)
    return None


def _sampled(data: ConjectureData, s: SampledFromStrategy[Any]) -> Any:
    if type(s) is JustStrategy:
        return s.value
    constraints: IntegerConstraints = {
        "min_value": 0,
        "max_value": len(s.elements) - 1,
        "weights": None,
        "shrink_towards": 0,
    }
    return s.elements[data._draw("integer", constraints, observe=True, forced=None)]


class Drawing(ConjectureData):
    """``ConjectureData`` drawing the strategies :func:`leaf` knows without a span each."""

    def draw(
        self, strategy: SearchStrategy[Any], label: int | None = None, observe_as: str | None = None
    ) -> Any:
        if label is None and observe_as is None and self.depth > 0:
            kind = type(strategy)
            if (kind is SampledFromStrategy or kind is JustStrategy) and not (
                strategy._transformations  # type: ignore[attr-defined]
            ):
                # most often built for the draw (``st.sampled_from(options)``): nothing
                # to validate (``sampled_from`` refused an empty sequence), nothing kept
                return _sampled(self, strategy)  # type: ignore[arg-type]
            try:
                fast = _LEAVES[strategy]
            except KeyError:
                strategy.validate()  # as ConjectureData.draw does first (once a strategy)
                fast = leaf(strategy)
                if len(_LEAVES) >= _MOST:
                    _LEAVES.clear()
                _LEAVES[strategy] = fast
            if fast is not None:
                return fast(self)
        return super().draw(strategy, label, observe_as)


def _probe() -> SearchStrategy[Any]:
    """One strategy with a leaf of every kind :func:`leaf` knows, and one it hands on.

    No ``st.text``: its first draw builds Hypothesis's table of every character
    (``generators/alphabets.py``), which makes a run's memory several times larger."""
    from hypothesis import strategies as st

    @st.composite
    def nested(draw: Callable[[SearchStrategy[Any]], Any]) -> Any:
        return [draw(st.integers(-3, 500)) for _ in range(draw(st.integers(0, 4)))]

    return st.tuples(
        st.integers(0, 1000), st.integers(0, 5), st.integers(), st.integers(min_value=7),
        st.booleans(), st.sampled_from("abcdef"), st.just(1), st.integers(0, 300).map(str),
        nested(), st.sampled_from(range(200)).map(hex),
    )  # fmt: skip


def agrees(seeds: int = 4) -> bool:
    """Whether :class:`Drawing` and :class:`Provider` draw, on the installed Hypothesis,
    the very choices and values the plain ``ConjectureData`` and Hypothesis's provider
    draw from the same ``random.Random``.  They read Hypothesis's internals, which move
    between releases: where they no longer agree (or fail), the kit draws the plain way,
    slower and the same cases (``draw.drawing``)."""
    from random import Random

    from stella_conform.generators.engine.draw import drawn_in

    probe = _probe()
    try:
        for seed in range(seeds):
            drawn = []
            for data_class, provider in ((ConjectureData, HypothesisProvider), (Drawing, Provider)):
                data = data_class(
                    prefix=None, random=Random(seed), max_choices=None, provider=provider
                )
                drawn.append(drawn_in(data, probe, agrees))
            if drawn[0] is None or drawn[0] != drawn[1]:
                return False
    except Exception:  # any failure of the fast path means: not this one
        return False
    return True


__all__ = ["Drawing", "Provider", "agrees", "leaf"]
