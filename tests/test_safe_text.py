"""Client text printed by the kit: nothing in it can act on a terminal or hide itself.

Every output that shows a client's words goes through :mod:`stella_conform.safe_text`; the
rules are checked here once, character class by character class, for each kind of output,
and every command's outputs in ``tests/hostile/test_hostile_outputs.py``.
"""

from __future__ import annotations

import json
import unicodedata
import xml.etree.ElementTree as ET

import pytest

from stella_conform.conformance.report.failures import tail_lines
from stella_conform.safe_text import (
    for_terminal,
    html_text,
    json_text,
    markdown_block,
    markdown_code,
    markdown_name,
    terminal_safe,
    xml_safe,
)

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


#: Each kind of output, as it writes one client string (newlines and tabs are layout some
#: of them keep: those are checked apart).
OUTPUTS = {
    "markdown_code": markdown_code,
    "markdown_name": markdown_name,
    "markdown_block": lambda text: markdown_block([text]),
    "html_text": html_text,
    "xml_safe": xml_safe,
    "json_text": lambda text: json_text(json.dumps(text, ensure_ascii=False)),
}


@pytest.mark.parametrize("output", sorted(OUTPUTS))
@pytest.mark.parametrize(
    "char", [c for c in ACTING if c not in "\n\t"], ids=lambda c: f"U+{ord(c):04X}"
)
def test_no_acting_or_invisible_character_reaches_any_output(output: str, char: str) -> None:
    shown = OUTPUTS[output](f"pa{char}ss")
    assert char not in shown, (unicodedata.name(char, "?"), shown)
    assert "pa\\" in shown.replace("&#92;", "\\")  # shown as an escape, not dropped


def test_json_text_is_the_same_value() -> None:
    value = {"reason": "".join(ACTING) + "\ud800 ✅", "n": [1.5, None, True]}
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert all(c not in text for c in ACTING if c not in "\n\t")


def test_xml_and_html_keep_layout_and_defuse_workflow_commands() -> None:
    text = "first\n\tsecond\n  ::error::third\r\n::warning::fourth"
    xml = xml_safe(text)
    assert xml.split("\n")[:2] == ["first", "\tsecond"]
    assert "::error" not in xml and "::warning" not in xml and "\r" not in xml
    ET.fromstring(f"<a>{xml}\ufffe</a>".replace("\ufffe", xml_safe("\ufffe")))  # XML 1.0
    page = html_text(text + "<img src=x onerror=alert(1)>")
    assert page.split("\n")[:2] == ["first", "\tsecond"]
    assert "::error" not in page and "<img" not in page


def test_a_markdown_block_is_never_closed_by_its_text() -> None:
    block = markdown_block(["a ``` b", "`````", "::error::x", "two\nlines"]).split("\n")
    fence = block[0].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) > 5
    assert block[-1] == fence and fence not in "\n".join(block[1:-1])
    assert block[1:-1] == ["a ``` b", "`````", ":\u200b:error::x", "two\\x0alines"]


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
