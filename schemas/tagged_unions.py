"""Tagged-union objects in a vocabulary: ``{"ok": {...}}`` or ``{"error": {...}}``.

serde writes an externally tagged enum as an object with exactly one key, the
arm's name; the wire schema closes such wrappers (``additionalProperties:
false``) and stella's reader refuses a key beside the arm.  Rule 5 says
unknown fields of *events* are ignored.  Whether a key beside the arm is an
unknown field or a broken wrapper is a registered point of the contract
(``extra-key-beside-arm``); this module finds the wrappers in a schema and the
keys beside their arm in a body.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from stella_conform.schemas.fit import UnsupportedSchema, resolve_ref
from stella_conform.schemas.vocabulary import Vocabulary

#: A wrapper's place in a body (``*`` steps into every array item) and its arm names.
Wrapper = tuple[tuple[str, ...], frozenset[str]]


def _deref(root: Mapping[str, Any], schema: Any) -> Any:
    seen = 0
    while isinstance(schema, Mapping) and "$ref" in schema and seen < 16:
        try:
            schema = resolve_ref(root, schema["$ref"])
        except UnsupportedSchema:
            return None
        seen += 1
    return schema


def _arm(root: Mapping[str, Any], branch: Any) -> str | None:
    """The single key a union branch is made of, or None when it is not a one-key wrapper."""
    branch = _deref(root, branch)
    if not isinstance(branch, Mapping):
        return None
    props, required = branch.get("properties"), branch.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return None
    if len(props) == 1 and required == list(props):
        return str(required[0])
    return None


def _find(
    root: Mapping[str, Any], schema: Any, path: tuple[str, ...], out: list[Wrapper], depth: int
) -> None:
    schema = _deref(root, schema)
    if not isinstance(schema, Mapping) or depth > 8:
        return
    branches = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(branches, list) and branches:
        arms = [_arm(root, b) for b in branches]
        if all(a is not None for a in arms):
            out.append((path, frozenset(str(a) for a in arms)))
            for branch in branches:
                inner = _deref(root, branch)
                for key, sub in inner.get("properties", {}).items():
                    _find(root, sub, (*path, key), out, depth + 1)
            return
        for branch in branches:
            _find(root, branch, path, out, depth + 1)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            if key != "type" or path:
                _find(root, sub, (*path, key), out, depth + 1)
    if "items" in schema:
        _find(root, schema["items"], (*path, "*"), out, depth + 1)


@cache
def wrappers(vocab: Vocabulary, tag: str) -> tuple[Wrapper, ...]:
    """Every tagged-union wrapper inside a known type's body."""
    out: list[Wrapper] = []
    member = vocab.members.get(tag)
    if member is not None:
        _find(vocab.root, member, (), out, 0)
    return tuple(out)


def _at(value: Any, path: tuple[str, ...]) -> list[Any]:
    found = [value]
    for step in path:
        nxt: list[Any] = []
        for item in found:
            if step == "*" and isinstance(item, list):
                nxt.extend(item)
            elif isinstance(item, dict) and step in item:
                nxt.append(item[step])
        found = nxt
    return found


def beside_arm(vocab: Vocabulary, tag: str, body: Mapping[str, Any]) -> str | None:
    """Why ``body`` has a key beside a wrapper's arm, or None when it has none."""
    for path, arms in wrappers(vocab, tag):
        for node in _at(body, path):
            if isinstance(node, dict) and len(node) > 1 and any(k in arms for k in node):
                where = ".".join(path) or "the event"
                extra = sorted(k for k in node if k not in arms)
                if extra:
                    return f"{where} has {extra[0]!r} beside its arm"
                # two arms at once: each is a key beside the other (the schema's oneOf
                # matches both, and stella refuses it); reading A reads the first arm
                both = [k for k in node if k in arms]
                return f"{where} has two arms, {both[0]!r} and {both[1]!r}"
    return None


def union_nodes(vocab: Vocabulary, tag: str, body: Any) -> list[dict[str, Any]]:
    """The wrapper objects present in a body (for generators that must avoid or target them)."""
    return [
        node
        for path, arms in wrappers(vocab, tag)
        for node in _at(body, path)
        if isinstance(node, dict) and any(k in arms for k in node)
    ]
