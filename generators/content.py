"""Event content expanded from one drawn seed, so a case costs tens of draws, not hundreds.

A Hypothesis draw per field of every event would cost a run of thirty-odd events about
250 draws, each with the engine's bookkeeping (spans, the choice tree, the mutator's
scans): most of the CPU the kit spends per case, several times what the client spends
reading it.  What a check is about is the *plan* of
a run — how many turns and steps, which events each step writes — and the mutations;
the words of a text or the token count of a usage event only need to vary.

So a run draws its plan, and each step one seed; :class:`Content` expands the seed into
the texts, numbers and tool inputs of the step's events with a seeded
:class:`random.Random`.  Seed 0 expands to the simplest content (the first word, zeros,
the first model, an empty input), so a shrunk counterexample still shows the smallest
values; any other seed spreads over the same values the per-field draws did.  The same
seed always gives the same content, so a case still depends on its draws alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from stella_conform.generators.alphabets import PAYLOAD_TEXT

T = TypeVar("T")

#: One draw for all the content of a step (or an event drawn alone); 0 is the simplest.
SEEDS: st.SearchStrategy[int] = st.integers(0, 2**32 - 1)

_KEY_CHARS = "abcdefgh_"


class Content:
    """Content expanded from one seed (0: the simplest value of every kind).

    Integers and choices come from :meth:`_below`, the rejection sampling ``randint`` and
    ``choice`` do in CPython (``getrandbits`` of the bound's bit length, again while too
    big), without their three Python-level calls per number: the same values, a third of
    the cost, and spelled out here instead of left to ``random``'s internals.
    """

    __slots__ = ("_bits", "_rng")

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed) if seed else None
        if self._rng is not None:
            self._bits = self._rng.getrandbits

    def _below(self, n: int) -> int:
        """An integer in ``[0, n)`` (``random.Random._randbelow``; ``randint``'s error for
        an empty range)."""
        if n <= 0:
            raise ValueError(f"empty range for a count: {n} values")
        bits = self._bits
        k = n.bit_length()
        r = bits(k)
        while r >= n:
            r = bits(k)
        return r

    @property
    def simplest(self) -> bool:
        return self._rng is None

    def chance(self, p: float = 0.5) -> bool:
        """True with probability ``p`` (never for the simplest content)."""
        return self._rng is not None and self._rng.random() < p

    def count(self, lo: int, hi: int) -> int:
        """A count between ``lo`` and ``hi``, uniform (``lo`` for the simplest content)."""
        return lo if self._rng is None else lo + self._below(hi - lo + 1)

    def uint(self, hi: int) -> int:
        """An integer in ``[0, hi]``; like Hypothesis, its edges more often than chance."""
        if self._rng is None:
            return 0
        edge = self._rng.random()
        if edge < 0.1:
            return 0
        if edge < 0.15:
            return hi
        return self._below(hi + 1)

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options`` (the first for the simplest content)."""
        if self._rng is None:
            return options[0]
        if not len(options):
            raise IndexError("Cannot choose from an empty sequence")
        return options[self._below(len(options))]

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        """``k`` distinct options in their order (the first ``k`` for the simplest)."""
        if self._rng is None:
            return list(options[:k])
        chosen = sorted(self._rng.sample(range(len(options)), k))
        return [options[i] for i in chosen]

    def words(self, vocabulary: Sequence[str], lo: int, hi: int) -> str:
        """``lo`` to ``hi`` words joined by spaces."""
        return " ".join(self.pick(vocabulary) for _ in range(self.count(lo, hi)))

    def chars(self, alphabet: Sequence[str], lo: int, hi: int) -> str:
        return "".join(self.pick(alphabet) for _ in range(self.count(lo, hi)))

    def json(self, leaves: int = 6) -> Any:
        """Any JSON value of up to ``leaves`` leaves, strings from the payload alphabet (as
        ``schema_driven.ANY_JSON`` draws them; the simplest is ``None``)."""
        budget = [leaves]
        return self._json(budget, 0)

    def _json(self, budget: list[int], depth: int) -> Any:
        rng = self._rng
        if rng is None:
            return None
        if budget[0] > 1 and depth < 3 and rng.random() < 0.4:
            size = self._below(4)
            if rng.random() < 0.5:
                items = []
                for _ in range(size):
                    if budget[0] <= 0:
                        break
                    items.append(self._json(budget, depth + 1))
                return items
            out: dict[str, Any] = {}
            for _ in range(size):
                if budget[0] <= 0:
                    break
                out[self.chars(_KEY_CHARS, 1, 6)] = self._json(budget, depth + 1)
            return out
        budget[0] -= 1
        kind = self._below(4)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return self._below(2001) - 1000
        return self.chars(PAYLOAD_TEXT, 0, 8)


__all__ = ["SEEDS", "Content"]
