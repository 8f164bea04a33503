"""Mutations that spell a known event's value in a form serde reads and the wire schema's
keywords do not describe: a struct as a JSON array (``"call":["c1","read",{}]``), an
internally tagged enum as an array led by its tag, a unit variant as a one-key map
(``"scope":{"run":null}``). The contract reads each two ways (the registered point
``serde-forms``): reading A rejects the line, reading B (stella, through serde) reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.engine.picks import choose
from stella_conform.generators.events import tool_start
from stella_conform.generators.mutations.stream import Line, Mutation, Stream, insert_at
from stella_conform.oracle.serde_forms import branches, resolve, tag_of, unit_names
from stella_conform.schemas.vocabulary import Vocabulary

#: A place in a body and the serde spelling its value can take there.
Respelling = tuple[dict[str, Any], str, Any]


def _as_array(value: dict[str, Any], node: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """``value`` (a struct, or a variant of an internally tagged enum) as the array serde
    reads it from, or ``None`` when its keys are not the leading fields of its schema (an
    array cannot skip a field, nor carry one the schema does not name)."""
    variants = [b for b in branches(node, root) if b.get("properties")]
    tag = tag_of(variants)
    if tag is not None:
        for branch in variants:
            if (branch["properties"].get(tag) or {}).get("const") == value.get(tag):
                names = [str(n) for n in branch["properties"] if n != tag]
                rest = [k for k in value if k != tag]
                if set(rest) == set(names[: len(rest)]):
                    return [value[tag], *(value[n] for n in names[: len(rest)])]
        return None
    props = node.get("properties")
    if not isinstance(props, Mapping) or not value or node.get("type") not in ("object", None):
        return None
    names = [str(n) for n in props]
    if set(value) != set(names[: len(value)]):
        return None
    return [value[n] for n in names[: len(value)]]


def respellings(
    value: Any, schema: Any, root: Mapping[str, Any], depth: int = 0
) -> list[Respelling]:
    """Every field inside ``value`` (an event's body) whose value serde also reads in
    another form: ``(the object holding it, its key, that form)``."""
    node = resolve(schema, root)
    found: list[Respelling] = []
    if not node or depth > 16 or not isinstance(value, dict):
        return found
    props: dict[str, Any] = dict(node.get("properties") or {})
    for branch in branches(node, root):
        for name, sub in (branch.get("properties") or {}).items():
            props.setdefault(str(name), sub)
    for name, sub in props.items():
        if (name in ("type", "ts") and depth == 0) or name not in value:
            continue
        child, inner = value[name], resolve(sub, root)
        if isinstance(child, str) and child in unit_names(inner, root):
            found.append((value, name, {child: None}))
        elif isinstance(child, dict):
            form = _as_array(child, inner, root)
            if form is not None:
                found.append((value, name, form))
            found.extend(respellings(child, inner, root, depth + 1))
    return found


def serde_forms(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """One value of a known event in serde's other form (an array, a one-key map)."""
    places: list[tuple[Line, Respelling]] = []
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        home = vocab.home(line.obj["type"])
        schema = home.members.get(line.obj["type"])
        if schema is not None:
            places.extend((line, r) for r in respellings(line.obj, schema, home.root))
    if places:
        line, (holder, key, form) = places[choose(draw, list(range(len(places))))]
        holder[key] = form
        line.marks.add("serde-forms")
        return
    if "tool_start" not in vocab.known:
        return
    event = dict(draw(tool_start(call_id="call_96")))
    home = vocab.home("tool_start")
    arrays = [
        (holder, key, form)
        for holder, key, form in respellings(event, home.members["tool_start"], home.root)
        if key == "call" and isinstance(form, list)
    ]
    if arrays:  # the call as an array, its fields in the schema's order
        holder, key, form = arrays[0]
        holder[key] = form
        insert_at(draw, stream, Line(event, marks={"serde-forms"}), not_last=True)


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
SERDE_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "serde-forms",
        "R4",
        "a struct of a known event written as an array, or a unit variant as a one-key map "
        "(forms serde reads and the wire schema does not describe)",
        serde_forms,
        reading="serde-forms",
    ),
)
