"""The default vocabulary, the wire-schema importer, and the fit compiler."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stella_conform.schemas.fit import FitCompiler, UnsupportedSchema
from stella_conform.schemas.vocabulary import Vocabulary, VocabularyError, data_path, load_schema

DEFAULT_TAGS = {
    "stage",
    "text",
    "text_delta",
    "reasoning",
    "tool_start",
    "tool_result",
    "step_usage",
    "turn_complete",
    "run_complete",
    "error",
    "budget_tick",
    "file_change",
}
OWN_SCHEMAS = [
    "events.schema.json",
    "line.schema.json",
    "envelope.schema.json",
    "expectation.schema.json",
]


@pytest.mark.parametrize("name", OWN_SCHEMAS)
def test_own_schemas_are_valid_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_default_vocabulary_covers_the_contract() -> None:
    vocab = Vocabulary.default()
    assert DEFAULT_TAGS <= vocab.known
    assert vocab.ident.startswith("stella-default@")
    assert set(vocab.aliases) == {"text", "text_delta"}


def test_default_vocabulary_field_facts_match_real_stella() -> None:
    """Required fields as upstream/README.md lists them."""
    vocab = Vocabulary.default()
    req = {tag: set(vocab.members[tag]["required"]) - {"type"} for tag in vocab.known}
    assert req["stage"] == {"name", "scope"}
    assert req["text"] == {"text"}
    assert req["text_delta"] == {"delta"}
    assert req["tool_start"] == {"call"}
    assert req["tool_result"] == {"call_id", "output", "duration_ms"}
    assert req["turn_complete"] == req["run_complete"] == {"model", "cost_usd"}
    assert req["error"] == {"message", "retryable"}


def test_import_real_wire_schema(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    assert len(vocab.known) == 41
    assert DEFAULT_TAGS <= vocab.known
    assert "complete" not in vocab.known
    assert set(vocab.aliases) == {"text", "text_delta"}
    assert set(vocab.archived) == {"stage"}


def test_default_vocabulary_agrees_with_real_schema_on_shared_tags(wire_schema: Path) -> None:
    """Our hand-written required fields equal the release's for every default tag."""
    wire = Vocabulary.from_wire_schema(wire_schema)
    ours = Vocabulary.default()
    for tag in ours.known:
        assert set(ours.members[tag]["required"]) == set(wire.members[tag]["required"]), tag


def write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{not json", "not JSON"),
        ([], "must be a JSON object"),
        ({"type": "object"}, "top-level 'oneOf'"),
        ({"oneOf": [{"type": "object"}]}, "does not pin 'type'"),
        ({"oneOf": [{"$ref": "#/$defs/Nope"}]}, "unresolvable reference"),
        ({"$schema": "http://json-schema.org/draft-04/schema#", "oneOf": [{}]}, "dialect"),
        (
            {"oneOf": [{"properties": {"type": {"const": "a"}}, "patternProperties": {}}]},
            "unsupported keyword",
        ),
        (
            {
                "oneOf": [
                    {"properties": {"type": {"const": "a"}}},
                    {"properties": {"type": {"const": "a"}}},
                ]
            },
            "declared twice",
        ),
    ],
)
def test_malformed_wire_schema_is_a_clear_error(tmp_path: Path, doc: object, message: str) -> None:
    with pytest.raises(VocabularyError, match=message):
        Vocabulary.from_wire_schema(write(tmp_path, doc))


def test_missing_wire_schema(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="not found"):
        Vocabulary.from_wire_schema(tmp_path / "absent.json")


def test_fit_ignores_additional_properties_false() -> None:
    check = FitCompiler({}).compile(
        {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}}}
    )
    assert check({"a": "x", "b": 1}, "") is None
    assert check({"a": 1}, "") is not None


def test_fit_reads_one_of_as_any_of() -> None:
    check = FitCompiler({}).compile({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})
    assert check({"a": 1, "b": 2}, "") is None
    assert check({"c": 1}, "") is not None


def test_fit_recursive_refs_terminate() -> None:
    root = {"$defs": {"T": {"type": "object", "properties": {"child": {"$ref": "#/$defs/T"}}}}}
    check = FitCompiler(root).compile({"$ref": "#/$defs/T"})
    assert check({"child": {"child": {}}}, "") is None
    assert "child.child" in (check({"child": {"child": 5}}, "") or "")


def test_fit_rejects_remote_refs() -> None:
    with pytest.raises(UnsupportedSchema):
        FitCompiler({}).compile({"$ref": "https://example.com/x.json"})


def test_schema_files_ship_in_the_package() -> None:
    for name in [*OWN_SCHEMAS, "vocabulary.json"]:
        assert data_path(name).is_file()


def _agree(vocab: Vocabulary, event: dict) -> None:  # type: ignore[type-arg]
    tag = event.get("type")
    if not isinstance(tag, str) or tag not in vocab.known:
        return
    normalized = vocab.normalize(tag, event)
    assert vocab.fits(tag, normalized) == (vocab.misfit(tag, normalized) is None), event


def test_fast_and_explaining_fit_agree_on_generated_cases() -> None:
    """The decoder's fast yes/no path and the reason-giving path never disagree."""
    from hypothesis import HealthCheck, given, settings

    from stella_conform.generators import cases
    from stella_conform.oracle.decoder import parse_line

    vocab = Vocabulary.default()

    @settings(
        max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(cases(max_mutations=3))
    def check(case) -> None:  # type: ignore[no-untyped-def]
        for line in case.stream.split(b"\n"):
            value, error = parse_line(line)
            if error is None and isinstance(value, dict):
                _agree(vocab, value)

    check()


def test_fast_and_explaining_fit_agree_on_the_wire_schema(wire_schema: Path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from stella_conform.generators.events import EventStrategies
    from stella_conform.generators.mutations import WRONG_VALUES

    vocab = Vocabulary.from_wire_schema(wire_schema)
    gen = EventStrategies(vocab)

    @settings(
        max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        for tag in sorted(vocab.known):
            event = dict(data.draw(gen.for_type(tag)))
            _agree(vocab, event)
            for key in [k for k in event if k != "type"]:
                for bad in (None, *WRONG_VALUES["string"][:2], *WRONG_VALUES["integer"][:2]):
                    _agree(vocab, {**event, key: bad})
                _agree(vocab, {k: v for k, v in event.items() if k != key})

    check()
