"""Mutations of the fields of known events: fields a client must ignore (rule R5), and the
legacy spellings of renamed fields it must still read (the aliases).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.alphabets import PAYLOAD_TEXT
from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose
from stella_conform.generators.events import strategies_for, tool_start
from stella_conform.generators.mutations.stream import Line, Mutation, Stream, insert_at, pick_known
from stella_conform.schemas.tagged_unions import union_nodes
from stella_conform.schemas.vocabulary import Vocabulary

_EXTRA_NAMES = ("confidence", "lang", "trace_id", "x_vendor", "_meta", "v2")


def _extra_value(c: Content) -> Any:
    """An unknown field's value: null (the simplest), a boolean, a small integer, a short
    string, a nested object or an empty list."""
    kind = c.count(0, 5)
    if kind == 0:
        return None
    if kind == 1:
        return c.chance()
    if kind == 2:
        return c.count(-5, 5)
    if kind == 3:
        return c.chars(PAYLOAD_TEXT, 0, 5)
    # fresh objects per call: a shared one would carry one case's mutations into the
    # next, and a nested mutation could put it inside itself (a cycle json cannot write)
    if kind == 4:
        return {"nested": {"deep": [1, 2, {"k": "v"}]}}
    return []


def extra_fields(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = pick_known(draw, stream, vocab)
    if line is None:
        return
    c = Content(draw(SEEDS))
    for name in c.sample(_EXTRA_NAMES, c.count(1, 3)):
        line.obj.setdefault(name, _extra_value(c))
    line.marks.add("extra-fields")


def _nested_objects(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if depth > 0:
            found.append(value)
        for child in value.values():
            found.extend(_nested_objects(child, depth + 1))
    elif isinstance(value, list):
        for child in value:
            found.extend(_nested_objects(child, depth + 1))
    return found


def extra_fields_nested(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    indexes = [i for i in stream.event_indexes(vocab) if _nested_objects(stream.lines[i].obj)]
    if indexes:
        line = stream.lines[choose(draw, indexes)]
    else:  # nothing nested in this run: add a tool_start, whose call is an object
        line = Line(dict(draw(tool_start(call_id="call_98"))))
        insert_at(draw, stream, line, not_last=True)
    unions = {id(node) for node in union_nodes(vocab, line.obj["type"], line.obj)}
    targets = [t for t in _nested_objects(line.obj) if id(t) not in unions]
    if not targets:  # only a wrapper is nested: step inside its arm
        targets = [v for t in _nested_objects(line.obj) for v in t.values() if isinstance(v, dict)]
    if not targets:
        return
    target = targets[between(draw, 0, len(targets) - 1)]
    c = Content(draw(SEEDS))
    target.setdefault(c.pick(_EXTRA_NAMES), _extra_value(c))
    line.marks.add("extra-fields-nested")


def extra_key_beside_arm(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A key beside the single key of a tagged union (``{"ok": {...}, "x": 1}``)."""
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        nodes = union_nodes(vocab, line.obj["type"], line.obj)
        if nodes:
            c = Content(draw(SEEDS))
            c.pick(nodes).setdefault(c.pick(_EXTRA_NAMES), _extra_value(c))
            line.marks.add("extra-key-beside-arm")
            return
    if "tool_result" not in vocab.known:
        return
    c = Content(draw(SEEDS))
    result = {
        "type": "tool_result",
        "call_id": "call_97",
        "output": {"ok": {"content": ""}, c.pick(_EXTRA_NAMES): _extra_value(c)},
        "duration_ms": 1,
    }
    insert_at(draw, stream, Line(result, marks={"extra-key-beside-arm"}))


def extra_fields_borrowed(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = pick_known(draw, stream, vocab)
    if line is None:
        return
    tag = line.obj["type"]
    own = set(vocab.members[tag].get("properties", {}))
    alias = vocab.aliases.get(tag)
    if alias is not None:
        own |= {alias.field, alias.legacy}
    # any type this stella writes lends its fields, known to the client or not: a client
    # that knows one type still has fields of others to ignore
    donors = sorted(t for t in vocab.written if t != tag)
    donor = dict(draw(strategies_for(vocab).for_type(choose(draw, donors))))
    borrowed = [k for k in donor if k not in own and k not in ("type", "ts")]
    for name in borrowed[: between(draw, 1, 3)]:
        line.obj[name] = donor[name]
    line.marks.add("extra-fields-borrowed")


def extra_field_huge(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = pick_known(draw, stream, vocab)
    if line is None:
        return
    line.obj["attachment"] = "x" * (65 * 1024 + between(draw, 0, 64))
    line.marks.add("extra-field-huge")


def legacy_alias(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    # a line still in the self-describing spelling (a recorded run may have legacy ones)
    indexes = [
        i
        for i in stream.event_indexes(vocab)
        if stream.lines[i].obj["type"] in vocab.aliases
        and vocab.aliases[stream.lines[i].obj["type"]].field in stream.lines[i].obj
    ]
    if not indexes:
        tag = choose(draw, sorted(vocab.aliases)) if vocab.aliases else None
        if tag is None:
            return
        line = Line(dict(draw(strategies_for(vocab).for_type(tag))))
        insert_at(draw, stream, line, not_last=True)
    else:
        line = stream.lines[choose(draw, indexes)]
    alias = vocab.aliases[line.obj["type"]]
    line.obj[alias.legacy] = line.obj.pop(alias.field)  # legacy spelling only
    line.marks.add("legacy-alias")


def field_and_alias(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A field beside its legacy alias (reading A: the self-describing one wins; B: an error)."""
    tag = choose(draw, sorted(vocab.aliases)) if vocab.aliases else None
    if tag is None:
        return
    line = Line(dict(draw(strategies_for(vocab).for_type(tag))), marks={"field-and-alias"})
    line.obj[vocab.aliases[tag].legacy] = "IGNORED: the self-describing name wins"
    insert_at(draw, stream, line)


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
FIELD_MUTATIONS: tuple[Mutation, ...] = (
    Mutation("extra-fields", "R5", "unknown top-level fields on a known event", extra_fields),
    Mutation(
        "extra-fields-nested",
        "R5",
        "an unknown field inside a nested object of a known event",
        extra_fields_nested,
    ),
    Mutation(
        "extra-fields-borrowed",
        "R5",
        "fields borrowed from other known types",
        extra_fields_borrowed,
    ),
    Mutation(
        "extra-field-huge",
        "R5",
        "an unknown field with a value over 64 KiB on a known event",
        extra_field_huge,
    ),
    Mutation(
        "legacy-alias",
        "aliases",
        "a legacy field spelling in place of the self-describing one",
        legacy_alias,
    ),
    Mutation(
        "field-and-alias",
        "aliases",
        "a field beside its legacy alias on one line",
        field_and_alias,
        reading="field-and-alias",
    ),
    Mutation(
        "extra-key-beside-arm",
        "R5",
        "a key beside the single key of a tagged union",
        extra_key_beside_arm,
        reading="extra-key-beside-arm",
    ),
)
