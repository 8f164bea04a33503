"""The envelope kind: one JSON document a reader of ``stella run --output-format json`` (or
another command's envelope) reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import ENVELOPE_DOCUMENT, TextForm

if TYPE_CHECKING:
    from stella_conform.conformance.checks.case import GradedCase
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class EnvelopeKind(InputKind):
    name = "envelope"
    text_form: ClassVar[TextForm | None] = ENVELOPE_DOCUMENT
    cached = True
    reads_parts = True
    #: The oracle's notes on a document: why it rejects it (a wrapper's ``reason`` is
    #: another thing), which shape it is.
    oracle_notes = frozenset({"reason", "shape"})

    expected_keys = (
        "verdict", "reason", "shape", "status", "files_touched", "rows",
        "cost_usd", "input_tokens", "output_tokens",
    )  # fmt: skip

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return case.envelope.to_json()

    def expected_verdict(self, case: GradedCase) -> str:
        return case.envelope.verdict

    def alternatives(self, case: GradedCase) -> tuple[Alternative, ...]:
        return case.envelope_alternatives

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.envelopes import EnvelopeCase

        return isinstance(case, EnvelopeCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        from stella_conform.conformance.checks.case import GradedCase

        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab,
            kind=self.name, command=case.command, reads=reads,
        )  # fmt: skip

    # the case cache keeps the command that printed the document

    def cache_fields(self, case: GradedCase) -> dict[str, Any]:
        return {"command": case.command}

    def check_cache_fields(self, entry: Mapping[str, Any]) -> None:
        command = entry.get("command")
        if not (isinstance(command, str) and len(command) <= 1000):
            raise ValueError("an envelope case's command")

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
            kind=self.name, command=entry["command"], reads=reads,
        )  # fmt: skip
