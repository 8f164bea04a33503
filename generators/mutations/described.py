"""Mutations of what a wire schema says only in its descriptions (``schemas/learnt.py``):
a value an enum does not list, which it reads as ``other``; a field beside the old name
the descriptions give it (``"verifier"`` and ``"judge"`` in one object); an event type
under its old name (``judge_verdict``). Each is read two ways (``learnt-alias``,
``field-and-alias``), and each applies only to a vocabulary that learnt such a thing
(a stella release's wire schema): the kit's own vocabulary names none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.engine.picks import choose
from stella_conform.generators.events import strategies_for
from stella_conform.generators.mutations.stream import (
    Line,
    Mutation,
    Stream,
    insert_at,
    json_copy,
)
from stella_conform.generators.schema_driven import SchemaStrategies
from stella_conform.oracle.serde_forms import branches, reaches, resolve
from stella_conform.schemas.vocabulary import Vocabulary

#: A token no enum of stella's lists: a kind from a newer stella.
NEWER_TOKEN = "kind_from_a_newer_stella"


def _open_enums(vocab: Vocabulary) -> list[str]:
    return [a.where for a in vocab.learnt if a.kind == "other"]


def _field_pairs(vocab: Vocabulary) -> list[tuple[str, str]]:
    return [(a.name, a.legacy) for a in vocab.learnt if a.kind == "field"]


def _enum_places(
    value: Any, schema: Any, root: Mapping[str, Any], enums: list[Mapping[str, Any]], depth: int = 0
) -> list[tuple[Any, Any]]:
    """``(holder, key)`` of every string in ``value`` whose schema is one of ``enums``."""
    node = resolve(schema, root)
    found: list[tuple[Any, Any]] = []
    if not node or depth > 16:
        return found
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for index, item in enumerate(value):
            if isinstance(item, str) and any(resolve(node["items"], root) is e for e in enums):
                found.append((value, index))
            found.extend(_enum_places(item, node["items"], root, enums, depth + 1))
        return found
    if not isinstance(value, dict):
        return found
    props: dict[str, Any] = dict(node.get("properties") or {})
    for branch in branches(node, root):
        for name, sub in (branch.get("properties") or {}).items():
            props.setdefault(str(name), sub)
    for name, sub in props.items():
        if name not in value:
            continue
        if isinstance(value[name], str) and any(resolve(sub, root) is e for e in enums):
            found.append((value, name))
        found.extend(_enum_places(value[name], sub, root, enums, depth + 1))
    return found


def _drawn(draw: st.DrawFn, vocab: Vocabulary, tags: list[str]) -> list[dict[str, Any]]:
    """One drawn event of each of ``tags`` the client knows."""
    made = strategies_for(vocab)
    return [dict(draw(made.for_type(tag))) for tag in tags if tag in vocab.known]


def value_read_as_other(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A value of an enum that reads what it does not list as ``other``, replaced by a
    token it does not list (reading A: read as ``other``; B, the keywords: an error)."""
    root = vocab.root
    enums = [root["$defs"][where] for where in _open_enums(vocab) if where in root["$defs"]]
    if not enums:
        return
    lines = [stream.lines[i] for i in stream.event_indexes(vocab)]
    holders = sorted(vocab.known & frozenset(vocab.members))
    for event in [line.obj for line in lines] + _drawn(draw, vocab, holders):
        places = _enum_places(event, vocab.members[event["type"]], root, enums)
        if places:
            holder, key = places[choose(draw, list(range(len(places))))]
            holder[key] = NEWER_TOKEN
            line = next((x for x in lines if x.obj is event), None)
            if line is None:
                line = Line(event)
                insert_at(draw, stream, line, not_last=True)
            line.marks.add("value-read-as-other")
            return


def _objects_at(
    value: Any, schema: Any, root: Mapping[str, Any], target: Mapping[str, Any], depth: int = 0
) -> list[dict[str, Any]]:
    """The objects in ``value`` whose schema is ``target`` (a ``$defs`` entry)."""
    node = resolve(schema, root)
    found: list[dict[str, Any]] = []
    if not node or depth > 16:
        return found
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for item in value:
            found.extend(_objects_at(item, node["items"], root, target, depth + 1))
        return found
    if not isinstance(value, dict):
        return found
    if node is target:
        found.append(value)
    props: dict[str, Any] = dict(node.get("properties") or {})
    for branch in branches(node, root):
        for name, sub in (branch.get("properties") or {}).items():
            props.setdefault(str(name), sub)
    for name, sub in props.items():
        if name in value:
            found.extend(_objects_at(value[name], sub, root, target, depth + 1))
    return found


def _field_schema(node: Mapping[str, Any], root: Mapping[str, Any], name: str) -> Any:
    for obj in [node, *branches(node, root)]:
        sub = (obj.get("properties") or {}).get(name)
        if sub is not None:
            return sub
    return None


def field_beside_learnt_alias(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A field and the old name the schema's descriptions give it, both in one object
    (reading A: the line is read; B, serde's "duplicate field": an error)."""
    fields = [a for a in vocab.learnt if a.kind == "field" and a.where in vocab.root["$defs"]]
    if not fields:
        return
    alias = fields[choose(draw, list(range(len(fields))))]
    root = vocab.root
    target = root["$defs"][alias.where]
    lines = [stream.lines[i] for i in stream.event_indexes(vocab)]
    known = vocab.known & frozenset(vocab.members)
    holders = sorted(t for t in known if reaches(vocab.members[t], root, alias.where))
    for event in [line.obj for line in lines] + _drawn(draw, vocab, holders):
        places = _objects_at(event, vocab.members[event["type"]], root, target)
        if not places:
            continue
        holder = places[0]
        if alias.name not in holder:  # give it the field, drawn from its own schema
            sub = _field_schema(target, root, alias.name)
            if sub is None:
                continue
            holder[alias.name] = draw(SchemaStrategies(root).build(sub))
        holder[alias.legacy] = json_copy(holder[alias.name])
        line = next((x for x in lines if x.obj is event), None)
        if line is None:
            line = Line(event)
            insert_at(draw, stream, line, not_last=True)
        line.marks.add("field-beside-learnt-alias")
        return


def old_type_name(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """An event of a type under the old name the schema's descriptions keep for it
    (reading A: read as today's type; B, the keywords: an unrecognized type)."""
    renames = sorted((old, new) for old, new in vocab.type_aliases.items() if new in vocab.known)
    if not renames:
        return
    old, new = renames[choose(draw, list(range(len(renames))))]
    event = dict(draw(strategies_for(vocab).for_type(new)))
    event["type"] = old
    insert_at(draw, stream, Line(event, marks={"old-type-name"}), not_last=True)


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
DESCRIBED_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "value-read-as-other",
        "R4",
        "a value an enum does not list, where its description says it reads as 'other'",
        value_read_as_other,
        reading="learnt-alias",
    ),
    Mutation(
        "field-beside-learnt-alias",
        "aliases",
        "a field beside the old name the schema's descriptions give it, in one object",
        field_beside_learnt_alias,
        reading="field-and-alias",
    ),
    Mutation(
        "old-type-name",
        "aliases",
        "an event type under the old name the schema's descriptions keep for it",
        old_type_name,
        reading="learnt-alias",
    ),
)


def described_applicable(mutation_id: str, vocab: Vocabulary) -> bool:
    """Whether the vocabulary learnt what the mutation needs (none of it: the kit's own)."""
    if mutation_id == "value-read-as-other":
        return bool(_open_enums(vocab))
    if mutation_id == "field-beside-learnt-alias":
        return bool(_field_pairs(vocab))
    if mutation_id == "old-type-name":
        return any(new in vocab.known for new in vocab.type_aliases.values())
    return True
