"""Aliases a wire schema names only in its descriptions, learnt and made decodable.

The contract promises "If a field is renamed, the old name still works as an alias", and
stella's generated wire schema says where it keeps one, in prose its keywords cannot
carry: a property "shipped as `judge`", an enum value ("this call role shipped as
`judge`"), an event type ("this event shipped on the wire as `judge_verdict`"), the old
spellings an enum value replaced ("Both aliases are retained ..."), an enum that "still
accepts a legacy bool" and the field that bool rode in (`flip_achieved: false`), and an
enum that reads a value it does not list as `other` ("An unrecognized token reads as
`other`").  A
client generated from the keywords alone rejects those lines; stella accepts them.

:func:`learn` finds them; :func:`tolerant` writes a copy of the schema whose keywords
accept them too (a legacy property beside its name, the old value in the enum, the old
event type as a member of its own), which is how the oracle decodes what stella decodes.
Whether a line needing one is an error is a registered point of the contract
(``learnt-alias``, docs/contract-readings.md): reading A decodes it, as stella and the
contract's promise do; reading B is the client that knows only the keywords.

The patterns are the wire schema's own phrasing (its descriptions are written from the
Rust doc comments of the serde types); a description that says it another way is simply
not learnt, and the line stays an error under every reading.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: "Aliased: this field shipped as `judge`" (on a property).
_FIELD = re.compile(r"this field shipped as `([A-Za-z_][A-Za-z0-9_]*)`")
#: "Aliased: this call role shipped as `judge`" (on a const branch of an enum).
_VALUE = re.compile(r"this [a-z ]+? shipped as `([A-Za-z_][A-Za-z0-9_]*)`")
#: "Aliased: this event shipped on the wire as `judge_verdict`" (on an event type).
_TYPE = re.compile(r"this event shipped on the wire as `([A-Za-z_][A-Za-z0-9_]*)`")
#: "Both aliases are retained" with the retired spellings in backticks (a const branch).
_RETAINED = re.compile(r"aliases are retained")
_NAME = re.compile(r"`([a-z][a-z0-9_]*)`")
#: An enum that reads a value it does not know as its ``other`` variant, as its description
#: says: "An unrecognized token reads as `other`", "an unknown kind ... deserializes to
#: [`BlockKind::Other`]", "Forward-compat via [`CacheZone::Other`]".
_OTHER = re.compile(
    r"unrecognized token reads as `other`|deserializes to \[`\w+::Other`\]"
    r"|Forward-compat via \[`\w+::Other`\]"
)
#: "A legacy bool is still accepted" (an enum's description), with "`name: false`".
_BOOL = re.compile(r"legacy bool is still accepted")
_BOOL_FIELD = re.compile(r"`([a-z][a-z0-9_]*): (?:true|false)`")


@dataclass(frozen=True)
class Learnt:
    """One alias the schema's prose names: where, the new name and the old one."""

    kind: str  # "field", "value", "bool", "type", "other"
    #: The ``$defs`` entry (or ``oneOf[i]`` member) it belongs to.
    where: str
    name: str
    legacy: str

    def describe(self) -> str:
        if self.kind == "type":
            return f"event type {self.legacy!r} is the old name of {self.name!r}"
        if self.kind == "field":
            return f"{self.where}: field {self.legacy!r} is the old name of {self.name!r}"
        if self.kind == "bool":
            return f"{self.where}: a boolean is the old spelling of its values"
        if self.kind == "other":
            return f"{self.where}: a value it does not list reads as 'other'"
        return f"{self.where}: value {self.legacy!r} is the old spelling of {self.name!r}"


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, str) else ""


def _consts(branches: Any) -> list[str]:
    return (
        [
            str(b["const"])
            for b in branches
            if isinstance(b, Mapping) and isinstance(b.get("const"), str)
        ]
        if isinstance(branches, list)
        else []
    )


def _schemas(doc: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every named schema of the document: each ``$defs`` entry and each top-level member."""
    for name, schema in (doc.get("$defs") or {}).items():
        if isinstance(schema, Mapping):
            yield str(name), schema
    for index, member in enumerate(doc.get("oneOf") or []):
        if isinstance(member, Mapping):
            yield f"oneOf[{index}]", member


def _objects(schema: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The object schemas directly in ``schema``: itself and its oneOf/anyOf branches."""
    yield schema
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, Mapping):
                yield branch


def learn(doc: Any) -> tuple[Learnt, ...]:
    """The aliases a wire schema names in its descriptions."""
    if not isinstance(doc, Mapping):
        return ()
    found: list[Learnt] = []
    refs = _referrers(doc)
    for where, schema in _schemas(doc):
        const_type = ((schema.get("properties") or {}).get("type") or {}).get("const")
        match = _TYPE.search(_text(schema.get("description")))
        if where.startswith("oneOf[") and isinstance(const_type, str) and match:
            found.append(Learnt("type", where, const_type, match.group(1)))
        for obj in _objects(schema):
            for prop, sub in (obj.get("properties") or {}).items():
                if not isinstance(sub, Mapping):
                    continue
                match = _FIELD.search(_text(sub.get("description")))
                if match and match.group(1) != prop:
                    found.append(Learnt("field", where, str(prop), match.group(1)))
        consts = _consts(schema.get("oneOf"))
        for branch in schema.get("oneOf") or []:
            if not isinstance(branch, Mapping) or not isinstance(branch.get("const"), str):
                continue
            text = _text(branch.get("description"))
            match = _VALUE.search(text)
            if match and match.group(1) not in consts:
                found.append(Learnt("value", where, branch["const"], match.group(1)))
            if _RETAINED.search(text):
                for old in dict.fromkeys(_NAME.findall(text)):
                    if old not in consts and old != branch["const"]:
                        found.append(Learnt("value", where, branch["const"], old))
        text = _text(schema.get("description"))
        if "other" in consts and _OTHER.search(text):
            found.append(Learnt("other", where, "other", "*"))
        if consts and _BOOL.search(text):
            found.append(Learnt("bool", where, consts[0], "bool"))
            for old in dict.fromkeys(_BOOL_FIELD.findall(text)):
                for owner, prop in refs.get(where, ()):
                    if old != prop:
                        found.append(Learnt("field", owner, prop, old))
    return tuple(dict.fromkeys(found))


def _referrers(doc: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Per ``$defs`` name: the (schema, property) pairs whose property refers to it."""
    out: dict[str, list[tuple[str, str]]] = {}
    for where, schema in _schemas(doc):
        for obj in _objects(schema):
            for prop, sub in (obj.get("properties") or {}).items():
                if not isinstance(sub, Mapping):
                    continue
                refs = [sub.get("$ref")] + [
                    b.get("$ref") for b in sub.get("anyOf") or [] if isinstance(b, Mapping)
                ]
                for ref in refs:
                    if isinstance(ref, str) and ref.startswith("#/$defs/"):
                        out.setdefault(ref.removeprefix("#/$defs/"), []).append((where, str(prop)))
    return out


def _node(doc: dict[str, Any], where: str) -> dict[str, Any]:
    if where.startswith("oneOf["):
        member: dict[str, Any] = doc["oneOf"][int(where[6:-1])]
        return member
    node: dict[str, Any] = doc["$defs"][where]
    return node


def tolerant(doc: Mapping[str, Any], learnt: tuple[Learnt, ...]) -> dict[str, Any]:
    """A copy of ``doc`` whose keywords accept every learnt alias as stella does."""
    out: dict[str, Any] = copy.deepcopy(dict(doc))
    for alias in learnt:
        node = _node(out, alias.where)
        if alias.kind == "type":
            member = copy.deepcopy(node)
            member.setdefault("properties", {})["type"] = {"const": alias.legacy, "type": "string"}
            out["oneOf"].append(member)
        elif alias.kind == "value":
            node["oneOf"].append({"const": alias.legacy, "type": "string"})
        elif alias.kind == "bool":
            node["oneOf"].append({"type": "boolean"})
        elif alias.kind == "other":  # any string; a listed one matches its own const too
            node["anyOf"] = [{"oneOf": node.pop("oneOf")}, {"type": "string"}]
        elif alias.kind == "field":
            for obj in _objects(node):
                assert isinstance(obj, dict)  # a deep copy: every mapping in it is a dict
                props = obj.get("properties") or {}
                if alias.name not in props:
                    continue
                props[alias.legacy] = copy.deepcopy(props[alias.name])
                required = obj.get("required")
                if isinstance(required, list) and alias.name in required:
                    required.remove(alias.name)
                    either = {"anyOf": [{"required": [alias.name]}, {"required": [alias.legacy]}]}
                    obj["allOf"] = [*obj.get("allOf", []), either]
    return out
