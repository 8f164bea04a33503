"""The registered points a client's use of the outcomes decides, not its decoding of a line.

Two points of :mod:`stella_conform.oracle.readings` are about what a client does with the
events it has read rather than how it reads a line:

* ``after-terminator``: a client that matches ``run_complete`` "to know that nothing more
  is coming" stops there, so it never reads a line after it (reading B); a client that
  reads every line (reading A, the default) applies the rules to those lines too.
* ``elapsed-clamp``: "clamp a negative time difference to zero" read of each step between
  two stamps (reading A, the default: the forward steps summed) or of the whole run (B:
  the last stamp less the first, at least zero).

Both are found and followed here, over the outcomes of a decode, so the reference decoder
(and what its careful decode notes for a stream) is the same with or without them: a
stream touches ``after-terminator`` when a line other than a blank one follows the first
``run_complete`` it reads, and ``elapsed-clamp`` when the two elapsed times differ.
Reading B of ``after-terminator`` decodes the stream up to the end of that line: the
client's reading of a stream cut there, as it is the stream it read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from stella_conform.oracle.outcomes import U64_MAX, Kind, LineOutcome

if TYPE_CHECKING:
    from stella_conform.oracle.decoder import Decoded
    from stella_conform.schemas.vocabulary import Vocabulary

AFTER_TERMINATOR = "after-terminator"
ELAPSED_CLAMP = "elapsed-clamp"
#: The points this module notes and follows (the decoder knows neither).
CLIENT_POINTS = frozenset({AFTER_TERMINATOR, ELAPSED_CLAMP})
#: The event type after which nothing more is coming.
TERMINATOR = "run_complete"


def terminator_line(outcomes: Sequence[LineOutcome]) -> int | None:
    """The line of the first ``run_complete`` read, when a line that is not blank follows
    it (``None`` otherwise: nothing after it to read or not)."""
    end = None
    for outcome in outcomes:
        if end is not None and outcome.kind is not Kind.BLANK:
            return end
        if end is None and outcome.kind is Kind.KNOWN and outcome.tag == TERMINATOR:
            end = outcome.line
    return None


def stamp(outcome: LineOutcome) -> int | None:
    """The ``ts`` a client's clock reads from this line, as the fold reads it: a known or
    unrecognized event's integer stamp within u64 (``None``: none)."""
    if outcome.kind is not Kind.KNOWN and outcome.kind is not Kind.UNKNOWN:
        return None
    ts = (outcome.event or {}).get("ts")
    if isinstance(ts, int) and not isinstance(ts, bool) and 0 <= ts <= U64_MAX:
        return ts
    return None


def stamps(outcomes: Iterable[LineOutcome]) -> int:
    """How many stamps a client's clock reads from these outcomes."""
    return sum(1 for o in outcomes if stamp(o) is not None)


class WholeRun:
    """The elapsed time of reading B of ``elapsed-clamp``, fed one outcome at a time: the
    last stamp less the first, at least zero (``None`` before the first stamp)."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.last: int | None = None

    def feed(self, outcome: LineOutcome) -> None:
        ts = stamp(outcome)
        if ts is not None:
            self.first = ts if self.first is None else self.first
            self.last = ts

    @property
    def elapsed_ms(self) -> int | None:
        if self.first is None or self.last is None:
            return None
        return max(0, self.last - self.first)


def whole_run_elapsed(outcomes: Iterable[LineOutcome]) -> int | None:
    """Reading B's elapsed time of these outcomes (:class:`WholeRun`)."""
    clock = WholeRun()
    for outcome in outcomes:
        clock.feed(outcome)
    return clock.elapsed_ms


def through_line(data: bytes, line: int) -> bytes:
    """The stream up to the end of physical line ``line`` (lines end at ``\\n`` only)."""
    at = -1
    for _ in range(line):
        at = data.find(b"\n", at + 1)
        if at < 0:
            return data
    return data[: at + 1]


def decode_following(
    data: bytes,
    vocab: Vocabulary | None,
    taken: frozenset[str],
    touched: set[str],
    decode_all: Callable[..., Decoded],
) -> Decoded:
    """The stream decoded under the readings ``taken``, this module's points included; the
    points this reading reaches are added to ``touched``."""
    plain = taken - CLIENT_POINTS
    seen: set[str] = set()
    decoded = decode_all(data, vocab, choices=plain, touched=seen)
    decoded = follow(data, vocab, taken, decoded, seen, decode_all)
    touched.update(seen)
    return decoded


def follow(
    data: bytes,
    vocab: Vocabulary | None,
    taken: frozenset[str],
    decoded: Decoded,
    touched: set[str],
    decode_all: Callable[..., Decoded],
) -> Decoded:
    """``decoded`` (the stream read under ``taken`` less this module's points) as a client
    taking ``taken`` reads it; the points of this module it reaches go into ``touched``.

    A client that stops at ``run_complete`` read the stream up to there: that part is
    decoded again, and the points it reaches replace those of the whole stream."""
    from stella_conform.oracle.decoder import Decoded

    end = terminator_line(decoded.outcomes)
    if end is not None:
        if AFTER_TERMINATOR in taken:
            touched.clear()
            plain = taken - CLIENT_POINTS
            decoded = decode_all(through_line(data, end), vocab, choices=plain, touched=touched)
        touched.add(AFTER_TERMINATOR)
    whole = whole_run_elapsed(decoded.outcomes)
    if whole != decoded.summary.elapsed_ms:
        touched.add(ELAPSED_CLAMP)
        if ELAPSED_CLAMP in taken:
            decoded = Decoded(decoded.outcomes, replace(decoded.summary, elapsed_ms=whole))
    return decoded


#: A stamp as it is usually written; a line with an escape may spell its key otherwise.
_STAMP = re.compile(rb'"ts"\s*:\s*(-?[0-9]+)')


def may_touch(lines: Iterable[bytes]) -> bool:
    """Whether a stream may touch a point of this module (``False``: it cannot), read from
    its bytes without parsing them: a line after one that may be ``run_complete`` (it
    names it, or holds an escape that may spell it), or stamps that may go backwards (a
    stamp lower than one before it, or an escape that may spell a stamp's key).

    Every stamp the fold reads is among the numbers found here, in order, so a backward
    step between two of them is a decrease here too."""
    terminated = False
    last: int | None = None
    for raw in lines:
        if terminated and raw.strip(b" \t\r\n"):
            return True
        if b"\\u" in raw:
            return True
        if b"run_complete" in raw:
            terminated = True
        for found in _STAMP.finditer(raw):
            value = int(found.group(1))
            if last is not None and value < last:
                return True
            last = value
    return False
