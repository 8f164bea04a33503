"""The stream a self-comparing check feeds a client beside the case's own.

Some checks compare a client with itself: its reading of a stream against its reading of
the same stream changed in one way only (a newline added, a torn line dropped, legacy field
spellings written the self-describing way), so any flaw but the one the check is about
reads both the same.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.oracle.decoder import Kind
from stella_conform.schemas.vocabulary import Vocabulary

if TYPE_CHECKING:
    from stella_conform.conformance.checks.model import Check


def paired_stream(check: Check, case: GradedCase) -> bytes | None:
    """The stream a self-comparing check also feeds the client, or ``None``.

    ``R6.unterminated-last-line-read`` compares the client's reading of a stream whose last
    line lacks its newline with its reading of the same bytes plus ``\\n``;
    ``R6.torn-line-adds-nothing`` compares a stream ending on a torn line with the same
    stream without it.  Any other flaw reads both the same, so only this one fails.
    """
    if check.judge == "last-line-content":
        return None if case.stream.endswith(b"\n") else case.stream + b"\n"
    if check.judge == "legacy-content":
        return self_describing(case)
    if check.judge == "torn-adds-nothing":
        torn = [o.line for o in case.outcomes if o.kind is Kind.TORN]
        if not torn:
            return None
        return b"".join(line + b"\n" for line in case.stream.split(b"\n")[: torn[0] - 1])
    return None


def self_describing(case: GradedCase) -> bytes | None:
    """The case's stream with every legacy field spelling of a known event replaced by its
    self-describing name (the legacy field dropped where both are present), or ``None``
    when it has none: what ``R4.legacy-spelling-fits`` compares a client's reading with.

    Nothing else of a line may change, or the pair differs for another reason than the
    spelling: the line is written back compact and in UTF-8 as stella writes it (a lone
    surrogate as an escape, never as invalid UTF-8; an escaped U+2028, U+2029 or U+0085,
    a line end to some readers, stays an escape), keeps its own terminator (a CRLF line
    stays one) and its keys' order (the self-describing name where the legacy one stood).
    A line whose value JSON cannot write back as it was read (``1e400`` read as infinity;
    ``-0`` in an integer field, read as 0, written back without the registered point
    ``negative-zero`` that a client may reject the line for) leaves the case unpaired
    (``None``).
    """
    from stella_conform.generators.grammar import STREAM_LINES, scan

    vocab = case.vocab or Vocabulary.default()
    lines = case.stream.split(b"\n")
    changed = False
    for outcome in case.outcomes:
        raw = outcome.raw
        if outcome.kind is not Kind.KNOWN or not isinstance(raw, dict):
            continue
        alias = vocab.home(str(outcome.tag)).aliases.get(str(outcome.tag))
        if alias is None or alias.legacy not in raw:
            continue
        if alias.field in raw:  # both: the field's value is the one read
            plain = {k: v for k, v in raw.items() if k != alias.legacy}
        else:
            plain = {(alias.field if k == alias.legacy else k): v for k, v in raw.items()}
        if _has_non_finite(plain):
            return None
        old = lines[outcome.line - 1]
        if "num.negative-zero-integer" in scan(old + b"\n", STREAM_LINES):
            return None
        try:  # compact and in UTF-8, as stella writes; a lone surrogate as an escape
            text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
            for char in _LINE_ENDS_TO_SOME:  # raw only where the line had it raw
                if char.encode() not in old:
                    text = text.replace(char, f"\\u{ord(char):04x}")
            written = text.encode()
        except UnicodeEncodeError:
            written = json.dumps(plain, separators=(",", ":")).encode()
        lines[outcome.line - 1] = written + (b"\r" if old.endswith(b"\r") else b"")
        changed = True
    return b"\n".join(lines) if changed else None


#: Characters JSON writes raw in a string that some readers end a line at (U+2028 for
#: ``str.splitlines``): an escape of one stays an escape in the paired stream.
_LINE_ENDS_TO_SOME = ("\u2028", "\u2029", "\x85")


def _has_non_finite(value: Any) -> bool:
    """Whether a decoded value holds a float JSON cannot write (a number beyond f64)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False
