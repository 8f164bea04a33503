"""Framing: bytes into physical lines, and the one state machine that decides which
line is the final one.

Lines end at ``\\n`` only.  Blank lines (JSON whitespace only) are skipped.  The final
line is the last non-blank one: if it does not parse it is torn, tolerated, and
everything before it stands; any other line that does not parse is a rejection, and
after a rejection nothing more is read.  So a line that does not parse is held until the
stream says whether it was the last, and the blank lines after it are counted, not kept.

What a line *is* is the caller's: :func:`frame` asks a :data:`LineHook` about each
non-blank line (the plain decode parses and classifies; the careful one follows the
chosen readings and notes the points it touches), and a :data:`TornHook` about a final
line that did not parse.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from stella_conform.oracle.outcomes import Kind, LineOutcome

_BLANK = re.compile(rb"[ \t\r\n]*")

#: ``hook(number, content, terminated, settling)`` for a line that is not JSON whitespace
#: only: its outcome; the reason it is not JSON (a ``str``, held until the stream says
#: whether the line was the last); or ``None`` when the hook finds it blank after all (a
#: BOM-only first line under reading B of ``utf8-bom``).  ``settling`` is true after a line
#: that did not parse: that line is now a rejection unless this one is blank, so the hook
#: need only tell blank (``None``) from not (any other answer), and must note no point
#: for judging a line a correct client never reads.
LineHook = Callable[[int, bytes, bool, bool], LineOutcome | str | None]
#: ``hook(line, reason, terminated, blanks_after)`` for a final line that did not parse
#: (``blanks_after``: blank lines follow it): its outcome, :func:`torn` by default.  The
#: blank lines held after it follow a ``TORN`` outcome; any other ends the stream.
TornHook = Callable[[int, str, bool, bool], LineOutcome]


def iter_physical_lines(
    source: IO[bytes] | Iterable[bytes] | bytes,
) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(content, terminated)`` per physical line, holding one line at a time."""
    stream: Iterable[bytes]
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    for chunk in stream:
        if chunk.endswith(b"\n"):
            yield chunk[:-1], True
        elif chunk:
            yield chunk, False


def torn(line: int, reason: str, terminated: bool, blanks_after: bool) -> LineOutcome:
    """A final line that did not parse: torn, and tolerated."""
    return LineOutcome(
        line, Kind.TORN, reason=f"torn final line tolerated: {reason}", terminated=terminated
    )


class _HeldBlanks:
    """The blank lines after an unparseable line, until the stream says whether it was the
    last: counted, not kept (a bad line followed by 100 million newlines held as many
    outcomes).  They are consecutive lines, each ended by a newline but perhaps the last."""

    def __init__(self) -> None:
        self.first = 0
        self.count = 0
        self.last_terminated = True

    def add(self, number: int, terminated: bool) -> None:
        if not self.count:
            self.first = number
        self.count += 1
        self.last_terminated = terminated

    def __bool__(self) -> bool:
        return self.count > 0

    def outcomes(self) -> Iterator[LineOutcome]:
        last = self.first + self.count - 1
        for number in range(self.first, last + 1):
            terminated = self.last_terminated if number == last else True
            yield LineOutcome(number, Kind.BLANK, terminated=terminated)


def frame(
    source: IO[bytes] | Iterable[bytes] | bytes,
    read_line: LineHook,
    read_torn: TornHook = torn,
) -> Iterator[LineOutcome]:
    """One outcome per physical line of ``source``, each non-blank line's from
    ``read_line``, stopping after a rejection.

    Each line is passed with its newline: JSON allows it as whitespace, so a line parses
    as it came (and a line that is not JSON gives the same reason either way)."""
    held = _HeldBlanks()  # blanks after an unparseable line, until we know it is final
    unparsed: tuple[int, str, bool] | None = None
    number = 0
    stream: Iterable[bytes]
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    blank_line = _BLANK.fullmatch
    for content in stream:
        if not content:
            continue
        number += 1
        terminated = content.endswith(b"\n")
        read = (
            None
            if blank_line(content)
            else read_line(number, content, terminated, unparsed is not None)
        )
        if read is None:
            if unparsed is None:
                yield LineOutcome(number, Kind.BLANK, terminated=terminated)
            else:
                held.add(number, terminated)
            continue
        if unparsed is not None:
            line, reason, was_terminated = unparsed
            yield LineOutcome(
                line,
                Kind.REJECT,
                reason=f"corrupt line (not the last): {reason}",
                terminated=was_terminated,
            )
            return
        if isinstance(read, str):
            unparsed = (number, read, terminated)
            continue
        yield read
        if read.kind is Kind.REJECT:
            return
    if unparsed is not None:
        last = read_torn(*unparsed, bool(held))
        yield last
        if last.kind is Kind.TORN:
            yield from held.outcomes()
