"""Client text printed by the kit: nothing in it can act on a terminal or hide itself.

Every output that shows a client's words goes through :mod:`stella_conform.safe_text`; the
rules are checked here once, character class by character class, and the outputs that use
them in ``tests/hostile/test_hostile_reports.py``.
"""

from __future__ import annotations

import unicodedata

import pytest

from stella_conform.conformance.report.failures import tail_lines
from stella_conform.safe_text import for_terminal, terminal_safe

#: What a terminal acts on, or what reorders or hides text: C0, DEL, C1, the bidirectional
#: controls (Trojan Source), zero-width characters, the line and paragraph separators, BOM.
ACTING = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + [
    "\u061c", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029",
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2060", "\u2066", "\u2067",
    "\u2068", "\u2069", "\ufeff",
]  # fmt: skip


@pytest.mark.parametrize("char", ACTING, ids=[f"U+{ord(c):04X}" for c in ACTING])
def test_no_acting_or_invisible_character_reaches_the_terminal(char: str) -> None:
    text = f"pa{char}ss"
    # for_terminal keeps a message's own lines (each defused of workflow commands)
    shown = [terminal_safe(text)] + ([for_terminal(text)] if char != "\n" else [])
    for each in shown:
        assert char not in each, (unicodedata.name(char, "?"), each)
        assert each.startswith("pa\\") and each.endswith("ss")


def test_a_stderr_tail_keeps_its_tabs_and_escapes_the_rest() -> None:
    tail = "goroutine 1 [running]:\n\tmain.go:12 +0x1d\n\x1b]0;owned\x07\u202eevil\n"
    assert tail_lines(tail, 3) == [
        "goroutine 1 [running]:",
        "\tmain.go:12 +0x1d",
        "\\x1b]0;owned\\x07\\u202eevil",
    ]


def test_printable_text_is_left_alone() -> None:
    text = "héllo wörld ✅ 💥 日本語 \u00a0 tab-free"
    assert terminal_safe(text) == text
    assert for_terminal("::error::x") != "::error::x"  # no workflow command survives
