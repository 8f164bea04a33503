"""What an option's value may be, checked one way whatever the source that gave it.

Each kind turns a value from any source (the command line's text, a pytest ini string, a
TOML number, a list) into the value the kit runs with, or raises :class:`Problem` in the
model's words. A source names the option its own way in front of those words
(``--examples``, ``stella_examples (--stella-examples)``, ``[matrix] examples``,
``[tool.stella-conform] examples``), so one bad value reads alike from every source.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

#: The most any count may be (examples, jobs, shrinks, cases, failures): larger numbers
#: name no run that ends, and some do not fit the machine's integers.
MAX_COUNT = 1_000_000_000
#: The most seconds any timeout or budget may be (about 115 days): larger ones overflow
#: the clocks and waits they are handed to.
MAX_SECONDS = 10_000_000.0

#: Why a value is refused: not of the kind, below its least, above its most.
Reason = Literal["kind", "below", "above"]


class Problem(ValueError):
    """A value an option refuses: ``str(problem)`` is the model's words for it."""

    def __init__(self, words: str, reason: Reason) -> None:
        super().__init__(words)
        self.reason = reason


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def too_large(value: Any, most: float) -> Problem:
    """The one message for a number above an option's most, from every source."""
    limit = int(most) if float(most).is_integer() else most
    return Problem(f"at most {limit}, got {_shown(value)}", "above")


def _integral(text: str) -> int | None:
    """The whole number ``text`` writes in decimal notation (``1e20``), if it writes one."""
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not number.is_finite() or number != number.to_integral_value():
        return None
    return int(number)


@dataclass(frozen=True)
class Count:
    """A whole number from ``least`` to ``most``."""

    least: int | None = 0
    most: int | None = MAX_COUNT

    def check(self, number: int, given: Any = None) -> int:
        """``number`` if in range; :class:`Problem` otherwise."""
        if self.least is not None and number < self.least:
            raise Problem(f"at least {self.least}, got {number}", "below")
        if self.most is not None and number > self.most:
            raise too_large(number if given is None else given, self.most)
        return number

    def parse(self, value: Any) -> int:
        if isinstance(value, bool):
            raise Problem(f"a whole number, got {value!r}", "kind")
        if isinstance(value, int):
            return self.check(value)
        if isinstance(value, float) and value.is_integer():
            return self.check(int(value), value)
        text = str(value).strip()
        try:
            return self.check(int(text), value)
        except ValueError as exc:
            if isinstance(exc, Problem):
                raise
        # 1e20 is a whole number too large, not a typo: said as such
        whole = _integral(text) if isinstance(value, str) else None
        if whole is not None and self.most is not None and whole > self.most:
            raise too_large(value, self.most)
        raise Problem(f"a whole number, got {value!r}", "kind")


@dataclass(frozen=True)
class Seconds:
    """A finite number of seconds from ``least`` to ``most``."""

    least: float
    most: float = MAX_SECONDS

    def parse(self, value: Any) -> float:
        try:
            seconds = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < self.least:
            raise Problem(
                f"seconds, a number of at least {self.least}, got {value!r}",
                "kind" if not math.isfinite(seconds) else "below",
            )
        if seconds > self.most:
            raise too_large(value, self.most)
        return seconds


@dataclass(frozen=True)
class Flag:
    """``true`` or ``false`` (in an ini file also ``1``/``0``, ``yes``/``no``)."""

    def parse(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in ("true", "1", "yes"):
            return True
        if word in ("false", "0", "no", ""):
            return False
        raise Problem(f"expected true or false, got {word!r}", "kind")


@dataclass(frozen=True)
class Choice:
    """One of ``choices``; ``what`` names the value in a message (``unknown mode 'x'``)."""

    choices: tuple[str, ...]
    what: str

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or value not in self.choices:
            raise Problem(f"unknown {self.what} {value!r}", "kind")
        return value


@dataclass(frozen=True)
class Text:
    """Any text; ``want`` names what it may hold when it holds a path ("file", "folder",
    "output", "folder or file"), checked by the source that knows where it is relative to."""

    want: str | None = None

    def parse(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise Problem(f"a text, got {value!r}", "kind")
        return str(value)


@dataclass(frozen=True)
class Words:
    """Several texts: a list, or (from an ini file or a claim) one comma-separated text."""

    want: str | None = None

    def parse(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            return tuple(w.strip() for w in value.split(",") if w.strip())
        if isinstance(value, Sequence) and all(isinstance(w, str) for w in value):
            return tuple(value)
        raise Problem(f"a list of texts, got {value!r}", "kind")


Kind = Count | Seconds | Flag | Choice | Text | Words


def from_toml(kind: Kind, value: Any) -> Any:
    """``value`` as a TOML file gives it, checked by ``kind``.

    A TOML file types its values, so a number is written as a number and a flag as
    ``true``/``false``: a text where a number or a flag is wanted (``examples = "5"``) is
    refused, not read, as ``1.5`` and ``true`` are refused for a count.
    """
    if isinstance(kind, Count | Seconds) and not isinstance(value, int | float):
        what = "a whole number" if isinstance(kind, Count) else "seconds, a number"
        raise Problem(f"{what}, got {value!r}", "kind")
    if isinstance(kind, Flag) and not isinstance(value, bool):
        raise Problem(f"expected true or false, got {value!r}", "kind")
    return kind.parse(value)
