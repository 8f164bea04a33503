"""docs/adapter-protocol.md's per-language section: every summary field, every allowed
value, read-ahead warned of first, and a minimal adapter per language that the docs run.

The adapters themselves are run by tests/test_docs.py (each ``file=`` block is written
where the console block after it runs, so the program shown is the program graded).
"""

from __future__ import annotations

import json
import re

from conftest import REPO
from doc_console import blocks

from stella_conform.schemas.vocabulary import load_schema

DOC = REPO / "docs" / "adapter-protocol.md"
LANGUAGES = {
    "Python": "minimal_adapter.py",
    "TypeScript": "minimal_adapter.ts",
    "Go": "minimal_adapter.go",
    "Rust": "minimal_adapter.rs",
}


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(f"\n### {title}\n", 1)[1].split("\n### ", 1)[0]


def test_the_summary_table_has_every_field_and_every_allowed_value() -> None:
    section = _section("The summary, field by field")
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.MULTILINE)}
    defs = load_schema("protocol.schema.json")["$defs"]
    fields = defs["Summary"]["properties"]
    assert set(rows) == set(fields) - {"kind"}
    for name, spec in fields.items():
        for value in spec.get("enum", ()):
            assert (f"`{json.dumps(value)}`" if value is not None else "null") in rows[name], (
                name,
                value,
            )
    for outcome in defs["Line"]["properties"]["outcome"]["enum"]:
        assert f"`{outcome}`" in section.split("\n\n", 1)[0]  # a line's outcomes, first


def test_read_ahead_is_warned_of_first() -> None:
    first = _section("Read stdin one line at a time, never ahead").strip().split("\n\n", 1)[0]
    assert first.startswith("**A reader that reads ahead deadlocks report mode.**")
    assert "lines().peekable()" in first and "R1.line-by-line" in first


def test_each_language_has_a_minimal_adapter_the_docs_grade() -> None:
    found = blocks(DOC)
    for language, name in LANGUAGES.items():
        graded = [
            b
            for b in found
            if name in b.files
            and any("stella-conform run --mode report" in c.text for c in b.commands)
            and any("stella-conform smoke --mode report" in c.text for c in b.commands)
        ]
        # the first console block after the file is the one that runs it
        assert graded and graded[0].commands[-1].expected[-1] == "20 pass", language
        assert f"#### {language}" in DOC.read_text(encoding="utf-8")
