"""The journal kind: a trace journal (JSON lines of numbered entries) a trace reader reads."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import register
from stella_conform.generators.grammar import JOURNAL_LINES, TextForm
from stella_conform.oracle.corpus import EXPECT_SUFFIX, TRACE_EXPECT_FORMAT
from stella_conform.safe_files import make_dirs, write_atomic

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from stella_conform.conformance.checks.model import Check
    from stella_conform.generators.runs import Run
    from stella_conform.generators.strata import Stratum
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class JournalKind(InputKind):
    name = "journal"
    suffix = ".jsonl"  # as a stream's: the expectation beside it tells them apart
    fixture_folder = "trace"
    expected_keys = ("verdict", "rejected_line", "known_events", "unrecognized_events")
    text_form: ClassVar[TextForm | None] = JOURNAL_LINES
    cached = True

    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        from stella_conform.conformance.kinds.files import jsonl_fixture
        from stella_conform.oracle.corpus import TraceFixture

        fixture = jsonl_fixture(path)  # validates the expectation too
        if not isinstance(fixture, TraceFixture):
            return None
        journal = fixture.data if data is None else data
        return GradedCase(fixture.name, journal, "fixture", vocab=vocab, kind=self.name)

    # the journal is written whole, as one document: Feed("document"), the default

    # ------------------------------------------------------------------ the oracle

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return case.journal.summary()

    def expected_verdict(self, case: GradedCase) -> str:
        return case.journal.verdict

    def rejected_line(self, case: GradedCase) -> int | None:
        return case.journal.rejected_line

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
        return write_trace_fixture(directory, name, case.stream, description)

    # ------------------------------------------------------------------ generated cases

    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        from stella_conform.generators.journals import journal_cases

        return journal_cases(variants=check.mutations)

    def stratum_list(self, check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
        from stella_conform.generators import strata

        return strata.journal_stratum_list((*check.mutations, *check.strata))

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.journals import JournalCase

        return isinstance(case, JournalCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:

        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab, kind=self.name
        )

    # ------------------------------------------------------------------ the case cache

    def from_cache(
        self,
        entry: Mapping[str, Any],
        data: bytes,
        vocab: Vocabulary,
        reads: frozenset[str] | None,
    ) -> GradedCase:
        return GradedCase(
            entry["name"], data, "generated", tuple(entry["mutations"]), vocab=vocab,
            kind=self.name,
        )  # fmt: skip


def write_trace_fixture(directory: Path, name: str, data: bytes, description: str) -> Path:
    """A journal and the reference reader's reading of it (checks too, when readable): the
    trace fixture format, written by the journal kind because its expectation holds the
    trace checks' outcomes, which the oracle below the checks cannot compute."""
    from stella_conform.conformance.checks.trace import grade_journal  # (checks import kinds)

    make_dirs(directory)  # below a pinned folder: no link followed on the way
    path = directory / f"{name}.jsonl"
    write_atomic(path, data)
    report = grade_journal(data)
    expect: dict[str, Any] = {
        "format": TRACE_EXPECT_FORMAT,
        "description": description,
        **{k: report.reading[k] for k in ("verdict", "rejected_line", "torn_final_line")},
        "known_events": report.reading["known_events"],
        "unrecognized_events": report.reading["unrecognized_events"],
    }
    if report.readable:
        expect["crashed"] = report.crashed
        expect["checks"] = {r.id: r.outcome for r in report.results}
    text = json.dumps(expect, indent=2, ensure_ascii=False) + "\n"
    write_atomic(directory / f"{name}{EXPECT_SUFFIX}", text)
    return path
