"""What ``fuzz`` prints and writes: ``run``'s report plus what the fuzzing did.

A session's :class:`FuzzOutcome` (its cases, coverage, failures, each check's corpus, what
it shared) goes into the JSON report under ``fuzz``, and as summary lines after ``run``'s
in the terminal and Markdown reports (each escapes them as it escapes any line that
carries a client's words); :class:`Progress` is the line a verbose session prints every
second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stella_conform.conformance.fuzz.arms import Arm, Found
from stella_conform.conformance.fuzz.team import Sharing
from stella_conform.conformance.report.failures import terminal_line
from stella_conform.conformance.report.model import Report
from stella_conform.conformance.suite import CheckResult


@dataclass
class Progress:
    seconds: float
    cases: int
    rate: float
    features: int
    new_features: int
    failures: list[Found]


@dataclass
class FuzzOutcome:
    results: list[CheckResult]
    seconds: float
    cases: int
    features: int
    stopped: str
    feedback: str
    failures: list[Found]
    arms: list[Arm]
    sharing: Sharing | None = None
    #: Recordings (``--seed-corpus``) the cases' runs could start from, and how many
    #: of the cases started from each at the outset were kept.
    recordings: int = 0
    seeds_kept: int = 0
    #: How the final pass went when it could not grade every check in full, else None.
    final_pass: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 2),
            **({"final_pass": self.final_pass} if self.final_pass else {}),
            "cases": self.cases,
            "cases_per_second": round(self.cases / self.seconds, 1) if self.seconds else 0.0,
            "coverage_features": self.features,
            "feedback": self.feedback,
            "stopped": self.stopped,
            "time_to_first_failure": (
                round(min(f.seconds for f in self.failures), 2) if self.failures else None
            ),
            "failures": [f.to_json() for f in self.failures],
            "checks": {
                arm.check.id: {
                    "cases": arm.cases,
                    "new_behaviour": arm.novel,
                    "corpus": len(arm.corpus),
                    "failures": len(arm.failures),
                }
                for arm in self.arms
            },
            "seed_corpus": {"recordings": self.recordings, "kept": self.seeds_kept},
            "shared": self.sharing.to_json() if self.sharing is not None else None,
        }


@dataclass
class FuzzReport(Report):
    """``run``'s report, plus what the fuzzing did (in every format)."""

    fuzz: FuzzOutcome | None = None

    def extra_json(self) -> dict[str, Any]:
        return {"fuzz": self.fuzz.to_json()} if self.fuzz is not None else {}

    def extra_lines(self) -> list[str]:
        """What the fuzzing did, after the run's summary: a line each, a client's words in
        it on that line (its newlines shown as ⏎)."""
        f = self.fuzz
        if f is None:
            return []
        rate = f.cases / f.seconds if f.seconds else 0.0
        lines = [
            f"fuzzed {f.cases:,} case(s) in {f.seconds:.0f} s ({rate:.0f}/s), stopped: {f.stopped}",
            f"feedback: {f.feedback}; coverage features: {f.features:,}",
        ]
        if f.final_pass:
            lines.append(f"final pass: {f.final_pass}")
        for found in f.failures:
            where = []
            if found.recording is not None:
                where.append(f"on the recording {terminal_line(found.recording)}")
            if found.replayed:
                where.append("another worker's find, failing here too")
            elif found.from_shared:
                where.append("built on another worker's input")
            lines.append(
                f"found after {found.seconds:.1f} s ({found.cases:,} cases): {found.check}: "
                f"{terminal_line(found.message)}" + (f" [{'; '.join(where)}]" if where else "")
            )
        if f.sharing is not None:
            lines.extend(f.sharing.lines())
        return lines
