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

Where the contract can be read two ways the default above is reading A of a
point in :mod:`stella_conform.oracle.readings`; ``choices`` names the points where
reading B is taken instead, and ``touched`` (when given) collects the points
a stream reaches, so the oracle can compute every conforming reading.
* After a rejection nothing more is read: a correct client has stopped.
* Line length is unlimited.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sized
from dataclasses import dataclass, field
from enum import StrEnum
from typing import IO, Any

from stella_conform.schemas.fit import json_type_name
from stella_conform.schemas.prose import violation
from stella_conform.schemas.tagged_unions import beside_arm
from stella_conform.schemas.vocabulary import ArchivedShape, Vocabulary

NO_CHOICES: frozenset[str] = frozenset()
U64_MAX = 2**64 - 1

_JSON_WS = b" \t\r\n"
_BLANK = re.compile(rb"[ \t\r\n]*")


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


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(text: str) -> Any:
    # Python refuses int() on more than 4300 digits; such a number is out of
    # range for every field anyway, so read it as the float it overflows to.
    return int(text) if len(text) < 4000 else float(text)


# One decoder, built once: json.loads(..., **kwargs) builds a new one per call.
# parse_int stays the C default (a Python callback per integer costs a third of the
# decoder's time); the rare integer too long for int() is retried with _BIG_INTS.
_JSON = json.JSONDecoder(parse_constant=_reject_constant)
_BIG_INTS = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


_WS = re.compile(r"[ \t\n\r]*")
#: JSON's whitespace, which is all that may follow a value on its line.
_JSON_WS_TEXT = " \t\n\r"
_SCAN_ONCE: Any = _JSON.scan_once  # type: ignore[attr-defined]  # the C scanner


def _scan(text: str) -> Any:
    """What ``JSONDecoder.decode`` does, minus two Python calls: the decoder's hot path.

    A stream line starts with its ``{`` and ends with its newline: no whitespace to skip
    before it, and after it a tail checked by ``str.strip`` (the two regular-expression
    matches per line were a tenth of a plain decode)."""
    start = 0 if text[:1] == "{" else _WS.match(text).end()  # type: ignore[union-attr]
    value, end = _SCAN_ONCE(text, start)
    if end != len(text) and text[end:].strip(_JSON_WS_TEXT):
        raise ValueError("extra data")
    return value


def parse_line(content: bytes) -> tuple[Any, str | None]:
    """Parse one line's bytes as JSON; ``(value, None)`` or ``(None, reason)``."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        return _JSON.decode(text), None
    except json.JSONDecodeError as exc:
        if exc.msg == "Invalid control character at" and exc.pos < len(text):
            # which one: U+001F (jq 1.6 takes it) and NUL (a shell's read drops it) are
            # two flaws of one client, told apart by their reasons
            code = ord(text[exc.pos])
            return None, f"not JSON: a raw control character U+{code:04X} in a string at " \
                f"column {exc.colno}"  # fmt: skip
        return None, f"not JSON: {exc.msg} at column {exc.colno}"
    except ValueError as exc:
        if "digits" in str(exc):  # an integer longer than int() accepts
            try:
                return _BIG_INTS.decode(text), None
            except (ValueError, RecursionError) as again:
                return None, f"not JSON: {again}"
        return None, f"not JSON: {exc}"
    except RecursionError as exc:
        return None, f"not JSON: {exc}"


def integral_floats_as_integers(value: Any) -> Any:
    """``value`` with every float that holds an integer (``1.0``, ``1e3``) as that integer;
    ``value`` itself (the same object) when it holds none (reading B of ``integral-float``)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        items = {k: integral_floats_as_integers(v) for k, v in value.items()}
        same = all(items[k] is v for k, v in value.items())
        return value if same else items
    if isinstance(value, list):
        seq = [integral_floats_as_integers(v) for v in value]
        return value if all(a is b for a, b in zip(seq, value, strict=True)) else seq
    return value


_FLOATS = frozenset({"integral-float"})
_STAMP = frozenset({"ts-out-of-range"})


def _fits_relaxed(
    fits: Callable[[str, Any], bool], tag: str, body: dict[str, Any], stamped: bool
) -> list[tuple[frozenset[str], dict[str, Any]]]:
    """The ways ``body``, which does not fit, fits taking reading B at ``integral-float``
    (its integral floats read as integers), at ``ts-out-of-range`` (its stamp dropped), or
    at both where neither alone does (``"duration_ms":4200.0,"ts":-5``): ``(points, body)``
    each, fewest points first."""
    found: list[tuple[frozenset[str], dict[str, Any]]] = []
    whole = integral_floats_as_integers(body)
    floats = whole is not body
    if floats and fits(tag, whole):  # 1.0 where an integer is due
        found.append((_FLOATS, whole))
    if stamped:
        unstamped = {k: v for k, v in body.items() if k != "ts"}
        if fits(tag, unstamped):  # only the stamp is out of range
            found.append((_STAMP, unstamped))
        elif floats and not found:  # 1.0 where an integer is due and a bad stamp too
            unstamped = {k: v for k, v in whole.items() if k != "ts"}
            if fits(tag, unstamped):
                found.append((_FLOATS | _STAMP, unstamped))
    return found


def classify(
    line: int,
    value: Any,
    vocab: Vocabulary,
    terminated: bool = True,
    choices: frozenset[str] = NO_CHOICES,
    touched: set[str] | None = None,
) -> LineOutcome:
    """The outcome for a line that parsed as JSON (reading B at the points in ``choices``)."""
    if not isinstance(value, dict):
        if touched is not None:
            touched.add("non-object-line")
        what = f"line is JSON but not an object (got {json_type_name(value)})"
        if "non-object-line" in choices:
            return LineOutcome(line, Kind.UNKNOWN, raw=value, terminated=terminated, reason=what)
        return LineOutcome(line, Kind.REJECT, raw=value, terminated=terminated, reason=what)
    tag = value.get("type")
    if not isinstance(tag, str):
        why = (
            "missing 'type'"
            if "type" not in value
            else (f"non-string 'type' ({json_type_name(tag)})")
        )
        if touched is not None:
            touched.add("missing-or-non-string-type")
        if "missing-or-non-string-type" in choices:
            return LineOutcome(line, Kind.REJECT, raw=value, reason=why, terminated=terminated)
        return LineOutcome(
            line, Kind.UNKNOWN, event=value, raw=value, reason=why, terminated=terminated
        )
    entry = vocab.dispatch.get(tag)
    if entry is None:
        if vocab.learnt and tag in vocab.type_aliases:
            return _old_type_name(line, value, tag, vocab, terminated, choices, touched)
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    fast, alias, missing = entry
    plain = alias is None or alias.field in value or alias.legacy not in value
    if plain and (missing is None or missing in value) and fast(value):
        # the hot path: no legacy spelling, no archived shape, and the body fits
        outcome = LineOutcome(line, Kind.KNOWN, tag, value, value, None, terminated)
        if (touched is None and not choices and tag not in vocab.prose_constrained) or (
            _PREFILTERS and tag in vocab.pointless
        ):
            return outcome
        return _known_points(outcome, vocab, choices, touched)
    archived = vocab.archived_shape(tag, value)
    if archived is not None:
        if touched is not None:
            touched.add("scopeless-stage")
        if "scopeless-stage" in choices:
            return LineOutcome(
                line,
                Kind.REJECT,
                tag=tag,
                raw=value,
                terminated=terminated,
                reason=f"known type {tag!r} without required field {archived.missing!r}",
            )
        return LineOutcome(
            line,
            Kind.UNKNOWN,
            tag=tag,
            event=value,
            raw=value,
            terminated=terminated,
            reason=f"archived shape: {tag!r} without {archived.missing!r}",
        )
    body = value
    if "ts" in value and value["ts"] is None:  # ts ?? null: a null stamp is no stamp
        if touched is not None:
            touched.add("ts-null")
        if "ts-null" in choices:  # the wire schema types ts as an integer
            return LineOutcome(
                line,
                Kind.REJECT,
                tag=tag,
                raw=value,
                terminated=terminated,
                reason=f"known type {tag!r} with a body that does not fit: 'ts' is null, "
                "and the wire schema types it as an integer",
            )
        body = {k: v for k, v in value.items() if k != "ts"}
    normalized = vocab.normalize(tag, body)
    misfit = None if vocab.fits(tag, normalized) else vocab.misfit(tag, normalized)
    stamped = "ts" in body
    if misfit is not None:
        for points, candidate in _fits_relaxed(vocab.fits, tag, normalized, stamped):
            if touched is not None:
                touched.update(points)
            if misfit is not None and points <= choices:
                misfit, normalized = None, candidate
    if misfit is not None and vocab.learnt:
        tolerant = vocab.tolerant
        if tolerant is not None and tag in tolerant.members:
            # it fits with an alias the schema names only in its descriptions (and, it may
            # be, taking B at integral-float or ts-out-of-range too)
            ways = (
                [(NO_CHOICES, normalized)]
                if tolerant.fits(tag, normalized)
                else [
                    (points, candidate)
                    for points, candidate in _fits_relaxed(tolerant.fits, tag, normalized, stamped)
                    if not vocab.fits(tag, candidate)  # that needs no alias: read above
                ]
            )
            if ways and touched is not None:
                touched.add("learnt-alias")
                touched.update(*(points for points, _ in ways))
            taken = [candidate for points, candidate in ways if points <= choices]
            if taken and "learnt-alias" in choices:
                misfit += (
                    " (it fits only with an alias the wire schema's descriptions name, which "
                    "a client of the schema's keywords does not know)"
                )
            elif taken:
                misfit, normalized = None, taken[0]
    if misfit is not None:
        return LineOutcome(
            line,
            Kind.REJECT,
            tag=tag,
            raw=value,
            terminated=terminated,
            reason=f"known type {tag!r} with a body that does not fit: {misfit}",
        )
    outcome = LineOutcome(
        line, Kind.KNOWN, tag=tag, event=normalized, raw=value, terminated=terminated
    )
    if (touched is None and not choices and tag not in vocab.prose_constrained) or (
        _PREFILTERS and tag in vocab.pointless
    ):
        return outcome
    return _known_points(outcome, vocab, choices, touched)


def _old_type_name(
    line: int,
    value: dict[str, Any],
    tag: str,
    vocab: Vocabulary,
    terminated: bool,
    choices: frozenset[str],
    touched: set[str] | None,
) -> LineOutcome:
    """A line whose type is an old name the schema's descriptions keep as an alias
    (``judge_verdict`` for ``verdict``): the type it names today (reading A of
    ``learnt-alias``), or an unrecognized type (reading B: a client of the keywords)."""
    today = vocab.type_aliases[tag]
    tolerant = vocab.tolerant
    if today not in vocab.known or tolerant is None:
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    if touched is not None:
        touched.add("learnt-alias")
    if "learnt-alias" in choices:
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    read = classify(line, value, tolerant, terminated)
    if read.kind is Kind.KNOWN:
        return LineOutcome(line, Kind.KNOWN, today, read.event, value, None, terminated)
    return read


def _known_points(
    outcome: LineOutcome, vocab: Vocabulary, choices: frozenset[str], touched: set[str] | None
) -> LineOutcome:
    """Points a known event that fits can still touch: a field beside its alias, a key beside
    a tagged union's arm."""
    raw, tag = outcome.raw, str(outcome.tag)
    reason = None
    later = vocab.archived_today.get(tag)
    if later is not None and isinstance(raw, dict) and later.missing not in raw:
        if touched is not None:
            touched.add("shape-archived-today")
        if "shape-archived-today" in choices:  # read as today's vocabulary reads it
            return _archived(outcome, later, vocab, choices, touched)
    home = vocab.home(tag)  # a type the client knows from another stella is read as it wrote it
    alias = home.aliases.get(tag)
    if alias is not None and alias.field in raw and alias.legacy in raw:
        if touched is not None:
            touched.add("field-and-alias")
        if "field-and-alias" in choices:
            reason = f"{tag!r} carries both {alias.field!r} and its legacy alias {alias.legacy!r}"
    if reason is None and tag in vocab.prose_constrained:
        broken = violation(vocab, tag, raw)
        if broken is not None:
            if touched is not None:
                touched.add("prose-constraint")
            if "prose-constraint" not in choices:  # reading A: the schema's words say MUST
                reason = broken
    if reason is None:
        beside = beside_arm(home, tag, raw)
        if beside is not None:
            if touched is not None:
                touched.add("extra-key-beside-arm")
            if "extra-key-beside-arm" in choices:
                reason = f"{tag!r}: {beside}"
    if reason is None:
        return outcome
    return LineOutcome(
        outcome.line,
        Kind.REJECT,
        tag=tag,
        raw=raw,
        terminated=outcome.terminated,
        reason=f"known type {tag!r} with a body that does not fit: {reason}",
    )


def _archived(
    outcome: LineOutcome,
    shape: ArchivedShape,
    vocab: Vocabulary,
    choices: frozenset[str],
    touched: set[str] | None,
) -> LineOutcome:
    """A known line in an archived shape: unrecognized (reading A of ``scopeless-stage``),
    or an error (its reading B)."""
    if touched is not None:
        touched.add("scopeless-stage")
    tag = str(outcome.tag)
    if "scopeless-stage" in choices:
        return LineOutcome(
            outcome.line,
            Kind.REJECT,
            tag=tag,
            raw=outcome.raw,
            terminated=outcome.terminated,
            reason=f"known type {tag!r} without required field {shape.missing!r}",
        )
    return LineOutcome(
        outcome.line,
        Kind.UNKNOWN,
        tag=tag,
        event=outcome.raw,
        raw=outcome.raw,
        terminated=outcome.terminated,
        reason=f"archived shape: {tag!r} without {shape.missing!r}",
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
        yield from _decode_careful(source, vocab, choices, touched)
        return
    held = _HeldBlanks()  # blanks after an unparseable line, until we know it is final
    unparsed: tuple[int, str, bool] | None = None
    number = 0
    stream: Iterable[bytes]
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    blank_line = _BLANK.fullmatch
    scan = _scan
    for content in stream:
        if not content:
            continue
        number += 1
        # JSON allows the trailing newline as whitespace: parse the chunk as it came
        terminated = content.endswith(b"\n")
        if blank_line(content):
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
        try:  # the common case inline; parse_line explains any failure
            value = scan(content.decode("utf-8"))
        except Exception:
            value, error = parse_line(content)
            if error is not None:
                unparsed = (number, error, terminated)
                continue
        outcome = classify(number, value, vocab, terminated)
        yield outcome
        if outcome.kind is Kind.REJECT:
            return
    if unparsed is not None:
        line, reason, was_terminated = unparsed
        yield LineOutcome(
            line,
            Kind.TORN,
            reason=f"torn final line tolerated: {reason}",
            terminated=was_terminated,
        )
        yield from held.outcomes()


#: Unicode White_Space (what Rust's ``str::trim`` strips), beyond JSON's four.
UNICODE_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_BOM = b"\xef\xbb\xbf"
_INFINITIES = (float("inf"), float("-inf"))
#: The least integer a correctly rounded parse makes infinite: halfway from the largest
#: float, 2**1024 - 2**971, to 2**1024, a tie that rounds to the even 2**1024 (Go's
#: strconv.ParseFloat refuses it with ErrRange).
_F64_LIMIT = 2**1024 - 2**970
#: A number below this is within f64 for serde_json too (its error is a few ulps).
_NEAR_F64_MAX = 1.79e308
_U64_DIGITS = 2**64 - 1
#: The integer part serde_json's parse_decimal may refuse a fraction after (with one more
#: digit, 6 to 9: :func:`serde_refuses_number`).
_U64_DECIMAL = "1844674407370955161"
#: serde_json's table of powers of ten (``POW10``: the literals ``1e0`` to ``1e308``).
_POW10 = tuple(float(f"1e{k}") for k in range(309))


def serde_refuses_number(literal: str) -> bool:
    """Whether serde_json 1.0.87 (Debian's, without ``float_roundtrip``) refuses the JSON
    number ``literal``: its ``parse_integer``, ``parse_long_integer``, ``parse_decimal``,
    ``parse_decimal_overflow``, ``parse_exponent`` and ``f64_from_parts`` (``src/de.rs``),
    as far as they decide that. It keeps the digits that fit a u64 (the rest of the integer
    part counts in the exponent, the rest of the fraction is dropped), converts them to f64
    and multiplies by ``POW10[exponent]``, so it refuses, "number out of range", some
    numbers a correctly rounded parse reads as the largest float
    (``1.7976931348623158e308``, ``2**1024 - 2**970 - 1``). And ``parse_decimal`` tells
    "no digit after the point" by that exponent being 0, which it also is after a 20-digit
    integer part ``1844674407370955161[6-9]`` (one digit counted in the exponent) and one
    fraction digit ``[0-5]`` (the one that still fits, counted back out): serde refuses the
    valid ``18446744073709551616.0`` as "invalid number" (or "EOF while parsing a value"
    at the end of its input). All measured, tests/oracle/test_readings.py builds the probe."""
    text = literal.lstrip("-")
    mantissa, _, exp_text = text.replace("E", "e").partition("e")
    whole, point, fraction = mantissa.partition(".")
    significand = exponent = 0
    full = False
    for digit in whole:
        if full or significand * 10 + int(digit) > _U64_DIGITS:
            full = True  # parse_long_integer: the digits after count in the exponent
            exponent += 1
        else:
            significand = significand * 10 + int(digit)
    for digit in fraction:
        if significand * 10 + int(digit) > _U64_DIGITS:
            break  # parse_decimal_overflow: the digits after are dropped, and not checked
        significand = significand * 10 + int(digit)
        exponent -= 1
    else:
        if point and exponent == 0:  # parse_decimal's "at least one digit after the point"
            return True
    if exp_text:
        negative = exp_text.startswith("-")
        # leading zeros are JSON: int() of the whole text refuses more than 4300 digits
        digits = exp_text.lstrip("+-").lstrip("0")
        power = int(digits or "0") if len(digits) <= 10 else 2**31
        if power > 2**31 - 1:  # parse_exponent_overflow
            return significand != 0 and not negative
        exponent = max(-(2**31), min(2**31 - 1, exponent - power if negative else exponent + power))
    f = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            return exponent >= 0 and f * _POW10[exponent] in _INFINITIES
        if f == 0.0:
            return False
        if exponent >= 0:
            return True
        f /= 1e308
        exponent += 308


def _float_beyond_f64(text: str, value: float) -> bool:
    """Whether the float literal ``text`` (read as ``value``) is the point number-beyond-f64:
    infinite to a correct parse, or refused by serde_json (which refuses nothing below
    1.79e308 but the literals that begin with :data:`_U64_DECIMAL`, see
    :func:`serde_refuses_number`)."""
    if value in _INFINITIES:
        return True
    if abs(value) >= _NEAR_F64_MAX:
        return serde_refuses_number(text)
    return text.startswith(_U64_DECIMAL, text[:1] == "-") and serde_refuses_number(text)


def beyond_f64(literal: str) -> bool:
    """Whether the JSON number ``literal`` touches number-beyond-f64, as the careful decode
    tells it (the grammar statistics ask this too)."""
    if "." in literal or "e" in literal or "E" in literal:
        return _float_beyond_f64(literal, float(literal))
    if len(literal.lstrip("-")) >= len(_LONG_DIGITS):
        return len(literal) >= 4000 or _int_beyond_f64(int(literal))
    return False


def _int_beyond_f64(value: int) -> bool:
    """Whether an integer is out of the range of a 64-bit float to a correctly rounded parse
    or to serde_json, which reads an integer beyond u64 as a float."""
    size = abs(value)
    return size >= _F64_LIMIT or (size >= _NEAR_F64_MAX and serde_refuses_number(str(size)))


#: An integer literal that long may be beyond f64 (1.79e308 has 309 digits); only a line
#: holding such a run of digits is walked for one.  The line's digits are all made ``0``
#: and the run searched for as a substring: two passes in C, where the regular expression
#: ``[0-9]{309}`` stepped through a megabyte text at about 9 ms (more than parsing it).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 309
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Nesting at which serde_json gives up: it refuses 128 levels ("recursion limit
#: exceeded"), 127 parse (serde_json 1.0.87, measured).
MAX_DEPTH = 128


def _neg_zero_int(text: str) -> Any:
    return -0.0 if text == "-0" else _parse_int(text)


_NEG_ZERO = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_neg_zero_int)

#: The careful decode's prefilters: each a cheap test that says "no" only where the test
#: it guards would find nothing (the same points, the same outcomes, only sooner).  Tests
#: set it false to make every one of them say "maybe", and compare
#: (``tests/oracle/test_careful_prefilters.py``).
_PREFILTERS = True
#: A run of 309 digits, bytes i to i+308, holds one byte at a multiple of 309 (309
#: consecutive offsets hold one of each remainder), wherever it starts or ends; so a line
#: with no digit among its bytes 0, 309, 618... holds no integer beyond f64, and is not
#: translated (a copy of the whole line) to look for one.
_DIGIT_STRIDE = len(_LONG_DIGITS)
_DIGIT_BYTES = b"0123456789"
#: A line this long has its colons found one by one (:func:`_more_pairs`).
_FIND_COLONS = 4096


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


#: A line this long is asked first how many containers its value has (a megabyte text is
#: one object), before its brackets are counted (two passes over it).
_LONG_LINE = 64 * 1024


def _containers(value: Any, limit: int) -> int:
    """How many objects and arrays ``value`` holds, itself included, counting no further
    than ``limit``: a value nests no deeper than that count."""
    found, stack = 0, [value]
    while stack and found < limit:
        item = stack.pop()
        if isinstance(item, dict):
            found += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            found += 1
            stack.extend(item)
    return found


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


def _scan_with(scan_once: Any, text: str) -> Any:
    """:func:`_scan` with another decoder's scanner (a failure raises; callers only ask
    whether it did, as ``JSONDecoder.decode`` would)."""
    start = 0 if text[:1] == "{" else _WS.match(text).end()  # type: ignore[union-attr]
    value, end = scan_once(text, start)
    if end != len(text) and text[end:].strip(_JSON_WS_TEXT):
        raise ValueError("extra data")
    return value


def _sampled_digit(content: bytes) -> bool:
    """Whether one of every :data:`_DIGIT_STRIDE`-th byte of ``content`` is a digit: a
    slice of a few bytes a kilobyte, where ``translate`` copies the whole line."""
    sample = content[::_DIGIT_STRIDE]
    return len(sample.translate(None, _DIGIT_BYTES)) != len(sample)


def _careful_line(content: bytes) -> tuple[Any, str | None, bool]:
    """``(value, error, beyond_f64)``: :func:`parse_line`, noting numbers beyond f64."""
    _BEYOND_F64[0] = False
    try:
        value = _scan_with(_CAREFUL_SCAN, content.decode("utf-8"))
        # serde_json reads an integer beyond u64 as a float, so 309 digits can overflow it
        big = _BEYOND_F64[0] or (
            (
                not _PREFILTERS
                or (
                    len(content) >= _DIGIT_STRIDE
                    and _sampled_digit(content)
                    and _LONG_DIGITS in content.translate(_DIGITS_AS_ZERO)
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
    # A one-byte search is a memchr; ``b"\\u" in`` stepped through a megabyte text at about
    # 2 ms, so it runs only where a backslash is (the same answer).
    if (not _PREFILTERS or (content.find(b"\\") >= 0 and content.find(b"\\u") >= 0)) and any(
        isinstance(v, str) and _SURROGATE.search(v) for v in _walk(value)
    ):
        found["lone-surrogate"] = "not JSON: a lone surrogate escape in a string"
    if (
        not _PREFILTERS
        or (
            len(content) >= 2 * MAX_DEPTH
            and (len(content) < _LONG_LINE or _containers(value, MAX_DEPTH) >= MAX_DEPTH)
            and content.count(b"[") + content.count(b"{") >= MAX_DEPTH
        )
    ) and _depth(value) >= MAX_DEPTH:
        found["deep-nesting"] = f"not JSON: nested {MAX_DEPTH} levels or deeper"
    return found


class _Duplicate(Exception):
    pass


def _unique_pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(items)
    if len(found) != len(items):
        raise _Duplicate
    return found


_PAIRS = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
_PAIRS_SCAN: Any = _PAIRS.scan_once  # type: ignore[attr-defined]
#: The same, for a line holding an integer too long for int() (as ``_BIG_INTS``).
_PAIRS_BIG: Any = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_constant=_reject_constant, parse_int=_parse_int
).scan_once  # type: ignore[attr-defined]


def _as_parsed(text: str, number: int, choices: frozenset[str]) -> str:
    """A line that parsed, as :func:`_careful_parse` parsed it: without the BOM before line 1
    that reading B of ``utf8-bom`` ignores, trimmed of the whitespace reading B of
    ``unicode-whitespace`` trims (searched as written, neither is JSON)."""
    if number == 1 and "utf8-bom" in choices:
        text = text.removeprefix("\ufeff")
    return text.strip(UNICODE_WS) if "unicode-whitespace" in choices else text


def _has_duplicate_keys(text: str) -> bool:
    """Whether ``text`` parses with a key repeated in some object.

    The caller skips it when the line has no more colons than its objects have keys
    (:func:`_more_pairs`): every pair of the text has a colon of its own, so all of them
    are distinct keys of the objects parsed (a repeated key would need one more).
    """
    try:
        return _repeats(_PAIRS_SCAN, text)
    except ValueError as exc:
        if "digits" not in str(exc):
            return False
    except (RecursionError, StopIteration):
        return False
    try:  # an integer longer than int() accepts (a repeat beside it went unnoted)
        return _repeats(_PAIRS_BIG, text)
    except (ValueError, RecursionError, StopIteration):
        return False


def _repeats(scan: Any, text: str) -> bool:
    try:
        _scan_with(scan, text)
    except _Duplicate:
        return True
    return False


def _more_pairs(content: bytes, value: dict[str, Any]) -> bool:
    """Whether a line may hold more key-value pairs than the objects parsed from it have
    keys: each pair has a colon of its own, so when the line has no more colons than its
    objects have keys, every object's keys are distinct, and no object was lost to a
    duplicate (its parent would have one).  The objects inside are counted only where the
    line has more colons than ``value`` has keys (a nested object, a colon in a string,
    or a duplicate), and no further than the colons.  A long line's colons are found one
    by one, no further than one more than its keys (``find`` is a ``memchr``; ``count``
    steps through every byte: a tenth of the careful decode of a run's megabyte texts)."""
    keys = len(value)
    if len(content) < _FIND_COLONS:
        colons = content.count(b":")
        if colons <= keys:
            return False
    else:
        at = -1
        for _ in range(keys + 1):
            at = content.find(b":", at + 1)
            if at < 0:
                return False
        colons = content.count(b":")
    stack: list[Any] = [v for v in value.values() if type(v) is dict or type(v) is list]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            keys += len(item)
            if colons <= keys:
                return False
            stack.extend(v for v in item.values() if type(v) is dict or type(v) is list)
        else:
            stack.extend(v for v in item if type(v) is dict or type(v) is list)
    return True


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
    # a memchr first, as for b"\\u" below; ``find``, not ``in``: ``needle in content``
    # tries the needle as a byte value first and formats the TypeError it gets (about
    # 1,600 instructions a test, where the memchr of a short line is a few dozen)
    if not _PREFILTERS or (content.find(b"-") >= 0 and content.find(b"-0") >= 0):
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
        beyond_f64 or not _PREFILTERS or len(content) >= 2 * MAX_DEPTH or content.find(b"\\") >= 0
    ):
        for point, why in _json_edges(content, value, beyond_f64).items():
            touched.add(point)
            if point in choices:
                return None, why, False
    return value, None, False


def _decode_careful(
    source: IO[bytes] | Iterable[bytes] | bytes,
    vocab: Vocabulary,
    choices: frozenset[str],
    touched: set[str] | None,
) -> Iterator[LineOutcome]:
    """:func:`decode` following ``choices`` and noting the points the stream touches."""
    points: set[str] = touched if touched is not None else set()
    held = _HeldBlanks()
    unparsed: tuple[int, str, bool] | None = None
    number = 0
    stream: Iterable[bytes]
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    for content in stream:
        if not content:
            continue
        number += 1
        terminated = content.endswith(b"\n")
        blank = bool(_BLANK.fullmatch(content))
        value: Any = None
        error: str | None = None
        if not blank:
            # parsed with its newline, as the plain path parses it: the same reason when
            # the line is not JSON (a newline inside a string is then what is wrong)
            value, error, blank = _careful_parse(number, content, choices, points)
        if blank:
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
        if error is not None:
            unparsed = (number, error, terminated)
            continue
        outcome = classify(number, value, vocab, terminated, choices, points)
        if (
            outcome.kind is Kind.KNOWN
            and (not _PREFILTERS or _more_pairs(content, value))
            # searched with its newline, as it was parsed (JSON whitespace after the value)
            and _has_duplicate_keys(_as_parsed(content.decode("utf-8", "replace"), number, choices))
        ):
            points.add("duplicate-keys")
            if "duplicate-keys" in choices:
                outcome = LineOutcome(
                    number,
                    Kind.REJECT,
                    tag=outcome.tag,
                    raw=value,
                    terminated=terminated,
                    reason=f"known type {outcome.tag!r} with a duplicate key",
                )
        yield outcome
        if outcome.kind is Kind.REJECT:
            return
    if unparsed is not None:
        line, reason, was_terminated = unparsed
        if was_terminated or held:
            points.add("torn-then-newline")
            if "torn-then-newline" in choices:
                yield LineOutcome(
                    line,
                    Kind.REJECT,
                    reason=f"corrupt line (ended by a newline, so not torn): {reason}",
                    terminated=was_terminated,
                )
                return
        yield LineOutcome(
            line,
            Kind.TORN,
            reason=f"torn final line tolerated: {reason}",
            terminated=was_terminated,
        )
        yield from held.outcomes()


@dataclass
class ToolCallRecord:
    call_id: str
    name: str | None
    status: str  # ok | error | open | orphan


@dataclass
class RunSummary:
    """What a correct client reconstructs from the stream."""

    verdict: str = "accept"
    rejected_line: int | None = None
    reason: str | None = None
    lines: int = 0
    known_events: int = 0
    unrecognized_events: int = 0
    unrecognized_types: list[str] = field(default_factory=list)
    blank_lines: int = 0
    torn_final_line: bool = False
    texts: list[str] = field(default_factory=list)
    preview: str | None = None
    stages: dict[str, list[str]] = field(default_factory=lambda: {"turn": [], "run": []})
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    terminator: str | None = None
    turns_completed: int = 0
    events_after_terminator: int = 0
    cost_usd: float | None = None
    elapsed_ms: int | None = None
    #: Sums over step_usage events (None before the first one): exact integers, however big.
    usage: dict[str, int] | None = None
    #: What a bounded fold (``decode``) did not keep, by field: characters of ``preview``,
    #: earlier ``texts``, ``tool_calls``, ``stages``, ``unrecognized_types``.  Empty when
    #: nothing was cut (always, when grading).
    cut: dict[str, int] = field(default_factory=dict)

    @property
    def final_text(self) -> str | None:
        return self.texts[-1] if self.texts else None

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "rejected_line": self.rejected_line,
            "reason": self.reason,
            "lines": self.lines,
            "known_events": self.known_events,
            "unrecognized_events": self.unrecognized_events,
            "unrecognized_types": list(self.unrecognized_types),
            "blank_lines": self.blank_lines,
            "torn_final_line": self.torn_final_line,
            "final_text": self.final_text,
            "texts": list(self.texts),
            "preview": self.preview,
            "stages": {k: list(v) for k, v in self.stages.items()},
            "tool_calls": [
                {"call_id": c.call_id, "name": c.name, "status": c.status} for c in self.tool_calls
            ],
            "terminator": self.terminator,
            "turns_completed": self.turns_completed,
            "events_after_terminator": self.events_after_terminator,
            "cost_usd": self.cost_usd,
            "elapsed_ms": self.elapsed_ms,
            "usage": dict(self.usage) if self.usage is not None else None,
            **({"cut": dict(self.cut)} if self.cut else {}),
        }


#: The step_usage counts a dashboard sums (RunSummary.usage).
USAGE_FIELDS = ("input_tokens", "output_tokens", "duration_ms")


#: What a bounded fold keeps: characters of the texts and of the preview (each), and
#: items of each list (tool calls, a scope's stages, unrecognized types).
FOLD_TEXT_KEEP = 4 * 1024 * 1024
FOLD_ITEMS_KEEP = 50_000


class RunFold:
    """Folds line outcomes into a :class:`RunSummary`, one outcome at a time.

    ``turn_boundary`` is the vocabulary's name for the end of a turn: ``turn_complete``
    today, ``complete`` in the older stella that had not renamed it yet; or several
    (:attr:`Vocabulary.turn_boundaries`: a client that knows both names counts either).

    ``bounded``: keep at most :data:`FOLD_TEXT_KEEP` characters of the texts (the latest:
    the final text stays right) and of the preview (its start), and at most
    :data:`FOLD_ITEMS_KEEP` items of each list; what is left out is counted in
    ``summary.cut``.  ``decode`` folds bounded, so its memory does not grow with the
    stream (292 MiB after 145 MB of text deltas); grading folds whole.
    """

    def __init__(
        self,
        turn_boundary: str | Collection[str] = "turn_complete",
        *,
        choices: frozenset[str] = NO_CHOICES,
        touched: set[str] | None = None,
        bounded: bool = False,
    ) -> None:
        self.summary = RunSummary()
        #: Reading B of ``unknown-count``: the count is of distinct type names.
        self._count_names = "unknown-count" in choices
        self._touched = touched
        self._untyped = 0  # unrecognized lines with no type name
        one = isinstance(turn_boundary, str)
        self._turn_boundaries = frozenset([turn_boundary] if one else turn_boundary)
        self._preview: list[str] = []
        self._calls: dict[str, ToolCallRecord] = {}
        self._unknown: dict[str, None] = {}
        self._last_ts: int | None = None
        self._last_known: str | None = None
        self._bounded = bounded
        self._preview_chars = 0
        self._text_chars = 0

    def _cut(self, what: str, amount: int = 1) -> None:
        self.summary.cut[what] = self.summary.cut.get(what, 0) + amount

    def _full(self, items: Sized, what: str) -> bool:
        """Whether a bounded fold keeps no more of this list (and counts the one left out)."""
        if self._bounded and len(items) >= FOLD_ITEMS_KEEP:
            self._cut(what)
            return True
        return False

    def feed(self, outcome: LineOutcome) -> None:
        s = self.summary
        if outcome.line > s.lines:
            s.lines = outcome.line
        kind = outcome.kind
        if kind is Kind.KNOWN:
            self._known(outcome)
            return
        if kind is Kind.BLANK:
            s.blank_lines += 1
            return
        if kind is Kind.TORN:
            s.torn_final_line = True
            return
        if kind is Kind.REJECT:
            s.verdict = "reject"
            s.rejected_line = outcome.line
            s.reason = outcome.reason
            return
        event = outcome.event or {}
        self._clock(event.get("ts"))
        s.unrecognized_events += 1
        if outcome.tag is None:
            self._untyped += 1
        elif outcome.tag in self._unknown or not self._full(self._unknown, "unrecognized_types"):
            self._unknown.setdefault(outcome.tag)

    def _known(self, outcome: LineOutcome) -> None:
        s = self.summary
        event = outcome.event or {}
        ts = event.get("ts")
        if ts is not None:
            self._clock(ts)
        s.known_events += 1
        tag = outcome.tag
        if s.terminator == "run_complete":
            s.events_after_terminator += 1
        self._last_known = tag
        if tag == "text_delta":
            delta = event["delta"]
            if self._bounded and self._preview_chars + len(delta) > FOLD_TEXT_KEEP:
                self._cut("preview", len(delta))
            else:
                self._preview.append(delta)
                self._preview_chars += len(delta)
        elif tag == "text":
            s.texts.append(event["text"])
            self._preview.clear()
            self._preview_chars = 0
            if self._bounded:
                self._text_chars += len(event["text"])
                while self._text_chars > FOLD_TEXT_KEEP and len(s.texts) > 1:
                    self._text_chars -= len(s.texts.pop(0))
                    self._cut("texts")
        elif tag == "stage":
            # a stage without scope is known only to a vocabulary from before scope
            # existed, when every stage was the engine's: a turn stage
            stages = s.stages.setdefault(event.get("scope", "turn"), [])
            if not self._full(stages, "stages"):
                stages.append(event["name"])
        elif tag == "tool_start":
            call = event["call"]
            if not self._full(s.tool_calls, "tool_calls"):
                record = ToolCallRecord(call["call_id"], call["name"], "open")
                self._calls[record.call_id] = record
                s.tool_calls.append(record)
        elif tag == "tool_result":
            output = event["output"]
            status = "ok" if "ok" in output else "error"
            found = self._calls.get(event["call_id"])
            if found is not None and found.status == "open":
                found.status = status
            elif not self._full(s.tool_calls, "tool_calls"):
                s.tool_calls.append(ToolCallRecord(event["call_id"], None, "orphan"))
        elif tag == "step_usage":
            totals = s.usage if s.usage is not None else dict.fromkeys(USAGE_FIELDS, 0)
            for name in USAGE_FIELDS:
                value = event.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    totals[name] += value
            s.usage = totals
        elif tag in self._turn_boundaries:
            s.turns_completed += 1
        elif tag == "run_complete" and s.terminator != "run_complete":
            s.terminator = "run_complete"
            s.cost_usd = event["cost_usd"]

    def _clock(self, ts: Any) -> None:
        if not isinstance(ts, int) or isinstance(ts, bool) or not 0 <= ts <= U64_MAX:
            return
        s = self.summary
        if self._last_ts is None:
            s.elapsed_ms = 0
        else:
            s.elapsed_ms = (s.elapsed_ms or 0) + max(0, ts - self._last_ts)
        self._last_ts = ts

    def finish(self) -> RunSummary:
        s = self.summary
        s.unrecognized_types = sorted(self._unknown)
        # reading B counts each type name once (a line without a name still counts once)
        by_name = len(s.unrecognized_types) + self._untyped
        if s.unrecognized_events != by_name:  # some name seen twice
            if self._touched is not None:
                self._touched.add("unknown-count")
            if self._count_names:
                s.unrecognized_events = by_name
        s.preview = "".join(self._preview) if self._preview else None
        if s.terminator is None and self._last_known == "error":
            s.terminator = "error"
        return s


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
