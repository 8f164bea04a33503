"""The careful decode: :func:`~stella_conform.oracle.decoder.decode` following the
readings in ``choices`` and noting the points of :mod:`stella_conform.oracle.readings` a
stream touches, so the oracle can compute every conforming reading.

It frames lines as the plain decode does (:func:`~stella_conform.oracle.framing.frame`);
its line hook parses with a scanner that notes numbers beyond f64, looks for the JSON
grammar's edges (a BOM, Unicode whitespace, negative zero, lone surrogates, deep nesting,
duplicate keys), and classifies.  Each search that would cost per byte or per value on
every line is guarded by a prefilter (:mod:`stella_conform.oracle.prefilters`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any

from stella_conform.oracle import prefilters
from stella_conform.oracle.classify import classify
from stella_conform.oracle.duplicates import has_duplicate_keys
from stella_conform.oracle.framing import _BLANK, LineHook, TornHook, frame, torn
from stella_conform.oracle.numbers import (
    _INFINITIES,
    DIGITS_AS_ZERO,
    LONG_DIGITS,
    _float_beyond_f64,
    _int_beyond_f64,
)
from stella_conform.oracle.outcomes import Kind, LineOutcome
from stella_conform.oracle.parsing import _parse_int, _reject_constant, _scan_with, parse_line
from stella_conform.schemas.vocabulary import Vocabulary

#: Unicode White_Space (what Rust's ``str::trim`` strips), beyond JSON's four.
UNICODE_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_BOM = b"\xef\xbb\xbf"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Nesting at which serde_json gives up: it refuses 128 levels ("recursion limit
#: exceeded"), 127 parse (serde_json 1.0.87, measured).
MAX_DEPTH = 128


def _neg_zero_int(text: str) -> Any:
    return -0.0 if text == "-0" else _parse_int(text)


_NEG_ZERO = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_neg_zero_int)


def _walk(value: Any) -> Iterator[Any]:
    """Every value and key inside ``value`` (iteratively: deep nesting must not recurse)."""
    stack = [value]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _note_float(text: str) -> float:
    value = float(text)
    if _float_beyond_f64(text, value):
        _BEYOND_F64[0] = True
    return value


#: Set while parsing a line when a number literal overflowed a 64-bit float.
_BEYOND_F64 = [False]
#: The careful path's parser: a callback per *float* literal (rare on a stream) notes the
#: ones beyond f64, where a regex over the bytes or a walk over the values would cost
#: per byte or per value on every line.
_CAREFUL_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_note_float)
_CAREFUL_SCAN: Any = _CAREFUL_JSON.scan_once  # type: ignore[attr-defined]


def _careful_line(content: bytes) -> tuple[Any, str | None, bool]:
    """``(value, error, beyond_f64)``: :func:`parse_line`, noting numbers beyond f64."""
    _BEYOND_F64[0] = False
    try:
        value = _scan_with(_CAREFUL_SCAN, content.decode("utf-8"))
        # serde_json reads an integer beyond u64 as a float, so 309 digits can overflow it
        big = _BEYOND_F64[0] or (
            (
                not prefilters.ENABLED
                or (
                    len(content) >= prefilters.DIGIT_STRIDE
                    and prefilters.sampled_digit(content)
                    and LONG_DIGITS in content.translate(DIGITS_AS_ZERO)
                )
            )
            and any(type(v) is int and _int_beyond_f64(v) for v in _walk(value))
        )
        return value, None, big
    except Exception:
        value, error = parse_line(content)
        big = error is None and any(
            (type(v) is float and v in _INFINITIES) or (type(v) is int and _int_beyond_f64(v))
            for v in _walk(value)
        )
        return value, error, big


def _json_edges(content: bytes, value: Any, beyond_f64: bool) -> dict[str, str]:
    """JSON-grammar edge points a parsed line touches, each with why reading B refuses it."""
    found: dict[str, str] = {}
    if beyond_f64:
        found["number-beyond-f64"] = "not JSON: a number out of the range of a 64-bit float"
    # A one-byte search is a memchr, where ``b"\\u" in`` steps through every byte of a
    # megabyte text: so it runs only where a backslash is (the same answer).
    if (not prefilters.ENABLED or (content.find(b"\\") >= 0 and content.find(b"\\u") >= 0)) and any(
        isinstance(v, str) and _SURROGATE.search(v) for v in _walk(value)
    ):
        found["lone-surrogate"] = "not JSON: a lone surrogate escape in a string"
    if (
        not prefilters.ENABLED
        or (
            len(content) >= 2 * MAX_DEPTH
            and (
                len(content) < prefilters.LONG_LINE
                or prefilters.containers(value, MAX_DEPTH) >= MAX_DEPTH
            )
            and content.count(b"[") + content.count(b"{") >= MAX_DEPTH
        )
    ) and _depth(value) >= MAX_DEPTH:
        found["deep-nesting"] = f"not JSON: nested {MAX_DEPTH} levels or deeper"
    return found


def _as_parsed(text: str, number: int, choices: frozenset[str]) -> str:
    """A line that parsed, as :func:`_careful_parse` parsed it: without the BOM before line 1
    that reading B of ``utf8-bom`` ignores, trimmed of the whitespace reading B of
    ``unicode-whitespace`` trims (searched as written, neither is JSON)."""
    if number == 1 and "utf8-bom" in choices:
        text = text.removeprefix("\ufeff")
    return text.strip(UNICODE_WS) if "unicode-whitespace" in choices else text


def _careful_parse(
    number: int, content: bytes, choices: frozenset[str], touched: set[str]
) -> tuple[Any, str | None, bool]:
    """``(value, error, blank)`` for one non-blank line, following the chosen readings."""
    if number == 1 and content.startswith(_BOM):
        touched.add("utf8-bom")
        if "utf8-bom" in choices:
            content = content[len(_BOM) :]
            if _BLANK.fullmatch(content):
                return None, None, True
    value, error, beyond_f64 = _careful_line(content)
    if error is not None:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return None, error, False
        trimmed = text.strip(UNICODE_WS)
        if trimmed == text.strip(" \t\r\n"):
            return None, error, False
        touched.add("unicode-whitespace")
        if "unicode-whitespace" not in choices:
            return None, error, False
        if not trimmed:
            return None, None, True
        content = trimmed.encode("utf-8", "surrogatepass")
        value, error, beyond_f64 = _careful_line(content)
        if error is not None:
            return None, error, False
    # a memchr first, as for b"\\u" in _json_edges; ``find``, not ``in``: ``needle in content``
    # tries the needle as a byte value first and formats the TypeError it gets (about
    # 1,600 instructions a test, where the memchr of a short line is a few dozen)
    if not prefilters.ENABLED or (content.find(b"-") >= 0 and content.find(b"-0") >= 0):
        try:
            other = _NEG_ZERO.decode(content.decode("utf-8"))
        except (ValueError, RecursionError):
            other = value
        if other != value or repr(other) != repr(value):
            touched.add("negative-zero")
            if "negative-zero" in choices:
                value = other
    if (
        # what _json_edges can find: a number beyond f64 (found already), a lone surrogate
        # (an escape: a backslash), 128 levels (two brackets a level at the least)
        beyond_f64
        or not prefilters.ENABLED
        or len(content) >= 2 * MAX_DEPTH
        or content.find(b"\\") >= 0
    ):
        for point, why in _json_edges(content, value, beyond_f64).items():
            touched.add(point)
            if point in choices:
                return None, why, False
    return value, None, False


def _line_hook(
    vocab: Vocabulary, choices: frozenset[str], points: set[str]
) -> tuple[LineHook, TornHook]:
    """The careful decode's hooks into the framing: one per line, one for a final line
    that did not parse."""

    def read_line(
        number: int, content: bytes, terminated: bool, settling: bool
    ) -> LineOutcome | str | None:
        # parsed with its newline, as the plain path parses it: the same reason when the
        # line is not JSON (a newline inside a string is then what is wrong)
        value, error, blank = _careful_parse(number, content, choices, points)
        if blank:
            return None
        if error is not None:
            return error
        if settling:  # a line a correct client never reads: not classified, no point noted
            return ""
        outcome = classify(number, value, vocab, terminated, choices, points)
        if (
            outcome.kind is Kind.KNOWN
            and (not prefilters.ENABLED or prefilters.more_pairs(content, value))
            # searched with its newline, as it was parsed (JSON whitespace after the value)
            and has_duplicate_keys(_as_parsed(content.decode("utf-8", "replace"), number, choices))
        ):
            points.add("duplicate-keys")
            if "duplicate-keys" in choices:
                return LineOutcome(
                    number,
                    Kind.REJECT,
                    tag=outcome.tag,
                    raw=value,
                    terminated=terminated,
                    reason=f"known type {outcome.tag!r} with a duplicate key",
                )
        return outcome

    def read_torn(line: int, reason: str, terminated: bool, blanks_after: bool) -> LineOutcome:
        if terminated or blanks_after:
            points.add("torn-then-newline")
            if "torn-then-newline" in choices:
                return LineOutcome(
                    line,
                    Kind.REJECT,
                    reason=f"corrupt line (ended by a newline, so not torn): {reason}",
                    terminated=terminated,
                )
        return torn(line, reason, terminated, blanks_after)

    return read_line, read_torn


def decode_careful(
    source: IO[bytes] | Iterable[bytes] | bytes,
    vocab: Vocabulary,
    choices: frozenset[str],
    touched: set[str] | None,
) -> Iterator[LineOutcome]:
    """:func:`~stella_conform.oracle.decoder.decode` following ``choices`` and noting the
    points the stream touches in ``touched``."""
    points: set[str] = touched if touched is not None else set()
    return frame(source, *_line_hook(vocab, choices, points))
