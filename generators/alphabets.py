"""Explicit alphabets for generated strings, so a fresh checkout costs no Unicode table.

Hypothesis's ``st.text()`` and ``st.characters()`` (and even ``st.text("abc")``) consult a
table of every code point's Unicode category, built on first use and cached under
``.hypothesis/`` in the working directory; ``codec="utf-8"`` also encodes every code point
once.  In a fresh directory — every CI checkout, every ``-j`` worker — that table costs
more CPU and memory than the grading itself.

A reader of JSON lines does not need all 1.1 million code points to be tested: it needs
one of each kind that breaks readers.  So the kit draws characters from fixed tuples with
``st.sampled_from`` (no table), one or more representatives per Unicode general category
(all but surrogates, which UTF-8 cannot encode), plus the characters JSON must escape and
the ones JavaScript treats as line terminators.  Strings shrink towards ``""`` and
characters towards ``"a"``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

#: Plain ASCII first: shrinking moves towards the front of a sampled alphabet.
ASCII = tuple("aAz09 _-.:/,")
#: What JSON must escape or readers mishandle: quote, backslash, controls, DEL.
JSON_ESCAPES = ('"', "\\", "\x00", "\x01", "\x08", "\t", "\n", "\r", "\x1f", "\x7f")
#: At least one character of each Unicode general category but Cs (surrogates).
BY_CATEGORY = {
    "Lu": "ΩЖ",
    "Ll": "éßÿж",
    "Lt": "ǅ",
    "Lm": "ʰ",
    "Lo": "日本אع",
    "Mn": "\u0301",  # combining acute accent
    "Mc": "\u0903",
    "Me": "\u20dd",
    "Nd": "٣",
    "Nl": "Ⅻ",
    "No": "²",
    "Pc": "‿",
    "Pd": "–",
    "Ps": "「",
    "Pe": "」",
    "Pi": "«",
    "Pf": "»",
    "Po": "¡",
    "Sm": "∑",
    "Sc": "€",
    "Sk": "˚",
    "So": "\U0001f642\U0001d11e",  # emoji, and a musical symbol: both outside the BMP
    "Zs": "\u00a0\u3000",
    "Zl": "\u2028",  # a line terminator to JavaScript, not to JSON
    "Zp": "\u2029",
    "Cc": "\u0085",
    "Cf": "\u200b\u200d\ufeff\U000e0001",  # zero-width space, joiner, BOM, a tag
    "Co": "\ue000\U000f0000",
    "Cn": "\u0378\uffff\U0010ffff",  # unassigned, a noncharacter, the last code point
}
#: Every string a schema says is "a string": ASCII, escapes and every category.
ANY_TEXT: tuple[str, ...] = (
    *ASCII,
    *JSON_ESCAPES,
    *(c for chars in BY_CATEGORY.values() for c in chars),
)
#: Line ends to str.splitlines() (and U+2028/U+2029 to JavaScript), text to JSON.
LINE_SEPARATORS = ("\u2028", "\u2029", "\u0085")
#: ANY_TEXT without them: the strings inside ordinary payloads, so that a reader which
#: splits lines there fails the check that names the flaw (R1.lines-end-only-at-newline,
#: fed by the line-separators mutation), not whichever check happened to draw one.
PAYLOAD_TEXT: tuple[str, ...] = tuple(c for c in ANY_TEXT if c not in LINE_SEPARATORS)
#: Field names and other identifiers.
NAME_CHARS = tuple("abcdefghijklmnopqrstuvwxyz_")


def strings(
    alphabet: Sequence[str] = ANY_TEXT, *, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[str]:
    """Strings of characters from ``alphabet``, without Hypothesis's Unicode table."""
    return st.lists(st.sampled_from(tuple(alphabet)), min_size=min_size, max_size=max_size).map(
        "".join
    )


__all__ = [
    "ANY_TEXT",
    "ASCII",
    "BY_CATEGORY",
    "JSON_ESCAPES",
    "LINE_SEPARATORS",
    "NAME_CHARS",
    "PAYLOAD_TEXT",
    "strings",
]
