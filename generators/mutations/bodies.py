"""Known events whose body no longer fits their type (rule R4): a required field missing,
of the wrong JSON type, null where null is not allowed, or nested wrongly.

A breaker breaks one event of the run; when none can be broken its way, a fresh known event
is added and broken. :func:`field_types` and :func:`required_fields` read what the schema
says of a type's fields; the content hazards read them too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.engine.picks import between, choose
from stella_conform.generators.events import Event, strategies_for
from stella_conform.generators.mutations.stream import (
    Apply,
    Line,
    Mutation,
    Stream,
    insert_at,
    json_copy,
)
from stella_conform.generators.runs import encode
from stella_conform.schemas.fit import json_type_name
from stella_conform.schemas.vocabulary import Vocabulary


def field_types(vocab: Vocabulary, tag: str, name: str) -> list[str] | None:
    """JSON types a field of a known type may take, when the schema says plainly."""
    types = _schema_field_types(vocab, tag, name)
    return list(types) if types is not None else None


@lru_cache(maxsize=4096)
def _schema_field_types(vocab: Vocabulary, tag: str, name: str) -> tuple[str, ...] | None:
    """:func:`field_types`, worked out once per field (mutations ask it per event)."""
    prop = vocab.members[tag].get("properties", {}).get(name)
    seen = 0
    while isinstance(prop, Mapping) and "$ref" in prop and seen < 8:
        target: Any = vocab.root
        for part in str(prop["$ref"])[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        prop = target
        seen += 1
    if not isinstance(prop, Mapping):
        return None
    if "type" in prop:
        t = prop["type"]
        return (t,) if isinstance(t, str) else tuple(t)
    if "enum" in prop or "const" in prop:
        values = list(prop.get("enum", [prop.get("const")]))
        return tuple(sorted({json_type_name(v) for v in values}))
    branches = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(branches, list):
        found: set[str] = set()
        for branch in branches:
            if isinstance(branch, Mapping) and "const" in branch:
                found.add(json_type_name(branch["const"]))
            elif isinstance(branch, Mapping) and isinstance(branch.get("type"), str):
                found.add(branch["type"])
            else:
                return None
        return tuple(sorted(found))
    return None


WRONG_VALUES: Mapping[str, tuple[Any, ...]] = {
    "string": (5, True, ["x"], {"text": "x"}),
    "integer": ("5", 1.5, True, [1]),
    "number": ("0.1", True, [0.1]),
    "boolean": ("true", 1, None),
    "object": ("x", 7, ["x"]),
    "array": ("x", {"0": "x"}, 7),
    "null": (0, "null"),
}


def required_fields(vocab: Vocabulary, tag: str) -> list[str]:
    """The required fields of a known type besides ``type``, less one its archived shape lacks."""
    required = [f for f in vocab.members[tag].get("required", ()) if f != "type"]
    archived = vocab.archived.get(tag)
    return [f for f in required if archived is None or f != archived.missing]


def _break_event(
    draw: st.DrawFn,
    stream: Stream,
    vocab: Vocabulary,
    mark: str,
    breaker: Callable[[st.DrawFn, Event, Vocabulary], Event | None],
) -> None:
    """Break one known event so its body no longer fits; insert one if none can be."""
    candidates = stream.event_indexes(vocab)
    # from a drawn starting point on: one draw, however many events the run has
    start = between(draw, 0, len(candidates) - 1) if candidates else 0
    for index in candidates[start:] + candidates[:start]:
        line = stream.lines[index]
        broken = breaker(draw, json_copy(line.obj), vocab)
        if (
            broken is not None
            and vocab.misfit(broken["type"], vocab.normalize(broken["type"], broken)) is not None
            and vocab.archived_shape(broken["type"], broken) is None
        ):
            line.obj = broken
            line.marks.add(mark)
            return
    # nothing in the run can be broken this way: add a known event and break that
    for tag in ("tool_start", "text", *sorted(vocab.known)):
        if tag not in vocab.known:
            continue
        fresh = dict(draw(strategies_for(vocab).for_type(tag)))
        broken = breaker(draw, fresh, vocab)
        if (
            broken is not None
            and vocab.misfit(tag, vocab.normalize(tag, broken)) is not None
            and vocab.archived_shape(tag, broken) is None
        ):
            insert_at(draw, stream, Line(broken, marks={mark}))
            return
    raise AssertionError(f"{mark}: no known type of {vocab.ident} can be broken this way")


def _missing(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    fields = required_fields(vocab, event["type"])
    if not fields:
        return None
    name = choose(draw, fields)
    event.pop(name, None)
    alias = vocab.aliases.get(event["type"])
    if alias is not None and name == alias.field:
        event.pop(alias.legacy, None)
    return event


def _wrong_type(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    options: list[tuple[str, Any]] = []
    for name in required_fields(vocab, tag):
        types = field_types(vocab, tag, name)
        if types:
            bad = [
                v
                for t in types
                for v in WRONG_VALUES.get(t, ())
                if json_type_name(v) not in types
                and not (json_type_name(v) == "integer" and "number" in types)
            ]
            options.extend((name, v) for v in bad)
    if not options:
        return None
    name, value = choose(draw, options)
    event[name] = json_copy(value)
    return event


def _null(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    fields = [
        f
        for f in required_fields(vocab, tag)
        if "null" not in (field_types(vocab, tag, f) or ["null"])
    ]
    if not fields:
        return None
    event[choose(draw, fields)] = None
    return event


def _wrong_nesting(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    objects = [
        f
        for f in required_fields(vocab, tag)
        if field_types(vocab, tag, f) == ["object"] and isinstance(event.get(f), dict)
    ]
    if not objects:
        return None
    name = choose(draw, objects)
    inner = event[name]
    choice = between(draw, 0, 2)
    if choice == 0:
        event[name] = [inner]  # wrapped one level too deep
    elif choice == 1:
        event[name] = encode(inner).decode()  # serialized twice: a string
    else:
        event.update(inner)  # flattened one level too shallow
        del event[name]
    return event


def breakable(vocab: Vocabulary, test: Callable[[list[str] | None], bool]) -> bool:
    """Some known type has a required field whose declared types pass ``test``."""
    return any(
        test(field_types(vocab, tag, name))
        for tag in vocab.known
        for name in required_fields(vocab, tag)
    )


def _breaker(fn: Callable[[st.DrawFn, Event, Vocabulary], Event | None], mark: str) -> Apply:
    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        _break_event(draw, stream, vocab, mark, fn)

    return apply


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
BODY_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "bad-body-missing-field",
        "R4",
        "a known event missing a required field",
        _breaker(_missing, "bad-body-missing-field"),
    ),
    Mutation(
        "bad-body-wrong-type",
        "R4",
        "a required field of the wrong JSON type",
        _breaker(_wrong_type, "bad-body-wrong-type"),
    ),
    Mutation(
        "bad-body-null",
        "R4",
        "null in a required field that does not allow it",
        _breaker(_null, "bad-body-null"),
    ),
    Mutation(
        "bad-body-wrong-nesting",
        "R4",
        "a nested object wrapped, stringified or flattened",
        _breaker(_wrong_nesting, "bad-body-wrong-nesting"),
    ),
)
