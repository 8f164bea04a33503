"""A check's generated cases: its strategy (only its own mutations), its strata, and a
generated case as the grader sees it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.generators.cases import Case, cases
from stella_conform.generators.envelopes import EnvelopeCase, envelope_cases
from stella_conform.generators.journals import JournalCase, journal_cases
from stella_conform.generators.mutations import applicable
from stella_conform.generators.runs import Run
from stella_conform.generators.scenarios import ScenarioCase, scenario_cases
from stella_conform.generators.strata import Stratum
from stella_conform.schemas.vocabulary import Vocabulary

GeneratedCase = Case | EnvelopeCase | ScenarioCase | JournalCase


def check_strategy(
    check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
) -> SearchStrategy[GeneratedCase] | None:
    """The generated cases a check grades: only its own mutations (or valid runs).

    A stream case's run is generated, or one of ``recordings`` (real streams, whose
    events the mutations then change).  None when none of its mutations can be made
    with the types the client knows.
    """
    mutations = tuple(m for m in check.mutations if applicable(m, vocab))
    if check.input == "envelope":
        return envelope_cases(vocab, variants=check.mutations)
    if check.input == "scenario":
        return scenario_cases(vocab, kinds=check.mutations)
    if check.input == "journal":
        return journal_cases(variants=check.mutations)
    base = None
    if recordings:
        from stella_conform.conformance.store.recordings import recorded_or_generated, tolerant

        base = recorded_or_generated(vocab, recordings)
    if mutations and check.valid_runs:
        strategy = cases(vocab, mutations=mutations, max_mutations=2, run_strategy=base)
    elif mutations:
        strategy = cases(vocab, mutations=mutations, min_mutations=1, run_strategy=base)
    elif check.valid_runs:
        return cases(vocab, max_mutations=0, run_strategy=base)
    else:
        return None
    # a mutation that does not fit a recording's events skips that case, not the kit
    return tolerant(strategy) if base is not None else strategy


#: Runs of at least this many examples (the default) grade every check's strata too.
STRATA_FROM_EXAMPLES = 25


def check_stratum_list(check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
    """The strata a check grades in every run before its random ones (:mod:`strata`):
    the simplest case of each of its mutations (and of each option a mutation's strata
    list), so no rare option is graded on some seeds only.  Not drawn yet: each is drawn
    when graded, and dropped after."""
    from stella_conform.generators import strata

    if check.input == "envelope":
        return strata.envelope_stratum_list(vocab, check.mutations)
    if check.input == "journal":
        return strata.journal_stratum_list(check.mutations)
    if check.input != "stream":
        return iter(())
    return strata.stream_stratum_list(vocab, check.mutations)


def check_strata(check: Check, vocab: Vocabulary) -> list[GeneratedCase]:
    """The cases of :func:`check_stratum_list`, drawn (all at once: for tests and audits)."""
    found = (stratum.draw() for stratum in check_stratum_list(check, vocab))
    return [got.case for got in found if got is not None]


def not_drawable(check: Check, vocab: Vocabulary) -> str | None:
    """Why a check's generated cases cannot be made for this client (``None``: they can).

    Each mutation says whether it can be made with the types the client knows
    (:func:`~stella_conform.generators.mutations.applicable`); a check none of whose
    mutations can, and that grades no valid runs, has nothing to draw under the claims.
    """
    if check.input != "stream" or check_strategy(check, vocab) is not None:
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
    if isinstance(case, EnvelopeCase):
        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab,
            kind="envelope", command=case.command, reads=reads,
        )  # fmt: skip
    if isinstance(case, JournalCase):
        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab, kind="journal"
        )
    if isinstance(case, ScenarioCase):
        return GradedCase(
            "generated", case.stream, "generated", (case.kind,), vocab=vocab,
            kind="scenario", scenario=dict(case.scenario),
        )  # fmt: skip
    marked = sorted({n for m in case.mutations for n in case.marks.get(m, ())})
    recording = case.run.recording if case.run is not None else None
    return GradedCase(
        f"recording {recording}" if recording else "generated",
        case.stream, "generated", case.mutations, vocab=vocab,
        decoded=case.decoded, touched=case.touched, marked=tuple(marked),
    )  # fmt: skip
