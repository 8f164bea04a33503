"""``stella-conform vocabulary``: the known types a client author must handle, by name."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import kit, kit_inline

from stella_conform.schemas.vocabulary import Vocabulary


def test_lists_every_known_type_with_required_fields_and_aliases() -> None:
    out = kit("vocabulary")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("stella-default@2026.11 (builtin:events.schema.json): 12 known")
    listed = {line.split()[0] for line in lines[1:-1]}
    assert listed == Vocabulary.default().known  # budget_tick and reasoning included
    assert any(
        line.startswith("text ") and "requires text (text also spelled delta)" in line
        for line in lines
    )
    assert "without scope: unrecognized, not corrupt" in out.stdout


def test_json_matches_the_vocabulary() -> None:
    doc = json.loads(kit("vocabulary", "--json").stdout)
    vocab = Vocabulary.default()
    assert doc["vocabulary"] == vocab.ident
    by_type = {t["type"]: t for t in doc["types"]}
    assert set(by_type) == vocab.known
    assert by_type["tool_result"]["required"] == ["call_id", "output", "duration_ms"]
    assert by_type["text_delta"]["alias"] == {"field": "delta", "legacy": "text"}


def test_a_bundled_vocabulary_or_a_wire_schema(wire_schema: Path) -> None:
    older = json.loads(kit("vocabulary", "--vocabulary", "stella-older", "--json").stdout)
    assert older["turn_boundary"] == "complete"
    assert "complete" in {t["type"] for t in older["types"]}
    wire = kit("vocabulary", "--wire-schema", str(wire_schema))
    assert wire.returncode == 0 and ": 41 known types" in wire.stdout.splitlines()[0]
    missing = kit_inline("vocabulary", "--vocabulary", "stella-newest")
    assert missing.returncode == 2 and "nor is it a bundled vocabulary" in missing.stderr
