"""How a corpus input becomes the next case: mutations of its choice sequence.

Inputs are Hypothesis choice sequences.  A mutant is a *prefix* of choices that
Hypothesis replays, drawing whatever no longer fits afresh, so every mutant is a valid
case of the check.  Mutations follow the case's structure where Hypothesis recorded it
(keep the valid run and draw its mutations afresh, drop one of them) or work blindly
(cut and regenerate the tail, change one choice, splice two inputs, repeat or drop a run
of choices), as HypoFuzz's do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from stella_conform.conformance.fuzz.corpus import Choices, Entry
from stella_conform.generators.engine.choices import nth_choice


def mutate(rnd: random.Random, entry: Entry, corpus: Sequence[Entry]) -> Choices | None:
    """A prefix of choices made from ``entry`` (``corpus``: the inputs a splice may take
    its tail from), or None when the input has no choices to mutate."""
    choices = entry.choices
    n = len(choices)
    if n == 0:
        return None
    i = rnd.randrange(n)
    op = rnd.randrange(8)
    if op <= 1 and entry.parts:
        # keep the first part of the case (for a stream: the valid run) and draw the
        # later ones (its mutations, where they apply) afresh; or keep more parts
        return choices[: entry.parts[0] if op == 0 else rnd.choice(entry.parts)]
    if op == 7 and entry.pieces:
        # drop one piece of a later part (one of two mutations, say), keep the rest
        start, end = rnd.choice(entry.pieces)
        return (*choices[:start], *choices[end:])
    if op <= 2:  # keep a prefix, regenerate the rest
        return choices[:i]
    if op == 3:  # change one choice
        kind, constraints = entry.shapes[i]
        try:
            index = rnd.randrange(1 << rnd.randrange(1, 12))
            value = nth_choice(index, kind, constraints)
        except Exception:  # out of range for this choice: regenerate instead
            return choices[:i]
        return (*choices[:i], value, *choices[i + 1 :])
    if op == 4 and len(corpus) > 1:  # splice with another input
        other = rnd.choice(corpus).choices
        j = rnd.randrange(len(other)) if other else 0
        return (*choices[:i], *other[j:])
    j = min(n, i + 1 + rnd.randrange(min(64, n - i)))
    if op == 5:  # repeat a run of choices (another event, another step)
        return (*choices[:j], *choices[i:j], *choices[j:])
    return (*choices[:i], *choices[j:])  # drop a run of choices
