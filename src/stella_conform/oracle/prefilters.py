"""The careful decode's prefilters: each a cheap test that says "no" only where the test
it guards would find nothing (the same points, the same outcomes, only sooner).

:data:`ENABLED` false makes every one of them say "maybe": tests set it so and compare
the decodes (``tests/oracle/test_careful_prefilters.py``).
"""

from __future__ import annotations

from typing import Any

from stella_conform.oracle.numbers import LONG_DIGITS

#: Whether the prefilters may say "no" (tests turn them off to compare).
ENABLED = True

#: A run of 309 digits (:data:`~stella_conform.oracle.numbers.LONG_DIGITS`), bytes i to
#: i+308, holds one byte at a multiple of 309 (309 consecutive offsets hold one of each
#: remainder), wherever it starts or ends; so a line with no digit among its bytes 0, 309,
#: 618... holds no integer beyond f64, and is not translated (a copy of the whole line) to
#: look for one.
DIGIT_STRIDE = len(LONG_DIGITS)
_DIGIT_BYTES = b"0123456789"
#: A line this long has its colons found one by one (:func:`more_pairs`).
_FIND_COLONS = 4096
#: A line this long is asked first how many containers its value has (a megabyte text is
#: one object), before its brackets are counted (two passes over it).
LONG_LINE = 64 * 1024


def sampled_digit(content: bytes) -> bool:
    """Whether one of every :data:`DIGIT_STRIDE`-th byte of ``content`` is a digit: a
    slice of a few bytes a kilobyte, where ``translate`` copies the whole line."""
    sample = content[::DIGIT_STRIDE]
    return len(sample.translate(None, _DIGIT_BYTES)) != len(sample)


def containers(value: Any, limit: int) -> int:
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


def more_pairs(content: bytes, value: dict[str, Any]) -> bool:
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
