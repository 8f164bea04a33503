"""The kit's own draws (generators/engine/leaves.py) make exactly the choices Hypothesis's own
``ConjectureData`` and provider make: the same cases for the same seed, as before the
one-choice draws skipped their bookkeeping."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.entropy import deterministic_PRNG

from stella_conform.conformance.checks import select
from stella_conform.conformance.suite import check_seed, check_strategy, check_stratum_list
from stella_conform.generators.engine import leaves
from stella_conform.generators.engine.draw import drawn
from stella_conform.generators.engine.leaves import Drawing, Provider
from stella_conform.generators.engine.picks import forcing
from stella_conform.schemas.vocabulary import Vocabulary


def _stock(strategy: st.SearchStrategy[Any], random: Random) -> tuple[Any, tuple[Any, ...]] | None:
    """``draw.drawn`` as it was: Hypothesis's own data and provider."""
    data = ConjectureData(prefix=None, random=random, max_choices=None)
    with deterministic_PRNG(), BuildContext(data, is_final=False, wrapped_test=_stock):
        try:
            value = data.draw(strategy)
        except (StopTest, UnsatisfiedAssumption):
            return None
    return value, tuple(data.choices)


def _stream(case: Any) -> Any:
    return getattr(case, "stream", case)


def _checks() -> list[Any]:
    return [c for c in select(("reader",)) if check_strategy(c, Vocabulary.default()) is not None]


@pytest.mark.parametrize("check", _checks(), ids=lambda c: c.id)
def test_a_check_s_random_examples_are_the_choices_hypothesis_draws(check: Any) -> None:
    strategy = check_strategy(check, Vocabulary.default())
    assert strategy is not None
    for n in range(6):
        seed = check_seed(n, check.id)
        ours, theirs = drawn(strategy, Random(seed)), _stock(strategy, Random(seed))
        if theirs is None:
            assert ours is None
            continue
        assert ours is not None
        assert ours.choices == theirs[1]
        assert _stream(ours.case) == _stream(theirs[0])


@pytest.mark.parametrize("check", _checks()[:6], ids=lambda c: c.id)
def test_a_check_s_strata_are_the_choices_hypothesis_draws(check: Any) -> None:
    from hypothesis.internal.conjecture.choice import ChoiceTemplate

    for stratum in check_stratum_list(check, Vocabulary.default()):
        with forcing(stratum.sites):
            ours = stratum.draw()
            data = ConjectureData(
                prefix=(ChoiceTemplate("simplest", count=None),), random=Random(0), max_choices=None
            )
            with deterministic_PRNG(), BuildContext(data, is_final=False, wrapped_test=_stock):
                try:
                    theirs = data.draw(stratum.strategy)
                except (StopTest, UnsatisfiedAssumption):
                    assert ours is None
                    continue
        assert ours is not None
        assert ours.choices == tuple(data.choices)
        assert _stream(ours.case) == _stream(theirs)


LEAVES = [
    st.integers(0, 1),
    st.integers(0, 127),
    st.integers(0, 128),
    st.integers(-5, 575),
    st.integers(0, 2**32 - 1),
    st.integers(10**30, 10**30 + 7),
    st.integers(min_value=3),
    st.integers(max_value=-3),
    st.integers(),
    st.booleans(),
    st.sampled_from(("a", "b", "c")),
    st.sampled_from(list(range(300))),
    st.just([1]),
    st.integers(0, 2**7 - 1).map(lambda n: n * 2),
]


def test_every_kind_of_one_choice_draw_is_the_choice_hypothesis_makes() -> None:
    """Each leaf :class:`Drawing` draws itself, many times over, on the random state
    Hypothesis's own data would be in: the same values and the same choices (the
    provider's constants, the weighting's sampler and both ends included)."""

    def draws(data_class: type[ConjectureData], provider: Any, seed: int) -> tuple[Any, ...]:
        data = data_class(prefix=None, random=Random(seed), max_choices=None, provider=provider)

        @st.composite
        def many(draw: st.DrawFn) -> list[Any]:
            return [draw(s) for _ in range(40) for s in LEAVES]

        with deterministic_PRNG(), BuildContext(data, is_final=False, wrapped_test=draws):
            values = data.draw(many())
        return values, tuple(data.choices), tuple(n.constraints for n in data.nodes)

    for seed in range(25):
        stock = draws(ConjectureData, leaves.HypothesisProvider, seed)
        assert draws(Drawing, Provider, seed) == stock
        assert draws(ConjectureData, Provider, seed) == stock


def test_only_one_choice_strategies_are_drawn_without_hypothesis() -> None:
    assert leaves.leaf(st.integers(0, 3)) is not None
    assert leaves.leaf(st.integers(0, 3).filter(lambda n: n % 2 == 0)) is None
    assert leaves.leaf(st.integers(0, 3).map(lambda n: -n)) is not None  # a map of a leaf
    assert leaves.leaf(st.sampled_from((1, 2)).map(str)) is None  # its own transformations
    assert leaves.leaf(st.sampled_from((1, 2)).filter(bool)) is None
    assert leaves.leaf(st.lists(st.integers())) is None
    assert leaves.leaf(st.composite(lambda draw: draw(st.booleans()))()) is not None
    assert leaves.leaf(st.text()) is None


def test_the_installed_hypothesis_draws_through_the_kit_s_own_classes() -> None:
    """The tests above compare the fast path with Hypothesis's own; on the Hypothesis the
    suite installs it must be the path a run takes, or they compare the plain path with
    itself."""
    from stella_conform.generators.engine import draw

    assert leaves.agrees()
    assert draw.drawing() == (Drawing, Provider)


def _fallback_draws() -> list[Any]:
    from stella_conform.generators.engine import draw

    draw.drawing.cache_clear()
    try:
        classes = draw.drawing()
        check = _checks()[0]
        strategy = check_strategy(check, Vocabulary.default())
        assert strategy is not None
        got = [drawn(strategy, Random(check_seed(n, check.id))) for n in range(4)]
        return [classes, *((d.choices, _stream(d.case)) if d else None for d in got)]
    finally:
        draw.drawing.cache_clear()


def test_a_hypothesis_whose_internals_moved_is_drawn_the_plain_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """leaves.py reads Hypothesis's internals, which move between releases (6.150 has no
    ``INTEGERS_DISTRIBUTION``: an ImportError; a release could change a signature instead,
    and draw other choices or fail): the kit then draws with Hypothesis's own classes, the
    same cases, instead of dying on import."""
    import sys

    from hypothesis.internal.conjecture.providers import HypothesisProvider

    fast = _fallback_draws()
    import stella_conform.generators.engine as package

    with monkeypatch.context() as patch:  # the import fails as on such a Hypothesis
        patch.setitem(sys.modules, "stella_conform.generators.engine.leaves", None)
        patch.delattr(package, "leaves")
        missing = _fallback_draws()
    monkeypatch.setattr(leaves, "agrees", lambda seeds=4: False)
    disagrees = _fallback_draws()
    assert fast[0] == (Drawing, Provider)
    assert missing[0] == disagrees[0] == (ConjectureData, HypothesisProvider)
    assert fast[1:] == missing[1:] == disagrees[1:]


def test_the_fast_path_is_refused_where_it_draws_other_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``agrees`` compares both paths on the installed Hypothesis: a provider that draws
    another integer (as a release that moved a weighting would) is caught."""
    real = Provider.draw_integer

    def off_by_one(self: Any, *args: Any, **kwargs: Any) -> int:
        value = real(self, *args, **kwargs)
        high = kwargs.get("max_value", args[1] if len(args) > 1 else None)
        return value if high is not None and value >= high else value + 1

    monkeypatch.setattr(Provider, "draw_integer", off_by_one)
    assert not leaves.agrees()
    monkeypatch.setattr(Drawing, "draw", lambda *a, **k: 1 / 0)
    assert not leaves.agrees()
