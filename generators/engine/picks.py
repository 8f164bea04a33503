"""Draws of an index or an option, through strategies built once per size.

``st.sampled_from(a_list)`` builds and validates a new strategy on every call, which
costs more than the draw itself; a mutation that picks one line of the stream would do
that once per case.
These helpers draw an index with one cached ``st.integers(0, n - 1)`` per size: the
same choice, shrinking towards the first option as ``sampled_from`` does, and no
draw at all when there is only one option (as ``sampled_from`` of one value).

A few choices a mutation makes are *sites* (:func:`choose_at`): while a run's strata
are built (:mod:`stella_conform.generators.strata`) a site may be set to one option,
so that the option is graded in every run, not only on the seeds that draw it.
Outside :func:`forcing` a site is an ordinary draw, and the random examples draw
exactly what they drew before there were strata.

Inside :func:`forcing` (a stratum) every site is one recorded choice, forced to the
option the stratum sets: the stratum's choice sequence then spells it whole, so
Hypothesis can replay a failing stratum from its choices and shrink it (under
``forcing({})``, where every site reads its choice back instead of setting it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.intervalsets import IntervalSet

T = TypeVar("T")


@cache
def _below(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, n - 1)


def index(draw: st.DrawFn, n: int) -> int:
    """An index in ``range(n)``, ``n`` at least 1."""
    if n < 1:
        raise ValueError("nothing to choose from")
    return 0 if n == 1 else draw(_below(n))


def choose(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of ``options`` (shrinks towards the first)."""
    return options[index(draw, len(options))]


def between(draw: st.DrawFn, lo: int, hi: int) -> int:
    """An integer in ``[lo, hi]`` (shrinks towards ``lo``)."""
    return lo + index(draw, hi - lo + 1)


#: The sites set while a stratum is drawn (none outside :func:`forcing`).
_FORCED: ContextVar[Mapping[str, int] | None] = ContextVar("stella_forced_sites", default=None)


@contextmanager
def forcing(sites: Mapping[str, int]) -> Iterator[None]:
    """Draws inside the block take option ``sites[name]`` at each site named there."""
    token = _FORCED.set(dict(sites))
    try:
        yield
    finally:
        _FORCED.reset(token)


def forced(site: str) -> int | None:
    """The option a stratum sets at ``site`` (``None``: draw it)."""
    sites = _FORCED.get()
    return None if sites is None else sites.get(site)


class _Site(st.SearchStrategy[int]):
    """One choice in ``range(n)``, forced to ``at`` when that is not ``None``: a site of a
    stratum, recorded in its choice sequence either way."""

    def __init__(self, n: int, at: int | None) -> None:
        super().__init__()
        self.n, self.at = n, at

    def do_draw(self, data: ConjectureData) -> int:
        return data.draw_integer(0, self.n - 1, forced=self.at)


#: Every character a string may hold (surrogates aside, as ``st.text()``).
_ANY_CHARACTER = IntervalSet([(0, 0xD7FF), (0xE000, 0x10FFFF)])


class _Text(st.SearchStrategy[str]):
    """A string of a stratum, forced to ``text`` when that is not ``None``."""

    def __init__(self, text: str | None) -> None:
        super().__init__()
        self.text = text

    def do_draw(self, data: ConjectureData) -> str:
        return data.draw_string(_ANY_CHARACTER, min_size=0, max_size=64, forced=self.text)


def _site(draw: st.DrawFn, sites: Mapping[str, int], site: str, n: int) -> int:
    at = sites.get(site)
    if at is not None and not 0 <= at < n:
        raise ValueError(f"site {site!r} has {n} options, not {at + 1}")
    return draw(_Site(n, at))


def index_at(draw: st.DrawFn, site: str, n: int) -> int:
    """:func:`index`, or the option a stratum being built sets at ``site``."""
    sites = _FORCED.get()
    return index(draw, n) if sites is None else _site(draw, sites, site, n)


def choose_at(draw: st.DrawFn, site: str, options: Sequence[T]) -> T:
    """:func:`choose`, or the option a stratum being built sets at ``site``."""
    return options[index_at(draw, site, len(options))]


def set_at(draw: st.DrawFn, site: str, options: Sequence[T], drawn: T) -> T:
    """``drawn``, or the option a stratum being built sets at ``site`` (the draw is made
    either way, so a stratum changes no other draw)."""
    sites = _FORCED.get()
    return drawn if sites is None else options[_site(draw, sites, site, len(options))]


def option_at(draw: st.DrawFn, site: str, n: int) -> int | None:
    """The option in ``range(n)`` a stratum sets at ``site``; ``None`` where it sets none,
    and always outside a stratum (no draw there: the random examples are as they were)."""
    sites = _FORCED.get()
    if sites is None:
        return None
    at = sites.get(site)
    if at is not None and not 0 <= at < n:
        raise ValueError(f"site {site!r} has {n} options, not {at + 1}")
    got = draw(_Site(n + 1, None if at is None else at + 1))
    return None if got == 0 else got - 1


def text_at(draw: st.DrawFn, site: str, text: str) -> str:
    """``text``, the string a stratum sets at ``site``; a recorded choice inside a
    stratum, so a failing stratum's shrink can shorten it (when replayed under
    ``forcing({})``, the site not set, it is read back from the choices)."""
    sites = _FORCED.get()
    if sites is None:
        return text
    return draw(_Text(text if site in sites else None))


__all__ = [
    "between",
    "choose",
    "choose_at",
    "forced",
    "forcing",
    "index",
    "index_at",
    "option_at",
    "set_at",
    "text_at",
]
