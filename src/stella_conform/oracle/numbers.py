"""Numbers at the edge of a 64-bit float: the point ``number-beyond-f64``, as a correctly
rounded parse and as serde_json (a real consumer's parser) each tell it."""

from __future__ import annotations

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
    if len(literal.lstrip("-")) >= len(LONG_DIGITS):
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
#: ``[0-9]{309}`` steps through a megabyte text at about the cost of parsing it.
DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
LONG_DIGITS = b"0" * 309
