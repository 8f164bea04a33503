"""The other JSON forms serde reads a value in: a struct written as an array, a unit
variant written as a one-key map.

serde's derived ``Deserialize`` reads a struct from a JSON array as well as an object
(its fields in declaration order: ``"call":["c1","read",{}]`` is the tool call
``{"call_id":"c1","name":"read","input":{}}``), an internally tagged enum from an array
whose first element is the tag (``["unit", ...]``), and a unit variant of an enum from a
one-key map whose value is ``null`` (``"scope":{"run":null}`` is ``"run"``). A wire
schema's keywords describe none of these forms, and stella, reading through serde,
accepts them: whether a line that fits only so is an error is a registered point
(``serde-forms``, docs/contract-readings.md).

:func:`serde_read` rewrites such a value into the form the schema describes, walking the
schema beside it; the decoder then asks whether the rewritten body fits. A struct's
declaration order is its schema's ``properties`` order, unless they are sorted by name (as
schemars writes them without ``preserve_order``): then any order whose types fit is read.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

#: How deep the walk follows a body: no stella body nests deeper where a schema describes
#: it (an ``input`` is any JSON and is not walked).
_MAX_DEPTH = 32
#: The most fields of a struct whose schema lists them sorted by name (so not in their
#: declaration order) that are tried in every order.
_MAX_UNORDERED = 5


def resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = str(schema["$ref"])
        if not ref.startswith("#/$defs/"):
            return {}
        schema = (root.get("$defs") or {}).get(ref[len("#/$defs/") :], {})
        seen += 1
    return schema if isinstance(schema, Mapping) else {}


def branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key) or []:
            out.append(resolve(branch, root))
    return out


def unit_names(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    """The string values of an enum of unit variants (``enum`` or ``oneOf`` of consts)."""
    names = {v for v in schema.get("enum") or [] if isinstance(v, str)}
    for branch in branches(schema, root):
        if isinstance(branch.get("const"), str):
            names.add(branch["const"])
        names.update(v for v in branch.get("enum") or [] if isinstance(v, str))
    return names


def tag_of(variants: list[Mapping[str, Any]]) -> str | None:
    """The property every branch of an internally tagged enum holds as its const tag."""
    common: set[str] | None = None
    for branch in variants:
        props = branch.get("properties") or {}
        tags = {
            str(name)
            for name, sub in props.items()
            if isinstance(sub, Mapping) and isinstance(sub.get("const"), str)
        }
        common = tags if common is None else common & tags
    return sorted(common)[0] if common and len(variants) > 1 else None


def _from_array(value: list[Any], schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """A struct (or an internally tagged enum's variant) written as an array, as the
    object it stands for; ``value`` itself when it stands for none."""
    variants = [b for b in branches(schema, root) if b.get("properties")]
    tag = tag_of(variants)
    if tag is not None:
        if not value or not isinstance(value[0], str):
            return value
        for branch in variants:
            if (branch["properties"].get(tag) or {}).get("const") == value[0]:
                names = [str(n) for n in branch["properties"] if n != tag]
                if len(value) - 1 > len(names):
                    return value
                return {tag: value[0], **dict(zip(names, value[1:], strict=False))}
        return value
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props or schema.get("type") not in ("object", None):
        return value
    names = [str(n) for n in props]
    if len(value) > len(names):
        return value  # serde: "trailing characters" (an invalid length)
    if names == sorted(names) and 1 < len(names) <= _MAX_UNORDERED:
        # sorted by name, as schemars writes a struct without preserve_order: the
        # declaration order is not in the schema, so any order whose types fit is read
        for order in itertools.permutations(names, len(value)):
            if all(_type_fits(v, props[n], root) for n, v in zip(order, value, strict=True)):
                return dict(zip(order, value, strict=True))
        return value
    return dict(zip(names, value, strict=False))


def _type_fits(value: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    """Whether ``value``'s JSON type is one ``schema`` states (any, where it states none)."""
    node = resolve(schema, root)
    kinds = node.get("type")
    if kinds is None:
        listed = node.get("enum")
        if isinstance(listed, list):
            return value in listed
        return True
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    return any(_is(value, str(k)) for k in names)


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    python = {"string": str, "boolean": bool, "object": dict, "array": list}.get(kind)
    return value is None if kind == "null" else python is not None and isinstance(value, python)


def serde_read(value: Any, schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """``value`` with every struct written as an array and every unit variant written as a
    one-key map rewritten as the schema describes them; ``value`` itself (the same object)
    when it holds none."""
    node = resolve(schema, root)
    if not node or depth > _MAX_DEPTH:
        return value
    if isinstance(value, list):
        rebuilt = _from_array(value, node, root)
        if rebuilt is not value:
            return serde_read(rebuilt, node, root, depth + 1)
        items = node.get("items")
        if isinstance(items, Mapping):
            read = [serde_read(v, items, root, depth + 1) for v in value]
            if any(a is not b for a, b in zip(read, value, strict=True)):
                return read
        return value
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((name, inner),) = value.items()
        if inner is None and name in unit_names(node, root):
            return name  # a unit variant as {"run": null}
    props: dict[str, Any] = dict(node.get("properties") or {})
    for branch in branches(node, root):
        for name, sub in (branch.get("properties") or {}).items():
            props.setdefault(str(name), sub)
    changed = False
    out = dict(value)
    for name, sub in props.items():
        if name in value:
            read = serde_read(value[name], sub, root, depth + 1)
            if read is not value[name]:
                out[name], changed = read, True
    if not props:
        for branch in branches(node, root):  # an Option's non-null branch, say
            read = serde_read(value, branch, root, depth + 1)
            if read is not value:
                return read
    return out if changed else value


def serde_body(body: dict[str, Any], schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """An event's body read as serde reads its fields (the event itself is an object: its
    ``type`` is the tag the line is dispatched on); ``body`` itself when nothing changes."""
    return serde_read(body, schema, root)


def reaches(schema: Any, root: Mapping[str, Any], where: str) -> bool:
    """Whether ``schema`` refers, through its ``$ref``s, to ``$defs[where]``."""
    import json
    import re

    defs = root.get("$defs") or {}
    seen: set[str] = set()
    todo = [json.dumps(schema)]
    while todo:
        text = todo.pop()
        for ref in re.findall(r'"#/\$defs/([^"]+)"', text):
            if ref == where:
                return True
            if ref not in seen and ref in defs:
                seen.add(ref)
                todo.append(json.dumps(defs[ref]))
    return False
