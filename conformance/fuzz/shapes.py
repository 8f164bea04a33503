"""The shape of a stream as the fuzzer sees it: which kinds of line follow which.

Coverage from the client tells the fuzzer which code an input reached; not every
client can give it (a compiled one, or a run with ``--no-feedback``).  The fuzzer
always knows its own input, though, and a stream reader is a machine driven by the
sequence of lines it is fed.  So every input also yields *shape features*: the kind
of each line, and each pair of kinds that follow one another (coverage of the input
structure, "k-paths" with k = 2).  An input whose stream puts two kinds of line side
by side for the first time is kept and mutated further, as an input that reached new
code in the client is.

A line's kind is its type and how it spells what its type requires, one level deep:
a ``tool_result`` whose output is an ``error`` and one whose output is ``ok`` differ,
as do a ``text`` with the self-describing field and one with the legacy spelling.
Field names the contract does not define count as one ``+`` (their random names would
make every input new), unknown types as ``unknown``.  Optional fields (``ts`` among
them) are left out: their combinations would make most kinds, and so most pairs,
new without changing which kind of line a reader is dealing with, and a corpus full
of such inputs buries the few that put two rare kinds side by side.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from stella_conform.schemas.vocabulary import Vocabulary

#: How many kinds of line, one after another, make one feature (1 and 2).
WIDTH = 2


@lru_cache(maxsize=8)
def _field_names(vocab: Vocabulary) -> frozenset[str]:
    """Every property name the wire schema defines, at any depth, and the legacy spellings."""
    names: set[str] = set()
    stack: list[Any] = [vocab.root, *vocab.members.values()]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.update(str(k) for k in properties)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    names.update(alias.legacy for alias in vocab.aliases.values())
    return frozenset(names)


@lru_cache(maxsize=8)
def _required(vocab: Vocabulary) -> Mapping[str, frozenset[str]]:
    """Per known type, its required fields and their legacy spellings (``type`` aside)."""
    required: dict[str, frozenset[str]] = {}
    for tag, member in vocab.members.items():
        names = {str(n) for n in member.get("required", ()) if n != "type"}
        alias = vocab.aliases.get(tag)
        if alias is not None and alias.field in names:
            names.add(alias.legacy)
        required[tag] = frozenset(names)
    return required


def _fields(obj: Mapping[str, Any], required: frozenset[str], known: frozenset[str]) -> str:
    parts: set[str] = set()
    for key, value in obj.items():
        if key not in known:
            parts.add("+")
        elif key not in required:
            continue
        elif isinstance(value, Mapping):
            inner = sorted({k if k in known else "+" for k in value})
            parts.add(f"{key}{{{','.join(inner)}}}")
        else:
            parts.add(key)
    return ",".join(sorted(parts))


def line_kind(raw: bytes, vocab: Vocabulary) -> str:
    """One line's kind: ``not-json``, ``unknown``, ``TYPE(required fields)`` and so on."""
    if not raw.strip():
        return "blank"
    try:
        obj = json.loads(raw)
    except ValueError:
        return "not-json"
    if not isinstance(obj, dict):
        return "not-object"
    tag = obj.get("type")
    if not isinstance(tag, str):
        return "no-type"
    if tag not in vocab.known:
        return "unknown"
    return f"{tag}({_fields(obj, _required(vocab)[tag], _field_names(vocab))})"


def shape_features(stream: bytes, vocab: Vocabulary) -> frozenset[Hashable]:
    """Each kind of line in the stream, and each pair of kinds side by side."""
    kinds = [line_kind(raw, vocab) for raw in stream.split(b"\n") if raw.strip()]
    return frozenset(_windows(kinds))


def _windows(kinds: list[str]) -> Iterable[Hashable]:
    for width in range(1, WIDTH + 1):
        for i in range(len(kinds) - width + 1):
            yield ("shape", *kinds[i : i + width])
