"""Constraints a wire schema states only in prose, as checks the kit can run.

A JSON Schema ``description`` sometimes says more than the schema's keywords:
in ``CheckMechanism`` "any other name is a contributed mechanism and MUST carry
`judge`". A validator never sees it, stella's reader enforces it, and a
generator that reads only the keywords writes bodies stella refuses.  Each
:class:`ProseConstraint` names the ``$defs`` entry it belongs to, the words that
state it (it applies only to a schema that says them), and the check.

Whether a body breaking one is an error is itself a registered point of the
contract (``prose-constraint``, docs/contract-readings.md): the schema's words
say MUST (reading A, an error), its keywords allow it (reading B).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from stella_conform.schemas.fit import UnsupportedSchema, resolve_ref
from stella_conform.schemas.vocabulary import Vocabulary

#: (the $defs entry, in the schema) -> why a value breaks it, or None.
Check = Callable[[Mapping[str, Any], Any], "str | None"]


def _builtin_names(definition: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(
        str(e["name"])
        for e in definition.get("examples", [])
        if isinstance(e, Mapping) and "name" in e
    )


def _contributed_carries_judge(definition: Mapping[str, Any], value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None  # the keywords' business
    if value["name"] in _builtin_names(definition) or "judge" in value:
        return None
    return f"check mechanism {value['name']!r} is contributed (not built in) and carries no judge"


def _read_only_carries_no_checks(definition: Mapping[str, Any], value: Any) -> str | None:
    if not isinstance(value, dict) or value.get("kind") != "read_only" or "checks" not in value:
        return None
    return "a read_only task contract carries checks, and the schema says it carries none"


@dataclass(frozen=True)
class ProseConstraint:
    definition: str
    #: Words of the definition's description that state the constraint.
    words: str
    check: Check


CONSTRAINTS: tuple[ProseConstraint, ...] = (
    ProseConstraint("CheckMechanism", "MUST carry `judge`", _contributed_carries_judge),
    # its read_only branch's description: "it carries no checks", in a schema whose keywords
    # let a `checks` key ride along as an unknown field (and stella refuses it)
    ProseConstraint("TaskContract", "it carries no checks", _read_only_carries_no_checks),
)

#: Where a constrained definition sits inside a body (``*``: every item or map value).
Site = tuple[tuple[str, ...], ProseConstraint, Mapping[str, Any]]


def _walk(
    root: Mapping[str, Any],
    schema: Any,
    path: tuple[str, ...],
    targets: Mapping[str, ProseConstraint],
    out: list[Site],
    seen: frozenset[str],
) -> None:
    if not isinstance(schema, Mapping) or len(path) > 12:
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if ref in seen:
            return
        try:
            target = resolve_ref(root, ref)
        except UnsupportedSchema:
            return
        if name in targets and isinstance(target, Mapping):
            out.append((path, targets[name], target))
        _walk(root, target, path, targets, out, seen | {ref})
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []) if isinstance(schema.get(key), list) else []:
            _walk(root, branch, path, targets, out, seen)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            _walk(root, sub, (*path, key), targets, out, seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            _walk(root, schema[key], (*path, "*"), targets, out, seen)


@cache
def sites(vocab: Vocabulary, tag: str) -> tuple[Site, ...]:
    """Where the constraints the vocabulary's schema states apply inside a ``tag`` body."""
    defs = vocab.root.get("$defs", {})
    targets = {
        c.definition: c
        for c in CONSTRAINTS
        if isinstance(defs.get(c.definition), Mapping)
        and c.words in " ".join(_descriptions(defs[c.definition]))
    }
    member = vocab.members.get(tag)
    if not targets or member is None:
        return ()
    out: list[Site] = []
    _walk(vocab.root, member, (), targets, out, frozenset())
    unique: dict[tuple[tuple[str, ...], str], Site] = {}
    for site in out:
        unique.setdefault((site[0], site[1].definition), site)
    return tuple(unique.values())


def _descriptions(definition: Mapping[str, Any]) -> list[str]:
    """The definition's description and its branches' (a oneOf states per branch), each
    with its line breaks read as spaces."""
    found = [definition.get("description")]
    for key in ("oneOf", "anyOf"):
        branches = definition.get(key)
        if isinstance(branches, list):
            found += [b.get("description") for b in branches if isinstance(b, Mapping)]
    return [" ".join(str(d).split()) for d in found if isinstance(d, str)]


def _at(value: Any, path: tuple[str, ...]) -> list[Any]:
    found = [value]
    for step in path:
        nxt: list[Any] = []
        for item in found:
            if step == "*":
                if isinstance(item, list):
                    nxt.extend(item)
                elif isinstance(item, dict):
                    nxt.extend(item.values())
            elif isinstance(item, dict) and step in item:
                nxt.append(item[step])
        found = nxt
    return found


def violation(vocab: Vocabulary, tag: str, body: Any) -> str | None:
    """Why ``body`` breaks a constraint its schema states in prose, or None."""
    for path, constraint, definition in sites(vocab, tag):
        for node in _at(body, path):
            why = constraint.check(definition, node)
            if why is not None:
                where = ".".join(path) or "the event"
                return f"{where}: {why} (the schema's {constraint.definition} says so in prose)"
    return None


@cache
def constrained_tags(vocab: Vocabulary) -> frozenset[str]:
    """Known types whose bodies hold a prose-only constraint (empty for most vocabularies)."""
    return frozenset(t for t in vocab.members if sites(vocab, t))


def _repair_mechanism(definition: Mapping[str, Any], value: Any) -> None:
    builtins = sorted(_builtin_names(definition))
    if builtins and isinstance(value, dict):
        value["name"] = builtins[0]


def _repair_read_only(definition: Mapping[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        value.pop("checks", None)


#: How a generator mends a value that breaks a constraint (per definition).
REPAIRS: Mapping[str, Callable[[Mapping[str, Any], Any], None]] = {
    "CheckMechanism": _repair_mechanism,
    "TaskContract": _repair_read_only,
}


def repair(vocab: Vocabulary, tag: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every prose-only constraint met (generators of valid events use it)."""
    for path, constraint, definition in sites(vocab, tag):
        for node in _at(body, path):
            if constraint.check(definition, node) is not None:
                REPAIRS[constraint.definition](definition, node)
    return body
