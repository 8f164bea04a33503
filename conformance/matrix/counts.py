"""A matrix cell in numbers: the checks graded, failed and skipped.

Two cells compare only when each says how much of it was graded: a client whose mode or
claims skip eight of twenty checks passes twelve, not twenty. So every output (the
terminal's summary and progress lines, Markdown, HTML and ``matrix.json``) shows a cell
as the same three numbers in the same words, made here once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

#: The outcomes counted as failed: the client broke a MUST rule, died, or could not be
#: judged. (A ``warn`` is a SHOULD rule broken: graded, not failed, shown beside.)
FAILED = ("fail", "crash", "error")


def cell_status(outcomes: Iterable[tuple[str, bool]]) -> str:
    """A cell's colour and icon from each check's (outcome, whether it is a known
    failure): ``fail`` when a check fails, else ``crash`` when the client died, else
    ``error`` when a rule could not be judged, else ``pass``."""
    blocking = {outcome for outcome, listed in outcomes if outcome in FAILED and not listed}
    return next((o for o in FAILED if o in blocking), "pass")


@dataclass(frozen=True)
class CellCounts:
    """How many of a cell's checks were graded, and of those how many failed."""

    #: Checks judged (every outcome but ``skip``).
    graded: int
    #: Graded checks that failed, crashed or could not be judged, known failures included.
    failed: int
    #: Checks not graded in the client's mode, profiles or claims.
    skipped: int
    #: Of ``failed``: listed in the client's known-failures file (they do not fail the matrix).
    known: int = 0
    #: Of ``failed``: the client died on a case.
    crash: int = 0
    #: Of ``failed``: the rule could not be judged (a timeout, a protocol error).
    error: int = 0
    #: Graded checks whose SHOULD rule the client breaks.
    warn: int = 0

    @classmethod
    def of(cls, outcomes: Mapping[str, int], known: int = 0) -> CellCounts:
        """From the number of checks of each outcome (a report's ``summary``)."""
        n = {o: int(outcomes.get(o, 0) or 0) for o in (*FAILED, "pass", "warn", "skip")}
        return cls(
            graded=sum(n[o] for o in (*FAILED, "pass", "warn")),
            failed=sum(n[o] for o in FAILED),
            skipped=n["skip"],
            known=known,
            crash=n["crash"],
            error=n["error"],
            warn=n["warn"],
        )

    @classmethod
    def of_outcomes(cls, outcomes: Iterable[tuple[str, bool]]) -> CellCounts:
        """From each check's (outcome, whether it is a known failure)."""
        seen = list(outcomes)
        known = sum(1 for outcome, listed in seen if listed and outcome in FAILED)
        return cls.of(Counter(outcome for outcome, _ in seen), known)

    @classmethod
    def of_report(cls, report: Mapping[str, Any]) -> CellCounts:
        """A cell's report (``stella-conform/report/1``), as ``matrix.json`` holds it."""
        summary = report.get("summary")
        checks = report.get("checks")
        listed = [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
        known = sum(1 for c in listed if c.get("known_failure") and c.get("outcome") in FAILED)
        return cls.of(summary if isinstance(summary, Mapping) else {}, known)

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    def text(self) -> str:
        """``28 graded · 1 failed (1 known) · 4 skipped``: always the three numbers, in
        that order, so cells side by side read alike."""
        kinds = [(self.crash, "crash"), (self.error, "error"), (self.known, "known")]
        inside = ", ".join(f"{n} {word}" for n, word in kinds if n)
        failed = f"{self.failed} failed" + (f" ({inside})" if inside else "")
        warned = f" · {self.warn} warn" if self.warn else ""
        return f"{self.graded} graded · {failed}{warned} · {self.skipped} skipped"
