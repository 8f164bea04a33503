"""The stream kind: JSON lines a reader, dashboard or recorder reads (``stella run --output
json``), the kit's first and default input."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import STREAM_LINES, TextForm

if TYPE_CHECKING:
    from stella_conform.conformance.checks.case import GradedCase
    from stella_conform.conformance.checks.model import Check
    from stella_conform.oracle.decoder import RunSummary
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class StreamKind(InputKind):
    name = "stream"
    text_form: ClassVar[TextForm | None] = STREAM_LINES
    cached = True
    reader_first = True
    line_outcomes = True

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.cases import Case

        return isinstance(case, Case)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        from stella_conform.conformance.checks.case import GradedCase

        marked = sorted({n for m in case.mutations for n in case.marks.get(m, ())})
        recording = case.run.recording if case.run is not None else None
        return GradedCase(
            f"recording {recording}" if recording else "generated",
            case.stream, "generated", case.mutations, vocab=vocab, kind=self.name,
            decoded=case.decoded, touched=case.touched, marked=tuple(marked),
        )  # fmt: skip

    expected_keys = ("verdict", "rejected_line", "unrecognized_events", "final_text", "terminator")

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

    # the case cache keeps the lines the mutations marked and the registered points the
    # careful decode found (never a verdict: the plain pass reads the bytes again)

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
        from stella_conform.conformance.checks.case import GradedCase
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
