"""Draws of an index or an option, through strategies built once per size.

``st.sampled_from(a_list)`` builds and validates a new strategy on every call, which
costs more than the draw itself (about 130 µs against 50 µs on the machine the kit is
measured on); a mutation that picks one line of the stream does that once per case.
These helpers draw an index with one cached ``st.integers(0, n - 1)`` per size: the
same choice, shrinking towards the first option as ``sampled_from`` does, and no
draw at all when there is only one option (as ``sampled_from`` of one value).

A few choices a mutation makes are *sites* (:func:`choose_at`): while a run's strata
are built (:mod:`stella_conform.generators.strata`) a site may be set to one option,
so that the option is graded in every run, not only on the seeds that draw it.
Outside :func:`forcing` a site is an ordinary draw.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TypeVar

from hypothesis import strategies as st

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


def index_at(draw: st.DrawFn, site: str, n: int) -> int:
    """:func:`index`, or the option a stratum being built sets at ``site``."""
    at = forced(site)
    if at is None:
        return index(draw, n)
    if not 0 <= at < n:
        raise ValueError(f"site {site!r} has {n} options, not {at + 1}")
    return at


def choose_at(draw: st.DrawFn, site: str, options: Sequence[T]) -> T:
    """:func:`choose`, or the option a stratum being built sets at ``site``."""
    return options[index_at(draw, site, len(options))]


def set_at(site: str, options: Sequence[T], drawn: T) -> T:
    """``drawn``, or the option a stratum being built sets at ``site`` (the draw is made
    either way, so a stratum changes no other draw)."""
    at = forced(site)
    return drawn if at is None else options[at]


__all__ = ["between", "choose", "choose_at", "forced", "forcing", "index", "index_at", "set_at"]
