"""The adapter protocol's schema says what "none" is for each summary field, as
docs/adapter-protocol.md's table and its "What none is" paragraph do."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

SUMMARY = json.loads((REPO / "schemas" / "protocol.schema.json").read_text(encoding="utf-8"))[
    "$defs"
]["Summary"]["properties"]

#: Per field: the words its description must hold for "none" (each in the protocol's table).
NONE = {
    "preview": ('null or ""',),
    "usage": ("null or all three 0", "null only"),
    "elapsed_ms": ("null or 0",),
    "final_text": ("null only",),
    "text": ("null only",),
    "unrecognized_events": ("0 in a stream", "null or 0"),
    "cost_usd": ("null, never 0",),
    "files_touched": ("null",),
    "rows": ("null, as 0 is an empty list",),
    "input_tokens": ("tokens-without-usage", "tokens-not-read"),
}


@pytest.mark.parametrize("name", sorted(NONE))
def test_each_summary_field_says_what_none_is(name: str) -> None:
    description = SUMMARY[name].get("description", "")
    assert "None" in description, name
    for words in NONE[name]:
        assert words in description, (name, words)


def test_the_protocol_doc_says_the_same() -> None:
    doc = (REPO / "docs" / "adapter-protocol.md").read_text(encoding="utf-8")
    assert 'none (no delta pending, or only empty ones): `null` or `""`' in doc
    assert "none (no `step_usage` line in the stream): `null` or all three 0" in doc
    assert "`null` where it has none (the pre-flight envelope), never 0" in doc
