"""The scenario kind: what a fake ``stella`` plays to a wrapper (a stream, and how the run
ends), graded by what the wrapper makes of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register

if TYPE_CHECKING:
    from stella_conform.conformance.checks.case import GradedCase
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class ScenarioKind(InputKind):
    # a scenario drives the fake stella, so its cases are generated every run (not cached),
    # and the grammar audit does not scan them: the stream it plays is a stream's
    name = "scenario"

    expected_keys = ("verdict", "outcome", "reason")

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return dict(case.wrapper)

    def expected_verdict(self, case: GradedCase) -> str:
        return str(case.wrapper["verdict"])

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.scenarios import ScenarioCase

        return isinstance(case, ScenarioCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        from stella_conform.conformance.checks.case import GradedCase

        return GradedCase(
            "generated", case.stream, "generated", (case.kind,), vocab=vocab,
            kind=self.name, scenario=dict(case.scenario),
        )  # fmt: skip
