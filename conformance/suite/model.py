"""A check's result as a report lists it: the check's outcome and its failing cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stella_conform.conformance.report.excerpt import digested_values

#: The failing cases a check keeps in full (every fixture of the largest check, and more);
#: more are counted, not kept.
FAILURES_KEPT = 20

#: Told each case's verdict as the client's run of it is judged (the grading session's
#: :class:`~stella_conform.conformance.report.events.CaseGraded`).
OnCase = Callable[[str], None]


@dataclass
class CaseFailure:
    """One failing case, as reported."""

    case: str
    source: str
    message: str
    expected: dict[str, Any]
    observed: dict[str, Any]
    saved: str | None = None
    replay: str | None = None
    mutations: tuple[str, ...] = ()
    stream: bytes | None = None
    #: The stream lines that decide the judgment (always shown in an excerpt).
    decisive: tuple[int, ...] = ()
    #: The case's judgment: ``fail``, ``crash`` (the client died) or ``error``.
    verdict: str = "fail"
    #: The case's size in bytes (failures are listed smallest first).
    size: int = 0
    #: A protocol error's words without the output they quote: the same mistake in every
    #: case and every check (one report of it, not one per check).
    cause: str | None = None
    #: More strata that failed with this message and these mutations (the one flaw
    #: again): counted here, not listed one by one.
    alike: int = 0
    #: The sha256 of the case's stream (hex): names a case that is not saved.
    sha256: str = ""
    #: Why the case is not in the failures folder (too large, and not the smallest); its
    #: ``replay`` is then the smallest's.  ``None``: saved (or a fixture).
    not_saved: str | None = None
    #: The files this run wrote for the case (removed again if it is not kept whole).
    written: tuple[str, ...] = ()
    #: Which bug this is (:func:`~stella_conform.conformance.checks.identity.failure_identity`):
    #: failures alike are one bug shown twice.
    identity: str = ""

    def to_json(self, whole: bool = True) -> dict[str, Any]:
        """The failure as a report lists it; ``whole=False`` (any but a check's first, its
        smallest): every expected string over 4096 characters is excerpted and digested."""
        skipped = ("stream", "decisive", "written", "not_saved", "identity")
        out = {k: v for k, v in self.__dict__.items() if k not in skipped}
        out["mutations"] = list(self.mutations)
        out["decisive_lines"] = list(self.decisive)
        if not whole:
            out["expected"] = digested_values(self.expected)
        if self.not_saved is not None:
            out["not_saved"] = self.not_saved
        return out


@dataclass
class CheckResult:
    id: str
    name: str
    rule: str
    tier: str
    outcome: str
    message: str
    cases: int = 0
    failures: list[CaseFailure] = field(default_factory=list)
    known_failure: str | None = None
    seconds: float = 0.0
    #: How the case cache served the check's generated cases: ``read`` (from a file this
    #: run's secret authenticates), ``written``, ``refused: WHY`` (a file there was not
    #: trusted: generated afresh), ``off: WHY``, or empty (no cache, or no generated case).
    case_cache: str = ""
    #: ``point=A`` / ``point=B``: the registered readings the client took in cases it
    #: passed (docs/contract-readings.md), with how many cases each. Information only.
    readings: dict[str, int] = field(default_factory=dict)
    #: The time budget ran out before the check was graded in full (not in the JSON: the
    #: message says so).
    cut_short: bool = False
    #: How many distinct cases failed (crashed, errored); ``failures`` keeps at most
    #: :data:`FAILURES_KEPT` of them, the smallest first.
    failed_cases: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "rule": self.rule,
            "tier": self.tier,
            "outcome": self.outcome,
            "message": self.message,
            "cases": self.cases,
            "known_failure": self.known_failure,
            "seconds": round(self.seconds, 3),
            "readings": dict(sorted(self.readings.items())),
            "failed_cases": self.failed_cases,
            "failures": [f.to_json(whole=i == 0) for i, f in enumerate(self.failures)],
        }
