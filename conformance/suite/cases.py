"""A check's generated cases: its strategy (only its own mutations), its strata, and a
generated case as the grader sees it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.kinds import KINDS
from stella_conform.generators.cases import Case
from stella_conform.generators.envelopes import EnvelopeCase
from stella_conform.generators.journals import JournalCase
from stella_conform.generators.runs import Run
from stella_conform.generators.scenarios import ScenarioCase
from stella_conform.generators.strata import Stratum
from stella_conform.schemas.vocabulary import Vocabulary

GeneratedCase = Case | EnvelopeCase | ScenarioCase | JournalCase


def check_strategy(
    check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
) -> SearchStrategy[GeneratedCase] | None:
    """The generated cases a check grades: only its own mutations (or valid runs), drawn
    as its input kind draws them.

    A stream case's run is generated, or one of ``recordings`` (real streams, whose
    events the mutations then change).  None when none of its mutations can be made
    with the types the client knows.
    """
    return check.kind.strategy(check, vocab, recordings)


#: Runs of at least this many examples (the default) grade every check's strata too.
STRATA_FROM_EXAMPLES = 25


def check_stratum_list(check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
    """The strata a check grades in every run before its random ones
    (:mod:`~stella_conform.generators.strata`): the simplest case of each of its mutations
    (and of each option a mutation's strata list), so no rare option is graded on some seeds
    only.  Not drawn yet: each is drawn when graded, and dropped after."""
    return check.kind.stratum_list(check, vocab)


def check_strata(check: Check, vocab: Vocabulary) -> list[GeneratedCase]:
    """The cases of :func:`check_stratum_list`, drawn (all at once: for tests and audits)."""
    found = (stratum.draw() for stratum in check_stratum_list(check, vocab))
    return [got.case for got in found if got is not None]


def not_drawable(check: Check, vocab: Vocabulary) -> str | None:
    """Why a check's generated cases cannot be made for this client (``None``: they can).

    Each mutation says whether it can be made with the types the client knows
    (:func:`~stella_conform.generators.mutations.applicable`); a check none of whose
    mutations can, and that grades no valid runs, has nothing to draw under the claims
    (a kind that draws no such mutations always has cases to draw).
    """
    if check_strategy(check, vocab) is not None:
        return None
    if not check.mutations:
        return None
    return (
        "no case of this check can be made with the types the client knows "
        f"({', '.join(sorted(vocab.known)) or 'none'}): its mutations "
        f"({', '.join(check.mutations)}) each need another"
    )


def graded_case(
    case: GeneratedCase, vocab: Vocabulary, reads: frozenset[str] | None = None
) -> GradedCase:
    """A generated case as the grader sees it (``reads``: the envelope parts claimed)."""
    return KINDS.of_generated(case).graded(case, vocab, reads)
