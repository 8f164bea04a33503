"""The reference decoder: what a correct client does with any stream.

This is the oracle every expected outcome in the kit comes from.  It reads
bytes line by line (never the whole stream), gives each physical line exactly
one :class:`LineOutcome`, and folds the outcomes into a :class:`RunSummary`
(what a dashboard should reconstruct).

Edge cases, decided once here and documented in ``docs/decoder.md``:

* Lines end at ``\\n`` only.  ``\\r`` is JSON whitespace, so CRLF streams
  parse unchanged and a line holding only ``\\r`` is blank.
* Blank lines (JSON whitespace only) are skipped.
* The *final* line is the last non-blank one.  If it does not parse it is
  torn, tolerated, and everything before it stands — whether or not a
  newline follows it.  Any other line that does not parse is a rejection.
* A complete last line without a trailing newline is a real event.
* Bytes that are not UTF-8 make a line non-JSON (JSON text is UTF-8), so
  such a line is torn when final and a rejection otherwise.  The same holds
  for a UTF-8 BOM: stella never writes one and strict JSON parsers refuse it
  (RFC 8259 lets a parser ignore it, so fixtures mark accept as also
  conforming).
* ``NaN``/``Infinity`` are not JSON.  Duplicate keys: the last one wins
  (what ``JSON.parse``, Python and Go do).
* A line that is JSON but not an object is a rejection; an object with a
  missing or non-string ``type`` is unrecognized, as in the contract's own
  example.  Tags match exactly: ``Text`` and ``text `` are unrecognized.
* ``ts: null`` on a known type is the absent stamp (``ts ?? null``).
* An integral number written as a float (``1.0``, ``1e3``) where an integer is due does
  not fit: the literal is a float, as serde_json and Python's json read it.

* After a rejection nothing more is read: a correct client has stopped.
* Line length is unlimited.

Where the contract can be read two ways the default above is reading A of a
point in :mod:`stella_conform.oracle.readings`; ``choices`` names the points where
reading B is taken instead, and ``touched`` (when given) collects the points
a stream reaches, so the oracle can compute every conforming reading.

This module is the decoder's front: lines are framed once, in
:mod:`~stella_conform.oracle.framing`, with a hook per line; the plain decode's hook
parses (:mod:`~stella_conform.oracle.parsing`) and classifies
(:mod:`~stella_conform.oracle.classify`), the careful one's
(:mod:`~stella_conform.oracle.careful`) also follows ``choices`` and notes points; the
outcomes fold into a summary in :mod:`~stella_conform.oracle.fold`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from stella_conform.oracle.careful import MAX_DEPTH, UNICODE_WS, decode_careful
from stella_conform.oracle.classify import classify
from stella_conform.oracle.fold import (
    FOLD_ITEMS_KEEP,
    FOLD_TEXT_KEEP,
    USAGE_FIELDS,
    RunFold,
    RunSummary,
    ToolCallRecord,
)
from stella_conform.oracle.framing import LineHook, frame, iter_physical_lines
from stella_conform.oracle.numbers import beyond_f64, serde_refuses_number
from stella_conform.oracle.outcomes import NO_CHOICES, U64_MAX, Kind, LineOutcome
from stella_conform.oracle.parsing import _scan, integral_floats_as_integers, parse_line
from stella_conform.schemas.vocabulary import Vocabulary

__all__ = [
    "FOLD_ITEMS_KEEP",
    "FOLD_TEXT_KEEP",
    "MAX_DEPTH",
    "NO_CHOICES",
    "U64_MAX",
    "UNICODE_WS",
    "USAGE_FIELDS",
    "Decoded",
    "Kind",
    "LineOutcome",
    "RunFold",
    "RunSummary",
    "ToolCallRecord",
    "beyond_f64",
    "classify",
    "decode",
    "decode_all",
    "integral_floats_as_integers",
    "iter_physical_lines",
    "parse_line",
    "serde_refuses_number",
    "summarize",
]


def _plain_line(vocab: Vocabulary) -> LineHook:
    """The plain decode's line hook: parse (the common case inline, :func:`parse_line`
    explaining any failure) and classify, reading A everywhere."""
    scan = _scan

    def read_line(
        number: int, content: bytes, terminated: bool, settling: bool
    ) -> LineOutcome | str | None:
        try:
            value = scan(content.decode("utf-8"))
        except Exception:
            value, error = parse_line(content)
            if error is not None:
                return error
        return classify(number, value, vocab, terminated)

    return read_line


def decode(
    source: IO[bytes] | Iterable[bytes] | bytes,
    vocab: Vocabulary | None = None,
    *,
    choices: frozenset[str] = NO_CHOICES,
    touched: set[str] | None = None,
) -> Iterator[LineOutcome]:
    """Yield one outcome per physical line, stopping after a rejection.

    ``choices``: points of :mod:`stella_conform.oracle.readings` read as B; ``touched``
    collects the points the stream reaches (the careful, slower path).
    """
    vocab = vocab or Vocabulary.default()
    if choices or touched is not None:
        yield from decode_careful(source, vocab, choices, touched)
        return
    yield from frame(source, _plain_line(vocab))


@dataclass
class Decoded:
    outcomes: list[LineOutcome]
    summary: RunSummary


def decode_all(
    source: IO[bytes] | Iterable[bytes] | bytes,
    vocab: Vocabulary | None = None,
    *,
    choices: frozenset[str] = NO_CHOICES,
    touched: set[str] | None = None,
) -> Decoded:
    """Decode a whole stream, keeping the outcomes (for tests and small cases)."""
    fold = RunFold(
        vocab.turn_boundaries if vocab is not None else "turn_complete",
        choices=choices,
        touched=touched,
    )
    outcomes = []
    for outcome in decode(source, vocab, choices=choices, touched=touched):
        fold.feed(outcome)
        outcomes.append(outcome)
    return Decoded(outcomes, fold.finish())


def summarize(
    source: IO[bytes] | Iterable[bytes] | bytes, vocab: Vocabulary | None = None
) -> RunSummary:
    """Decode a stream of any length in constant memory and return its summary."""
    fold = RunFold(vocab.turn_boundaries if vocab is not None else "turn_complete")
    for outcome in decode(source, vocab):
        fold.feed(outcome)
    return fold.finish()
