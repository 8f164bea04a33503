"""The fuzzer's inputs: a case drawn from a choice sequence, and what mutating the sequence
reads of it.

``stella-conform fuzz`` mutates choice sequences (``conformance/fuzz/mutators.py``): a
mutant is a prefix of choices that Hypothesis replays, drawing whatever no longer fits
afresh, so every mutant is a valid case of the check.  This is where those sequences meet
Hypothesis's engine data (``ConjectureData``): the draw from a prefix, the shape of each
choice (for a point mutation), the structure Hypothesis recorded (where the parts of a
case start, see :func:`parts`), and the value at an index of a choice's values.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from random import Random
from typing import Any

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import Frozen, HypothesisException, StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import ChoiceT, choice_from_index
from hypothesis.internal.conjecture.data import ConjectureData

#: Where the parts of a case's top-level structure start (the first part aside), and the
#: pieces (start, end) the later parts are made of.
Parts = tuple[tuple[int, ...], tuple[tuple[int, int], ...]]


def _fuzz_target() -> None:
    """Stands in for the test function Hypothesis expects behind a build context."""


class ChoiceDraw:
    """One case drawn from choices: the case, the choices that replay it, each choice's
    shape and the parts of the case's structure."""

    def __init__(self, data: ConjectureData, case: Any) -> None:
        self._data = data
        self.case = case

    @property
    def choices(self) -> tuple[ChoiceT, ...]:
        return self._data.choices

    def shapes(self) -> Iterator[tuple[str, Any]]:
        """Each choice's kind and constraints: what a point mutation may put in its place
        (see :func:`nth_choice`)."""
        for node in self._data.nodes:
            yield node.type, node.constraints

    def parts(self) -> Parts:
        """Where the parts of the case start, and their pieces (see :func:`parts`)."""
        return parts(self._data)


def draw_choices(
    strategy: st.SearchStrategy[Any], random: Random, prefix: Sequence[Any] | None
) -> ChoiceDraw | None:
    """A case of ``strategy`` drawn from ``prefix`` (None: afresh), the choices past it
    drawn from ``random``; None when the draw is rejected (a filter, an assumption, the
    size limit) or Hypothesis refuses it."""
    data = ConjectureData(random=random, prefix=prefix)
    try:
        with BuildContext(data, is_final=False, wrapped_test=_fuzz_target):
            case = data.draw(strategy)
    except (StopTest, UnsatisfiedAssumption, Frozen):
        return None
    except HypothesisException:
        return None
    data.freeze()
    return ChoiceDraw(data, case)


def nth_choice(index: int, kind: str, constraints: Any) -> Any:
    """The value at ``index`` among those a choice of this kind and these constraints can
    take, simplest first; raises when there is no such value."""
    return choice_from_index(index, kind, constraints)  # type: ignore[arg-type]


def parts(data: ConjectureData) -> Parts:
    """Where each part of the case's top-level structure starts (the first part aside),
    and the pieces the later parts are made of.

    The top level is the first span, from the outermost draw down, that splits into
    more than one part: for a generated stream, the valid run and then the list of
    mutations and what each draws.  Cutting at a part keeps the parts before it whole;
    a piece of a later part is one drawn item (one mutation of the list, say), which
    can be dropped on its own.
    """
    spans = data.spans
    if len(spans) == 0:
        return (), ()
    span = spans[0]
    while True:
        children = span.children
        if len(children) == 1 and children[0].choice_count == span.choice_count:
            span = children[0]
            continue
        break
    later = [c for c in children[1:] if 0 < c.start < len(data.choices)]
    pieces = tuple((g.start, g.end) for c in later for g in c.children if g.end > g.start)
    return tuple(sorted({c.start for c in later})), pieces


__all__ = ["ChoiceDraw", "Parts", "draw_choices", "nth_choice", "parts"]
