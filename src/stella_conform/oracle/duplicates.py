"""Duplicate keys in one line's objects: the point ``duplicate-keys``.

JSON parsers keep the last of a repeated key (what ``JSON.parse``, Python and Go do);
reading B refuses the line.  The search parses the line again with a hook that raises on
a repeat, so it runs only where :func:`stella_conform.oracle.prefilters.more_pairs` says
the line may hold one.
"""

from __future__ import annotations

import json
from typing import Any

from stella_conform.oracle.parsing import _parse_int, _reject_constant, _scan_with


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


def has_duplicate_keys(text: str) -> bool:
    """Whether ``text`` parses with a key repeated in some object.

    The caller skips it when the line has no more colons than its objects have keys
    (:func:`~stella_conform.oracle.prefilters.more_pairs`): every pair of the text has a
    colon of its own, so all of them are distinct keys of the objects parsed (a repeated
    key would need one more).
    """
    try:
        return _repeats(_PAIRS_SCAN, text)
    except ValueError as exc:
        if "digits" not in str(exc):
            return False
    except (RecursionError, StopIteration):
        return False
    try:  # an integer longer than int() accepts: read as the float it overflows to
        return _repeats(_PAIRS_BIG, text)
    except (ValueError, RecursionError, StopIteration):
        return False


def _repeats(scan: Any, text: str) -> bool:
    try:
        _scan_with(scan, text)
    except _Duplicate:
        return True
    return False
