"""Events for types only an imported wire schema knows, generated from the schema.

``hypothesis-jsonschema`` would be the obvious tool, but its last release fails on
every draw with Hypothesis 6.170.10 and later (it calls a private helper those
releases replaced) and, where it works, it is slow and writes undeclared keys on
most objects.  This module reads the same
subset of JSON Schema the fit compiler understands and builds a strategy that
writes only declared keys, ``type`` first, integers within their ``format``
bounds, and shrinks towards the required fields alone.

:func:`schema_strategy` raises :class:`SchemaStrategyError` for what it cannot
generate; the caller reports it and falls back (see ``events.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.alphabets import NAME_CHARS, PAYLOAD_TEXT, strings
from stella_conform.schemas.fit import ANNOTATIONS, FORMAT_BOUNDS, UnsupportedSchema, resolve_ref

JSON_LEAVES = (
    st.none() | st.booleans() | st.integers(-1000, 1000) | strings(PAYLOAD_TEXT, max_size=8)
)
ANY_JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(strings("abcdefgh_", min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)

_NAMES = strings(NAME_CHARS, min_size=1, max_size=10)


class SchemaStrategyError(ValueError):
    """The schema uses a construct this generator cannot honour."""


class SchemaStrategies:
    """Builds strategies for schemas inside one root document (for ``$ref``)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._refs: dict[str, st.SearchStrategy[Any]] = {}

    def build(self, schema: Any, at: str = "#") -> st.SearchStrategy[Any]:
        if (
            schema is True
            or schema == {}
            or (isinstance(schema, Mapping) and set(schema) <= ANNOTATIONS)
        ):
            return ANY_JSON
        if schema is False:
            raise SchemaStrategyError(f"{at}: a false schema admits no value")
        if not isinstance(schema, Mapping):
            raise SchemaStrategyError(f"{at}: not a schema")
        if "not" in schema or "pattern" in schema:
            raise SchemaStrategyError(f"{at}: 'not'/'pattern' are not generated")
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
            if rest:
                raise SchemaStrategyError(f"{at}: '$ref' beside other constraints")
            return self._ref(schema["$ref"], at)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        for key in ("oneOf", "anyOf"):
            if key in schema:
                base = {k: v for k, v in schema.items() if k != key}
                branches = [
                    self.build(_merge(base, branch), f"{at}/{key}/{i}")
                    for i, branch in enumerate(schema[key])
                ]
                return st.one_of(branches)
        if "allOf" in schema:
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = _merge(merged, self._deref(part))
            return self.build(merged, f"{at}/allOf")
        types = schema.get("type")
        if types is None:
            types = _infer_types(schema)
        names = [types] if isinstance(types, str) else list(types)
        # null last, so shrinking prefers a real value over null
        names.sort(key=lambda n: n == "null")
        return st.one_of([self._typed(name, schema, at) for name in names])

    def _typed(self, name: str, schema: Mapping[str, Any], at: str) -> st.SearchStrategy[Any]:
        if name == "null":
            return st.none()
        if name == "boolean":
            return st.booleans()
        if name == "integer":
            lo, hi = _int_bounds(schema)
            return st.integers(lo, hi)
        if name == "number":
            lo_f = schema.get("minimum")
            hi_f = schema.get("maximum")
            return st.floats(
                min_value=lo_f, max_value=hi_f, allow_nan=False, allow_infinity=False, width=64
            ) | st.integers(int(lo_f) if lo_f is not None else -1000, 1000).filter(
                lambda v: hi_f is None or v <= hi_f
            )
        if name == "string":
            lo = int(schema.get("minLength", 0))
            max_len = schema.get("maxLength")
            return strings(
                PAYLOAD_TEXT,
                min_size=lo,
                max_size=int(max_len) if max_len is not None else max(lo, 12),
            )
        if name == "array":
            items = schema.get("items")
            inner = self.build(items, f"{at}/items") if items is not None else ANY_JSON
            lo = int(schema.get("minItems", 0))
            max_items = schema.get("maxItems")
            return st.lists(
                inner, min_size=lo, max_size=int(max_items) if max_items is not None else lo + 3
            )
        if name == "object":
            return self._object(schema, at)
        raise SchemaStrategyError(f"{at}: unknown type {name!r}")

    def _object(self, schema: Mapping[str, Any], at: str) -> st.SearchStrategy[dict[str, Any]]:
        props: Mapping[str, Any] = schema.get("properties", {})
        required = [name for name in schema.get("required", ()) if name in props] + [
            name for name in schema.get("required", ()) if name not in props
        ]
        fixed = {
            name: self.build(props.get(name, True), f"{at}/properties/{name}") for name in required
        }
        optional = {
            name: self.build(sub, f"{at}/properties/{name}")
            for name, sub in props.items()
            if name not in fixed
        }
        extra = schema.get("additionalProperties")
        extra_values = (
            self.build(extra, f"{at}/additionalProperties") if isinstance(extra, Mapping) else None
        )

        @st.composite
        def objects(draw: st.DrawFn) -> dict[str, Any]:
            out: dict[str, Any] = {}
            if "type" in fixed:  # stella writes the tag first
                out["type"] = draw(fixed["type"])
            for name, strat in fixed.items():
                if name != "type":
                    out[name] = draw(strat)
            for name, strat in optional.items():
                if draw(st.booleans()):
                    out[name] = draw(strat)
            if extra_values is not None:
                for key in draw(st.lists(_NAMES, max_size=2, unique=True)):
                    if key not in out:
                        out[key] = draw(extra_values)
            return out

        return objects()

    def _deref(self, schema: Any) -> Any:
        while isinstance(schema, Mapping) and "$ref" in schema and len(schema) == 1:
            schema = self._lookup(schema["$ref"], "#")
        return schema

    def _lookup(self, ref: Any, at: str) -> Any:
        try:
            return resolve_ref(self._root, ref)
        except UnsupportedSchema as exc:
            raise SchemaStrategyError(f"{at}: {exc}") from None

    def _ref(self, ref: Any, at: str) -> st.SearchStrategy[Any]:
        key = str(ref)
        if key not in self._refs:
            target = self._lookup(ref, at)
            self._refs[key] = st.deferred(lambda: built)
            built = self.build(target, key)
            self._refs[key] = built
        return self._refs[key]


def _merge(a: Mapping[str, Any], b: Any) -> dict[str, Any]:
    """Combine two object schemas (for allOf and oneOf-with-siblings)."""
    if not isinstance(b, Mapping):
        return dict(a)
    out = dict(a)
    for key, value in b.items():
        if key == "properties":
            out["properties"] = {**out.get("properties", {}), **value}
        elif key == "required":
            out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
        else:
            out[key] = value
    return out


def _infer_types(schema: Mapping[str, Any]) -> list[str]:
    if "properties" in schema or "required" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    if "minimum" in schema or "maximum" in schema or schema.get("format") in FORMAT_BOUNDS:
        return ["integer"]
    raise SchemaStrategyError("a schema with no type and no shape to infer one from")


def _int_bounds(schema: Mapping[str, Any]) -> tuple[int, int]:
    lo, hi = FORMAT_BOUNDS.get(str(schema.get("format")), (-(2**31), 2**31 - 1))
    if "minimum" in schema:
        lo = max(lo, int(schema["minimum"]))
    if "maximum" in schema:
        hi = min(hi, int(schema["maximum"]))
    if "exclusiveMinimum" in schema:
        lo = max(lo, int(schema["exclusiveMinimum"]) + 1)
    if "exclusiveMaximum" in schema:
        hi = min(hi, int(schema["exclusiveMaximum"]) - 1)
    return lo, hi
