"""Parsing one line's bytes as JSON, as the reference decoder reads it.

The decoders built here are built once (``json.loads(..., **kwargs)`` builds one per
call), and the common case skips ``JSONDecoder.decode``'s two Python calls
(:func:`_scan`); :func:`parse_line` explains any line that does not parse.
"""

from __future__ import annotations

import json
import re
from typing import Any


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
    before it, and after it a tail checked by ``str.strip`` (two regular-expression
    matches per line would cost a tenth of a plain decode)."""
    start = 0 if text[:1] == "{" else _WS.match(text).end()  # type: ignore[union-attr]
    value, end = _SCAN_ONCE(text, start)
    if end != len(text) and text[end:].strip(_JSON_WS_TEXT):
        raise ValueError("extra data")
    return value


def _scan_with(scan_once: Any, text: str) -> Any:
    """:func:`_scan` with another decoder's scanner (a failure raises; callers only ask
    whether it did, as ``JSONDecoder.decode`` would)."""
    start = 0 if text[:1] == "{" else _WS.match(text).end()  # type: ignore[union-attr]
    value, end = scan_once(text, start)
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
