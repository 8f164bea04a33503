"""The stream kind: JSON lines a reader, dashboard or recorder reads (``stella run --output
json``), the kit's first input and the one a file of no other kind is read as."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import STREAM_LINES, TextForm

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from stella_conform.conformance.checks.model import Check
    from stella_conform.conformance.clients.runner import Feed
    from stella_conform.generators.runs import Run
    from stella_conform.generators.strata import Stratum
    from stella_conform.oracle.decoder import RunSummary
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class StreamKind(InputKind):
    name = "stream"
    suffix = ".jsonl"
    fallback = True
    in_process = True
    preflight = True
    reader_first = True
    line_outcomes = True
    expected_keys = ("verdict", "rejected_line", "unrecognized_events", "final_text", "terminator")
    text_form: ClassVar[TextForm | None] = STREAM_LINES
    recordings = True
    event_shapes = True
    cached = True

    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        from stella_conform.conformance.kinds.files import careful_reading, jsonl_fixture
        from stella_conform.oracle.corpus import TraceFixture

        fixture = jsonl_fixture(path)  # validates the expectation too
        if isinstance(fixture, TraceFixture):
            return None
        stream = fixture.stream if data is None else data
        # also_conforming is the oracle's to compute (tests/oracle/test_fixture_corpus.py
        # holds the file to it), so a fixture cannot widen what passes
        decoded, touched = careful_reading(stream, vocab)
        return GradedCase(
            fixture.name, stream, "fixture", vocab=vocab, kind=self.name, decoded=decoded,
            touched=touched,
        )  # fmt: skip

    def feed(self, case: GradedCase, check: Check) -> Feed:
        from stella_conform.conformance.clients.runner import LINES, Feed

        # a recorder's output is kept, to compare with the stream it was fed
        return Feed(record=True) if check.profile == "recorder" else LINES

    def paired(self, check: Check, case: GradedCase) -> bytes | None:
        from stella_conform.conformance.kinds.pairs import paired_stream

        return paired_stream(check, case)

    # ------------------------------------------------------------------ the oracle

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return case.expected.to_json()

    def expected_verdict(self, case: GradedCase) -> str:
        return case.expected.verdict

    def alternatives(self, case: GradedCase) -> tuple[Alternative, ...]:
        return case.readings.alternatives

    def also_conforming(self, case: GradedCase, keys: Sequence[str]) -> list[dict[str, Any]]:
        return [
            {"reading": a.reading, **{k: a.summary.to_json()[k] for k in keys}}
            for a in case.alternatives
        ]

    def summaries(self, case: GradedCase) -> list[RunSummary]:
        return [case.expected, *(a.summary for a in case.alternatives)]

    def default_touched(self, case: GradedCase) -> frozenset[str] | None:
        return case.readings.default.touched

    def rejected_line(self, case: GradedCase) -> int | None:
        return case.expected.rejected_line

    # ------------------------------------------------------------------ saving a failure

    def save(
        self,
        directory: Path,
        name: str,
        case: GradedCase,
        *,
        check: Check,
        description: str,
        seed: int | None,
    ) -> Path:
        from stella_conform.oracle.corpus import expectation_from, write_fixture
        from stella_conform.oracle.readings import also_conforming

        expect = expectation_from(
            case.expected,
            rules=[check.rule],
            mutations=case.mutations,
            description=description,
            seed=seed,
            also_conforming=also_conforming(case.readings),
        )
        write_fixture(directory, name, case.stream, expect)
        return directory / f"{name}{self.suffix}"

    # ------------------------------------------------------------------ generated cases

    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        """A stream case's run is generated, or one of ``recordings`` (real streams, whose
        events the mutations then change); only the check's own mutations (or valid runs)
        are applied.  ``None`` when none of its mutations can be made with the types the
        client knows."""
        from stella_conform.generators.cases import cases
        from stella_conform.generators.mutations import applicable

        mutations = tuple(m for m in check.mutations if applicable(m, vocab))
        base = None
        if recordings:
            from stella_conform.conformance.store.recordings import recorded_or_generated

            base = recorded_or_generated(vocab, recordings)
        if mutations and check.valid_runs:
            strategy = cases(vocab, mutations=mutations, max_mutations=2, run_strategy=base)
        elif mutations:
            strategy = cases(vocab, mutations=mutations, min_mutations=1, run_strategy=base)
        elif check.valid_runs:
            return cases(vocab, max_mutations=0, run_strategy=base)
        else:
            return None
        if base is None:
            return strategy
        from stella_conform.conformance.store.recordings import tolerant

        # a mutation that does not fit a recording's events skips that case, not the kit
        return tolerant(strategy)

    def stratum_list(self, check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
        from stella_conform.generators import strata

        return strata.stream_stratum_list(vocab, (*check.mutations, *check.strata))

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.cases import Case

        return isinstance(case, Case)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:

        marked = sorted({n for m in case.mutations for n in case.marks.get(m, ())})
        recording = case.run.recording if case.run is not None else None
        return GradedCase(
            f"recording {recording}" if recording else "generated",
            case.stream, "generated", case.mutations, vocab=vocab, kind=self.name,
            decoded=case.decoded, touched=case.touched, marked=tuple(marked),
        )  # fmt: skip

    # ------------------------------------------------------------------ the case cache
    # an entry keeps the lines the mutations marked and the registered points the careful
    # decode found (never a verdict: the plain pass reads the bytes again)

    def cache_fields(self, case: GradedCase) -> dict[str, Any]:
        touched = sorted(case.touched) if case.touched is not None else None
        return {"marked": list(case.marked), "touched": touched}

    def known_mutations(self, check: Check) -> Collection[str]:
        from stella_conform.generators.mutations import MUTATIONS

        return MUTATIONS  # a recording's case may carry any the kit knows

    def check_cache_fields(self, entry: Mapping[str, Any]) -> None:
        from stella_conform.oracle.readings import IDS

        marked = entry.get("marked")
        if not (isinstance(marked, list) and len(marked) <= 10_000):
            raise ValueError("a case's marked lines")
        if any(type(n) is not int or n < 1 for n in marked):
            raise ValueError("a case's marked lines")
        touched = entry.get("touched")
        if touched is None:
            return
        if not isinstance(touched, list) or not all(
            isinstance(p, str) and len(p) <= 200 for p in touched
        ):
            raise ValueError("a list of names")
        if any(p not in IDS for p in touched):
            raise ValueError("a reading the kit does not know")

    def from_cache(
        self,
        entry: Mapping[str, Any],
        data: bytes,
        vocab: Vocabulary,
        reads: frozenset[str] | None,
    ) -> GradedCase:
        from stella_conform.oracle.decoder import decode_all

        touched = entry["touched"]
        # the oracle's reading is the kit's own, from the bytes: the plain pass (the points
        # the careful pass found are what it would add)
        if touched is None:
            decoded, points = None, None
        else:
            decoded, points = decode_all(data, vocab), frozenset(touched)
        return GradedCase(
            entry["name"], data, "generated", tuple(entry["mutations"]), vocab=vocab,
            kind=self.name, decoded=decoded, touched=points, marked=tuple(entry["marked"]),
        )  # fmt: skip
