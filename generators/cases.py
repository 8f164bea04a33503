"""Generated cases: stream bytes, the mutations applied, and the expected outcome.

The expected outcome is always the reference decoder's reading of the bytes,
never the generator's own guess; the test suite separately checks that each
mutation has the effect it intends (e.g. a bad body is rejected at exactly the
line it broke).

Example::

    from hypothesis import given
    from stella_conform.generators import cases

    @given(cases(max_mutations=2))
    def test_my_client_agrees_with_the_oracle(case):
        verdict = my_client.read(case.stream)
        assert verdict == case.expected.verdict
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.mutations import MUTATIONS, Stream, apply_mutations, canonical_order
from stella_conform.generators.runs import Run, runs
from stella_conform.oracle.corpus import expectation_from
from stella_conform.oracle.decoder import Decoded, RunSummary
from stella_conform.oracle.readings import careful_default
from stella_conform.schemas.vocabulary import Vocabulary

_ONE_IN_FOUR = st.integers(0, 3)

#: Rules an unmutated valid run exercises.
BASE_RULES = ("R1", "R2")


@dataclass(frozen=True)
class Case:
    """One generated input and what a correct client does with it."""

    stream: bytes
    mutations: tuple[str, ...]
    expected: RunSummary
    marks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    run: Run | None = field(default=None, compare=False, repr=False)
    #: The oracle's whole reading (line outcomes too), kept so a grader never decodes again.
    decoded: Decoded | None = field(default=None, compare=False, repr=False)
    #: The registered points (``stella_conform.oracle.readings``) the stream touches.
    touched: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def rules(self) -> list[str]:
        rules = list(BASE_RULES)
        for mutation_id in self.mutations:
            rules.append(MUTATIONS[mutation_id].rule)
        return list(dict.fromkeys(rules))

    def expectation(
        self, *, description: str = "", seed: int | None = None, vocab: Vocabulary | None = None
    ) -> dict[str, Any]:
        """The case as a fixture expectation (``NAME.expect.json``), naming every other
        conforming reading of its stream (``also_conforming``)."""
        from stella_conform.oracle.readings import also_conforming, read_stream

        return expectation_from(
            self.expected,
            rules=self.rules,
            description=description,
            mutations=self.mutations,
            seed=seed,
            also_conforming=also_conforming(read_stream(self.stream, vocab, decoded=self.reading)),
        )

    @property
    def reading(self) -> tuple[Decoded, frozenset[str]] | None:
        """The default reading and the points it touches, as ``read_stream`` takes them."""
        if self.decoded is None or self.touched is None:
            return None
        return self.decoded, self.touched

    def __repr__(self) -> str:  # shown by Hypothesis for a falsifying example
        muts = ", ".join(self.mutations) or "none"
        more = "..." if len(self.stream) > 300 else ""
        return (
            f"Case(mutations=[{muts}], verdict={self.expected.verdict}, "
            f"stream={self.stream[:300]!r}{more})"
        )


def build_case(run: Run, stream: Stream, ids: Sequence[str], vocab: Vocabulary) -> Case:
    data = stream.to_bytes()
    names = sorted({m for line in stream.lines for m in line.marks} | set(ids))
    marks = {m: tuple(stream.marked(m)) for m in names}
    # the careful decode, which also notes the registered points the stream touches: the
    # grader needs it for the other readings, and need not decode the case again
    decoded, touched = careful_default(data, vocab)
    return Case(data, tuple(ids), decoded.summary, marks, run, decoded, frozenset(touched))


def cases(
    vocab: Vocabulary | None = None,
    *,
    mutations: Sequence[str] | None = None,
    always: Sequence[str] = (),
    min_mutations: int = 0,
    max_mutations: int = 2,
    run_strategy: st.SearchStrategy[Run] | None = None,
) -> st.SearchStrategy[Case]:
    """Valid runs with up to ``max_mutations`` mutations drawn from ``mutations``
    (default: all), plus every mutation in ``always`` (public strategy)."""
    vocab = vocab or Vocabulary.default()
    # The pool keeps the caller's order: Hypothesis draws its first entries most often, so a
    # check lists its most telling mutation first. The chosen ones are applied in canonical
    # order all the same.
    pool = list(dict.fromkeys(mutations)) if mutations is not None else list(MUTATIONS)
    canonical_order(pool)  # unknown ids are an error
    fixed = canonical_order(list(always))
    run = run_strategy if run_strategy is not None else runs(vocab)
    # built once, not per case: a strategy costs more to build and validate than to draw
    chosen = (
        st.lists(
            st.sampled_from(pool),
            min_size=max(1, min_mutations),
            max_size=max_mutations,
            unique=True,
        )
        if pool and max_mutations
        else st.just([])
    )
    # With no minimum, a list of mutations came out empty in two cases of three, so a check
    # that grades valid runs and a pool of nine drew each mutation about once a run: a run
    # is left unmutated one case in four instead (and shrinks to it, the first choice).
    some = _ONE_IN_FOUR if pool and max_mutations and not min_mutations else None

    return _case(run, some, tuple(fixed), chosen, vocab)


@st.composite
def _case(
    draw: st.DrawFn,
    run: st.SearchStrategy[Run],
    some: st.SearchStrategy[int] | None,
    fixed: tuple[str, ...],
    chosen: st.SearchStrategy[list[str]],
    vocab: Vocabulary,
) -> Case:
    """One case of :func:`cases` (decorated once: ``st.composite`` reads the source of
    the function it wraps, which cost more than a case's draws when a check's strata
    built a strategy for each of their mutations)."""
    drawn = draw(run)
    mutate = some is None or draw(some) > 0
    ids = canonical_order([*fixed, *(draw(chosen) if mutate else ())])
    stream = apply_mutations(draw, Stream.of(drawn.events), ids, vocab)
    return build_case(drawn, stream, ids, vocab)


def mutated(*ids: str, vocab: Vocabulary | None = None) -> st.SearchStrategy[Case]:
    """Cases with exactly these mutations applied (public strategy)."""
    return cases(vocab, always=ids, max_mutations=0)


def valid_cases(vocab: Vocabulary | None = None) -> st.SearchStrategy[Case]:
    """Unmutated valid runs as cases (public strategy)."""
    return cases(vocab, max_mutations=0)
