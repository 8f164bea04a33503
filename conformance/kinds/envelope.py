"""The envelope kind: one JSON document a reader of ``stella run --output-format json`` (or
another command's envelope) reads, told which command printed it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import ENVELOPE_DOCUMENT, TextForm

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from stella_conform.conformance.checks.model import Check
    from stella_conform.conformance.clients.runner import Feed
    from stella_conform.generators.runs import Run
    from stella_conform.generators.strata import Stratum
    from stella_conform.oracle.readings import Alternative
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class EnvelopeKind(InputKind):
    name = "envelope"
    suffix = ".json"
    fixture_folder = "envelopes"
    noun = "document"
    reads_parts = True
    expected_keys = (
        "verdict", "reason", "shape", "status", "files_touched", "rows",
        "cost_usd", "input_tokens", "output_tokens",
    )  # fmt: skip
    #: The oracle's notes on a document: why it rejects it (a wrapper's ``reason`` is
    #: another thing), which shape it is.
    oracle_notes = frozenset({"reason", "shape"})
    text_form: ClassVar[TextForm | None] = ENVELOPE_DOCUMENT
    cached = True

    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        from stella_conform.oracle.corpus import read_envelope_fixture

        envelope = read_envelope_fixture(path)
        return GradedCase(
            envelope.name, envelope.data if data is None else data, "fixture", vocab=vocab,
            kind=self.name, command=envelope.command,
        )  # fmt: skip

    def feed(self, case: GradedCase, check: Check) -> Feed:
        from stella_conform.conformance.clients.protocol import COMMAND_ENV
        from stella_conform.conformance.clients.runner import Feed

        return Feed("document", {COMMAND_ENV: case.command})

    def parts(self, case: GradedCase) -> frozenset[str] | None:
        from stella_conform.oracle.envelope import envelope_parts

        return envelope_parts(case.stream, case.command)

    # ------------------------------------------------------------------ the oracle

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return case.envelope.to_json()

    def expected_verdict(self, case: GradedCase) -> str:
        return case.envelope.verdict

    def alternatives(self, case: GradedCase) -> tuple[Alternative, ...]:
        return case.envelope_alternatives

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
        from stella_conform.oracle.corpus import write_envelope_fixture

        reading = case.envelope.to_json()
        expect = {"description": description, "command": case.command, **reading}
        return write_envelope_fixture(directory, name, case.stream, expect)

    # ------------------------------------------------------------------ generated cases

    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        from stella_conform.generators.envelopes import envelope_cases

        return envelope_cases(vocab, variants=check.mutations)

    def stratum_list(self, check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
        from stella_conform.generators import strata

        return strata.envelope_stratum_list(vocab, (*check.mutations, *check.strata))

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.envelopes import EnvelopeCase

        return isinstance(case, EnvelopeCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab,
            kind=self.name, command=case.command, reads=reads,
        )  # fmt: skip

    # ------------------------------------------------------------------ the case cache
    # an entry keeps the command that printed the document

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
        return GradedCase(
            entry["name"], data, "generated", tuple(entry["mutations"]), vocab=vocab,
            kind=self.name, command=entry["command"], reads=reads,
        )  # fmt: skip
