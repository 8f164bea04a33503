"""Composable mutations of a valid run, each with a stable id and the rule it targets.

A mutation works on a :class:`Stream` — a list of lines that are either
objects still to be serialized or literal bytes — and marks the lines it
touched, so a test can ask "did the decoder reject exactly the line the
mutation broke?".  Object-level mutations run before byte-level ones
(CRLF, the missing final newline, the torn tail), in the order of
:data:`MUTATIONS`, so applying a set of mutations is deterministic.

Mutations never decide the expected outcome: the reference decoder does
(:mod:`cases`).  What each one *intends* is in its description and is
asserted by the test suite.

The package's modules: :mod:`.stream` (the stream and the :class:`Mutation` model), one
module per family of rules targeted (:mod:`.unknown_types`, :mod:`.fields`,
:mod:`.stamps`, :mod:`.bodies`, :mod:`.json_text`, :mod:`.framing`), and :mod:`.registry`
(every mutation in application order, with the content hazards of
:mod:`stella_conform.generators.hazards` and :mod:`stella_conform.generators.text`).

Example::

    from hypothesis import given
    from stella_conform.generators import cases

    @given(cases(mutations=["torn-tail", "unknown-type"]))
    def test_survives(case):
        ...
"""

from __future__ import annotations

from stella_conform.generators.mutations.bodies import WRONG_VALUES
from stella_conform.generators.mutations.framing import TORN_KINDS, UNICODE_SPACES
from stella_conform.generators.mutations.json_text import CORRUPT_FAMILIES, CORRUPT_LINES
from stella_conform.generators.mutations.registry import (
    MUTATIONS,
    ORDER,
    REJECTING,
    applicable,
    apply_mutations,
    canonical_order,
)
from stella_conform.generators.mutations.stamps import TS_EDGES, TS_OUT_OF_RANGE
from stella_conform.generators.mutations.stream import Apply, Line, Mutation, Stream, json_copy
from stella_conform.generators.mutations.unknown_types import NEAR_MISS, TEMPTING_NAMES

__all__ = [
    "CORRUPT_FAMILIES",
    "CORRUPT_LINES",
    "MUTATIONS",
    "NEAR_MISS",
    "ORDER",
    "REJECTING",
    "TEMPTING_NAMES",
    "TORN_KINDS",
    "TS_EDGES",
    "TS_OUT_OF_RANGE",
    "UNICODE_SPACES",
    "WRONG_VALUES",
    "Apply",
    "Line",
    "Mutation",
    "Stream",
    "applicable",
    "apply_mutations",
    "canonical_order",
    "json_copy",
]
