"""Strata: the cases a check grades in every run, besides the ones Hypothesis draws at random.

A check draws its 25 examples from a pool of mutations, and a mutation draws among its own
options (which corrupt line, which ts edge, which Unicode hazard).  An option one case in
fifty holds is reached on some seeds of a default run and not on others, so a client whose
bug only that option shows passes some runs: the grammar audit (``docs/generators.md``)
measured 27 of its cells reached on only some of 20 seeds.  Weighting the rare options up
moves draws away from the others (it cost broken-client catches when tried), so instead
each check also grades, in every run, its *strata*: for each of its mutations the simplest
case with that mutation applied, and for a mutation listed in :data:`STRATA` one such case
per entry, each with the named choice sites
(:func:`~stella_conform.generators.engine.picks.choose_at`)
set to one option.

The strata are graded before the check's random examples, in every run, one at a time
(:class:`Stratum` is drawn when graded).  They take no draw from the random examples
after them, which stay exactly what the seed draws without them: the random search, its
example database and its shrinking are untouched.  A stratum is made by a Hypothesis
draw of the generators themselves (the first example Hypothesis tries, all of whose
choices are the simplest), so its expected outcome is the reference decoder's, as for
any case; the sites it sets are recorded choices too, so its choice sequence replays it
(under :meth:`Stratum.shrinking`) and a failing stratum is shrunk by Hypothesis like any
generated failure (``conformance.suite.properties.shrink_drawn``).

    >>> from stella_conform.schemas.vocabulary import Vocabulary
    >>> [case.mutations for case in stream_strata(Vocabulary.default(), ("crlf",))]
    [('crlf',), ('crlf',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st

from stella_conform.generators.cases import Case, cases
from stella_conform.generators.edges import EDGE_STRATA, ENVELOPE_EDGE_STRATA
from stella_conform.generators.engine.draw import Drawn, drawn, drawn_in, simplest
from stella_conform.generators.engine.picks import forcing
from stella_conform.generators.hazards import CHUNK_BOUNDARIES, UNICODE_EDGE_KINDS
from stella_conform.generators.mutations import (
    CORRUPT_FAMILIES,
    TORN_KINDS,
    TS_EDGES,
    TS_OUT_OF_RANGE,
    applicable,
)
from stella_conform.generators.seams import SEAM_STRATA
from stella_conform.generators.text import BIG_NUMBERS
from stella_conform.schemas.vocabulary import Vocabulary

T = TypeVar("T")

_CHUNK_EDGE = UNICODE_EDGE_KINDS.index("chunk-edge")
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
    # each kind, and a character across each read-buffer size, not only the first (4 KiB)
    "unicode-edges": (
        *({"unicode-edges": k} for k in range(1, len(UNICODE_EDGE_KINDS))),
        *(
            {"unicode-edges": _CHUNK_EDGE, "chunk-boundary": k}
            for k in range(1, len(CHUNK_BOUNDARIES))
        ),
    ),
    "crlf": ({"crlf-lines": 2},),  # CRLF on some lines of an LF stream
    "blank-lines": ({"blank-around": 1},),  # before the first line and after the last
    "torn-tail": tuple({"torn-kind": k} for k in range(1, len(TORN_KINDS))),
    # one spelling kind each (what a failing stratum shrinks from is small): JSON's
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
    # every edge cell of generators/edges.py, and every group of host-language names
    **EDGE_STRATA,
    # every seam of generators/seams.py: each trimmed-away character, each content a
    # cut-off run ends on, previews replaced or left
    **SEAM_STRATA,
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
    # the envelope's cells of generators/edges.py, in its events
    **ENVELOPE_EDGE_STRATA,
}  # fmt: skip


@dataclass(frozen=True)
class Stratum:
    """One stratum, not drawn yet: the strategy of its mutation (or variant) and the
    sites it sets.  Drawn when graded and dropped after (a megabyte line's stratum is
    not held while the check's other cases are graded)."""

    strategy: st.SearchStrategy[Any]
    sites: Mapping[str, int]

    def draw(self) -> Drawn | None:
        """The stratum and its choice sequence (``None``: its simplest case is rejected)."""
        with forcing(self.sites):
            return drawn(self.strategy)

    def shrinking(self) -> AbstractContextManager[None]:
        """The context its choices replay in (and Hypothesis shrinks them in): every site
        a choice read back, none set."""
        return forcing({})


def _sites(mutation: str) -> tuple[Mapping[str, int], ...]:
    return ({}, *STRATA.get(mutation, ()))


def stream_stratum_list(vocab: Vocabulary, mutations: Sequence[str]) -> Iterator[Stratum]:
    """The strata of a stream check with these mutations, not drawn yet."""
    for mutation in mutations:
        if not applicable(mutation, vocab):
            continue
        strategy = cases(vocab, always=(mutation,), max_mutations=0)
        for sites in _sites(mutation):
            yield Stratum(strategy, sites)


def envelope_stratum_list(vocab: Vocabulary, variants: Sequence[str]) -> Iterator[Stratum]:
    """The strata of an envelope check: each variant's simplest document, and more."""
    from stella_conform.generators.envelopes import envelope_cases

    for variant in variants:
        strategy = envelope_cases(vocab, variants=(variant,))
        for sites in ({}, *ENVELOPE_STRATA.get(variant, ())):
            yield Stratum(strategy, sites)


def journal_stratum_list(variants: Sequence[str]) -> Iterator[Stratum]:
    """The strata of a journal check: each variant's simplest journal, and more."""
    from stella_conform.generators.journal_edges import JOURNAL_STRATA
    from stella_conform.generators.journals import journal_cases

    for variant in variants:
        for sites in ({}, *JOURNAL_STRATA.get(variant, ())):
            yield Stratum(journal_cases(variants=(variant,)), sites)


def _cases(strata: Iterable[Stratum]) -> list[Any]:
    found = (stratum.draw() for stratum in strata)
    return [got.case for got in found if got is not None]


def stream_strata(vocab: Vocabulary, mutations: Sequence[str]) -> list[Case]:
    """The stream cases every run grades for a check with these mutations."""
    return _cases(stream_stratum_list(vocab, mutations))


def envelope_strata(vocab: Vocabulary, variants: Sequence[str]) -> list[Any]:
    """The envelope cases every run grades: the simplest of each variant."""
    return _cases(envelope_stratum_list(vocab, variants))


def journal_strata(variants: Sequence[str]) -> list[Any]:
    """The journal cases every run grades: the simplest of each variant."""
    return _cases(journal_stratum_list(variants))


__all__ = [
    "ENVELOPE_STRATA",
    "STRATA",
    "Drawn",
    "Stratum",
    "drawn",
    "drawn_in",
    "envelope_strata",
    "envelope_stratum_list",
    "journal_strata",
    "journal_stratum_list",
    "simplest",
    "stream_strata",
    "stream_stratum_list",
]
