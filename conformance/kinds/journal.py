"""The journal kind: a trace journal (JSON lines of numbered entries) a trace reader reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import JOURNAL_LINES, TextForm

if TYPE_CHECKING:
    from stella_conform.conformance.checks.case import GradedCase
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class JournalKind(InputKind):
    name = "journal"
    text_form: ClassVar[TextForm | None] = JOURNAL_LINES
    cached = True

    expected_keys = ("verdict", "rejected_line", "known_events", "unrecognized_events")

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return case.journal.summary()

    def expected_verdict(self, case: GradedCase) -> str:
        return case.journal.verdict

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.journals import JournalCase

        return isinstance(case, JournalCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        from stella_conform.conformance.checks.case import GradedCase

        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab, kind=self.name
        )

    def rejected_line(self, case: GradedCase) -> int | None:
        return case.journal.rejected_line

    def from_cache(
        self,
        entry: Mapping[str, Any],
        data: bytes,
        vocab: Vocabulary,
        reads: frozenset[str] | None,
    ) -> GradedCase:
        from stella_conform.conformance.checks.case import GradedCase

        return GradedCase(
            entry["name"], data, "generated", tuple(entry["mutations"]), vocab=vocab,
            kind=self.name,
        )  # fmt: skip
