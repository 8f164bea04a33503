"""What a correct client does with one physical line: its :class:`Kind` and its
:class:`LineOutcome`, the reference decoder's unit of answer."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

#: No point of :mod:`stella_conform.oracle.readings` read as B: reading A everywhere.
NO_CHOICES: frozenset[str] = frozenset()
U64_MAX = 2**64 - 1


class Kind(StrEnum):
    """What a correct client does with one physical line."""

    KNOWN = "known"
    UNKNOWN = "unknown"
    BLANK = "blank"
    TORN = "torn"
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class LineOutcome:
    """The verdict on one physical line (1-based ``line``).

    ``event`` is the normalized event for a known line (aliases resolved) and
    the object kept whole for an unknown one; ``raw`` is what was parsed.
    """

    line: int
    kind: Kind
    tag: str | None = None
    event: dict[str, Any] | None = None
    raw: Any = None
    reason: str | None = None
    terminated: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "outcome": self.kind.value}
        if self.tag is not None:
            out["type"] = self.tag
        if self.reason is not None:
            out["reason"] = self.reason
        if not self.terminated:
            out["terminated"] = False
        return out
