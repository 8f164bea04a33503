"""Strata: the cases a check grades in every run, besides the ones Hypothesis draws at random.

A check draws its 25 examples from a pool of mutations, and a mutation draws among its own
options (which corrupt line, which ts edge, which Unicode hazard).  An option one case in
fifty holds is reached on some seeds of a default run and not on others, so a client whose
bug only that option shows passes some runs: the grammar audit (``docs/generators.md``)
measured 27 of its cells reached on only some of 20 seeds.  Weighting the rare options up
moves draws away from the others (it cost broken-client catches when tried), so instead
each check also grades, in every run, its *strata*: for each of its mutations the simplest
case with that mutation applied, and for a mutation listed in :data:`STRATA` one such case
per entry, each with the named choice sites (:func:`~stella_conform.generators.picks.choose_at`)
set to one option.

The strata are Hypothesis explicit examples (``@example``) of the check's property: run
first, in every run, never shrunk (each is already the simplest case of its stratum).
They take no draw from the random examples after them, which stay exactly what the seed
draws without them: the random search, its example database and its shrinking are
untouched.  A stratum is made by a Hypothesis draw of the generators themselves (the
first example Hypothesis tries, all of whose choices are the simplest), so its expected
outcome is the reference decoder's, as for any case.

    >>> from stella_conform.schemas.vocabulary import Vocabulary
    >>> [case.mutations for case in stream_strata(Vocabulary.default(), ("crlf",))]
    [('crlf',), ('crlf',)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import ChoiceTemplate
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.entropy import deterministic_PRNG

from stella_conform.generators.cases import Case, cases
from stella_conform.generators.hazards import UNICODE_EDGE_KINDS
from stella_conform.generators.mutations import (
    CORRUPT_FAMILIES,
    TORN_KINDS,
    TS_EDGES,
    TS_OUT_OF_RANGE,
    applicable,
)
from stella_conform.generators.picks import forcing
from stella_conform.generators.text import BIG_NUMBERS
from stella_conform.schemas.vocabulary import Vocabulary

T = TypeVar("T")

_RAW_CONTROL = next(i for i, f in enumerate(CORRUPT_FAMILIES) if b'"a\tb"' in f[0])

#: Per mutation, the strata besides its simplest case: each sets choice sites to options.
#: A mutation not listed has one stratum, its simplest case (the first option everywhere).
STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    # every family of corrupt line, and every raw control character (the bounds: \x1f
    # that jq 1.6 takes, \x00 that a shell's `read` drops)
    "non-json-line": (
        *({"corrupt-family": k} for k in range(1, len(CORRUPT_FAMILIES))),
        *(
            {"corrupt-family": _RAW_CONTROL, "corrupt-line": k}
            for k in range(1, len(CORRUPT_FAMILIES[_RAW_CONTROL]))
        ),
    ),
    "ts-out-of-range": tuple({"ts-out-of-range": k} for k in range(1, len(TS_OUT_OF_RANGE))),
    "ts-extreme": tuple({"ts-edge": k} for k in range(1, len(TS_EDGES))),
    "unknown-big-numbers": tuple({"big-number": k} for k in range(1, len(BIG_NUMBERS))),
    "unicode-edges": tuple({"unicode-edges": k} for k in range(1, len(UNICODE_EDGE_KINDS))),
    "crlf": ({"crlf-lines": 2},),  # CRLF on some lines of an LF stream
    "blank-lines": ({"blank-around": 1},),  # before the first line and after the last
    "torn-tail": tuple({"torn-kind": k} for k in range(1, len(TORN_KINDS))),
    # one spelling kind each (a failing stratum is shown whole, never shrunk): JSON's
    # whitespace in every place it may stand and another key order; a text of each kind
    # of character JSON escapes, as is, escaped to ASCII, with upper-case hex, with \/;
    # ASCII spelled as \u escapes; numbers spelled two more ways (the simplest: -0.0)
    "json-spellings": (
        {"colon": 3, "comma": 2, "inner": 2, "lead": 1, "trail": 3, "key-order": 2},
        {"hard-text": 1},
        {"hard-text": 2},
        {"hard-text": 2, "ascii-only": 1},
        {"hard-text": 2, "string-style": 3},
        {"hard-text": 3, "string-style": 2},
        {"string-style": 1},
        {"number-spelling": 2},
        {"number-spelling": 3},
    ),
}  # fmt: skip

#: Per envelope variant, the strata besides its simplest document.
ENVELOPE_STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    # spelled every way a document may be, one kind each: pretty-printed; JSON's
    # whitespace in every place and other key orders; an unknown key's text of each kind
    # of character, escaped with upper-case hex, with \/; ASCII as \u escapes; costs
    # spelled two more ways
    "extra-keys": (
        {"envelope-layout": 1},
        {
            "envelope-layout": 2, "key-order": 1, "colon": 3, "comma": 2, "lead": 2,
            "trail": 4,
        },
        {"envelope-layout": 2, "key-order": 2, "inner": 4},
        {"hard-text": 1, "envelope-layout": 2},
        {"hard-text": 2},
        {"hard-text": 2, "envelope-layout": 2, "string-style": 3},
        {"hard-text": 3, "envelope-layout": 2, "string-style": 2},
        {"envelope-layout": 2, "string-style": 1},
        {"envelope-layout": 2, "respell-numbers": 1, "number-spelling": 2},
        {"envelope-layout": 2, "respell-numbers": 1, "number-spelling": 3},
    ),
}  # fmt: skip


def simplest(strategy: st.SearchStrategy[T]) -> T | None:
    """The first example Hypothesis tries for ``strategy``: every choice its simplest.

    Repeatable (no randomness reaches it); ``None`` if that example is rejected.  Drawn as
    Hypothesis's engine draws it (a ``ConjectureData`` whose every choice comes from the
    ``simplest`` template), without a ``@given`` run around each: a run draws about 120
    strata, and the engine's set-up was about 4 ms of each (half a second a cold run).
    ``tests/test_strata.py`` holds it to the first example of a ``@given`` run.
    """
    data = ConjectureData(
        prefix=(ChoiceTemplate("simplest", count=None),), random=Random(0), max_choices=None
    )
    with deterministic_PRNG(), BuildContext(data, is_final=False, wrapped_test=simplest):
        try:
            return data.draw(strategy)
        except (StopTest, UnsatisfiedAssumption):
            return None  # rejected (a filter, an assumption) or over the size limit


def _sites(mutation: str) -> tuple[Mapping[str, int], ...]:
    return ({}, *STRATA.get(mutation, ()))


def stream_strata(vocab: Vocabulary, mutations: Sequence[str]) -> list[Case]:
    """The stream cases every run grades for a check with these mutations."""
    out: list[Case] = []
    for mutation in mutations:
        if not applicable(mutation, vocab):
            continue
        strategy = cases(vocab, always=(mutation,), max_mutations=0)
        for sites in _sites(mutation):
            with forcing(sites):
                case = simplest(strategy)
            if case is not None:
                out.append(case)
    return out


def envelope_strata(vocab: Vocabulary, variants: Sequence[str]) -> list[Any]:
    """The envelope cases every run grades: the simplest of each variant."""
    from stella_conform.generators.envelopes import envelope_cases

    out = []
    for variant in variants:
        strategy = envelope_cases(vocab, variants=(variant,))
        for sites in ({}, *ENVELOPE_STRATA.get(variant, ())):
            with forcing(sites):
                case = simplest(strategy)
            if case is not None:
                out.append(case)
    return out


def journal_strata(variants: Sequence[str]) -> list[Any]:
    """The journal cases every run grades: the simplest of each variant."""
    from stella_conform.generators.journals import journal_cases

    found = (simplest(journal_cases(variants=(v,))) for v in variants)
    return [case for case in found if case is not None]


__all__ = [
    "ENVELOPE_STRATA",
    "STRATA",
    "envelope_strata",
    "journal_strata",
    "simplest",
    "stream_strata",
]
