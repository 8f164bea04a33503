"""Compile a JSON Schema into a fast "does this body fit?" function.

The reference decoder asks one question per known line: can a reader that
knows this type read this body?  Answering it with a ``jsonschema`` validator
costs many times what parsing the line does, which would make the decoder far
slower than the ``json.loads`` loop it must keep pace with.  This module turns the subset
of JSON Schema that stream vocabularies use into nested closures, once, so a
check is a handful of dict look-ups.

Two readings differ on purpose from strict JSON Schema, because the stream
contract says so:

* ``additionalProperties: false`` is not enforced.  Rule 5 says unknown fields
  on known events are ignored, so an extra key never makes a body unfit.
* ``oneOf`` is read as ``anyOf``.  Once extra keys are ignored two branches
  can both match (``{"ok": ..., "error": ...}``); a reader picks one.

Integers are JSON integers: ``1.0`` is not an integer here (serde refuses it
for a ``u64``), and booleans are never numbers.

Schemas with keywords outside the supported subset are refused with
:class:`UnsupportedSchema`, naming the keyword and where it sits, rather than
silently validating less than the schema says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

#: A compiled check: ``None`` when the value fits, else a reason naming the path.
FitCheck = Callable[[Any, str], "str | None"]

#: Keywords that carry no constraint (annotations); always ignored.
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "contentMediaType",
        "contentEncoding",
    }
)

#: Bounds implied by the integer ``format`` values stella's generator writes.
FORMAT_BOUNDS: Mapping[str, tuple[int, int]] = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

SUPPORTED = frozenset(
    {
        "type",
        "const",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "oneOf",
        "anyOf",
        "allOf",
        "not",
        "$ref",
        "format",
    }
)


class UnsupportedSchema(ValueError):
    """The schema uses something the fit compiler does not understand."""


def resolve_ref(root: Any, ref: Any) -> Any:
    """The schema a local ``#/...`` reference points to; :class:`UnsupportedSchema` otherwise."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise UnsupportedSchema(f"only local '#/...' references are supported, got {ref!r}")
    target = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise UnsupportedSchema(f"unresolvable reference {ref!r}")
        target = target[part]
    return target


def json_type_name(value: Any) -> str:
    """The JSON type of a parsed value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise UnsupportedSchema(f"unknown JSON type {name!r}")


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _where(path: str) -> str:
    return f"field {path!r}" if path else "the event"


class FitCompiler:
    """Compiles schemas that live in one root document (for ``$ref``)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._refs: dict[str, FitCheck] = {}

    def compile(self, schema: Any, at: str = "#") -> FitCheck:
        if schema is True or schema == {}:
            return _always
        if schema is False:
            return lambda v, p: f"{_where(p)} must not be present"
        if not isinstance(schema, Mapping):
            raise UnsupportedSchema(f"{at}: a schema must be an object or a boolean")
        unknown = set(schema) - SUPPORTED - ANNOTATIONS
        if unknown:
            raise UnsupportedSchema(f"{at}: unsupported keyword(s) {sorted(unknown)}")
        checks: list[FitCheck] = []
        if "$ref" in schema:
            checks.append(self._ref(schema["$ref"], at))
        if "type" in schema:
            checks.append(_type_check(schema["type"], at))
        if "const" in schema:
            checks.append(_const_check(schema["const"]))
        if "enum" in schema:
            checks.append(_enum_check(list(schema["enum"]), at))
        if "format" in schema and schema["format"] in FORMAT_BOUNDS:
            lo, hi = FORMAT_BOUNDS[schema["format"]]
            checks.append(_bounds_check(lo, hi, schema["format"]))
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key in schema:
                checks.append(_number_check(key, schema[key], at))
        if "minLength" in schema or "maxLength" in schema or "pattern" in schema:
            checks.append(_string_check(schema, at))
        if (
            "required" in schema
            or "properties" in schema
            or isinstance(schema.get("additionalProperties"), Mapping)
        ):
            checks.append(self._object_check(schema, at))
        if "items" in schema or "minItems" in schema or "maxItems" in schema:
            checks.append(self._array_check(schema, at))
        for key in ("oneOf", "anyOf"):
            if key in schema:
                checks.append(self._any_of(schema[key], f"{at}/{key}"))
        if "allOf" in schema:
            subs = [self.compile(s, f"{at}/allOf/{i}") for i, s in enumerate(schema["allOf"])]
            checks.extend(subs)
        if "not" in schema:
            inner = self.compile(schema["not"], f"{at}/not")
            checks.append(
                lambda v, p: (
                    f"{_where(p)} matches a shape it must not" if inner(v, p) is None else None
                )
            )
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return _all(checks)

    def _ref(self, ref: Any, at: str) -> FitCheck:
        if ref not in self._refs:
            try:
                target = resolve_ref(self._root, ref)
            except UnsupportedSchema as exc:
                raise UnsupportedSchema(f"{at}: {exc}") from None
            # Placeholder first, so recursive definitions terminate.
            cell: list[FitCheck] = []
            self._refs[ref] = lambda v, p: cell[0](v, p)
            cell.append(self.compile(target, ref))
        return self._refs[ref]

    def _object_check(self, schema: Mapping[str, Any], at: str) -> FitCheck:
        required = list(schema.get("required", ()))
        props = {
            name: self.compile(sub, f"{at}/properties/{name}")
            for name, sub in dict(schema.get("properties", {})).items()
        }
        extra_schema = schema.get("additionalProperties")
        extra = (
            self.compile(extra_schema, f"{at}/additionalProperties")
            if isinstance(extra_schema, Mapping)
            else None
        )

        def check(value: Any, path: str) -> str | None:
            if not isinstance(value, dict):
                return None  # the type keyword, if any, reports it
            for name in required:
                if name not in value:
                    return f"missing required field {_join(path, name)!r}"
            for name, sub in props.items():
                if name in value:
                    reason = sub(value[name], _join(path, name))
                    if reason is not None:
                        return reason
            if extra is not None:
                for name, item in value.items():
                    if name not in props:
                        reason = extra(item, _join(path, name))
                        if reason is not None:
                            return reason
            return None

        return check

    def _array_check(self, schema: Mapping[str, Any], at: str) -> FitCheck:
        items = schema.get("items")
        item_check = self.compile(items, f"{at}/items") if items is not None else None
        lo = schema.get("minItems")
        hi = schema.get("maxItems")

        def check(value: Any, path: str) -> str | None:
            if not isinstance(value, list):
                return None
            if lo is not None and len(value) < lo:
                return f"{_where(path)} needs at least {lo} item(s)"
            if hi is not None and len(value) > hi:
                return f"{_where(path)} allows at most {hi} item(s)"
            if item_check is not None:
                for index, item in enumerate(value):
                    reason = item_check(item, _join(path, index))
                    if reason is not None:
                        return reason
            return None

        return check

    def _any_of(self, branches: Any, at: str) -> FitCheck:
        if not isinstance(branches, list) or not branches:
            raise UnsupportedSchema(f"{at}: must be a non-empty array of schemas")
        subs = [self.compile(s, f"{at}/{i}") for i, s in enumerate(branches)]

        def check(value: Any, path: str) -> str | None:
            first: str | None = None
            for sub in subs:
                reason = sub(value, path)
                if reason is None:
                    return None
                if first is None:
                    first = reason
            if len(subs) == 1:
                return first
            return f"{_where(path)} matches none of the {len(subs)} allowed shapes ({first})"

        return check


def _always(value: Any, path: str) -> str | None:
    return None


def _all(checks: list[FitCheck]) -> FitCheck:
    def check(value: Any, path: str) -> str | None:
        for sub in checks:
            reason = sub(value, path)
            if reason is not None:
                return reason
        return None

    return check


#: Python classes per JSON type; ``bool`` is excluded from the numbers separately.
_CLASSES: Mapping[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _type_check(spec: Any, at: str) -> FitCheck:
    names = [spec] if isinstance(spec, str) else list(spec)
    for name in names:
        _is_type(None, name)  # raises for an unknown type name
    wanted = " or ".join(names)
    classes = tuple({c for n in names for c in _CLASSES[n]})
    bool_ok = "boolean" in names

    def check(value: Any, path: str) -> str | None:
        # fast path: one isinstance; bool is an int in Python but not a JSON number
        if isinstance(value, classes) and (bool_ok or value.__class__ is not bool):
            return None
        return f"{_where(path)} must be {wanted}, got {json_type_name(value)}"

    return check


def _same(a: Any, b: Any) -> bool:
    return json_type_name(a) == json_type_name(b) and a == b


def _const_check(expected: Any) -> FitCheck:
    if isinstance(expected, str):  # the common case: a type tag or an enum branch

        def check_str(value: Any, path: str) -> str | None:
            if value.__class__ is str and value == expected:
                return None
            return f"{_where(path)} must be {expected!r}"

        return check_str

    def check(value: Any, path: str) -> str | None:
        return None if _same(value, expected) else f"{_where(path)} must be {expected!r}"

    return check


def _enum_check(options: list[Any], at: str) -> FitCheck:
    if all(isinstance(o, str) for o in options):
        allowed = frozenset(options)

        def check_str(value: Any, path: str) -> str | None:
            if value.__class__ is str and value in allowed:
                return None
            return f"{_where(path)} must be one of {options!r}, got {value!r}"

        return check_str

    def check(value: Any, path: str) -> str | None:
        if any(_same(value, option) for option in options):
            return None
        return f"{_where(path)} must be one of {options!r}, got {value!r}"

    return check


def _bounds_check(lo: int, hi: int, fmt: str) -> FitCheck:
    def check(value: Any, path: str) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool) and not lo <= value <= hi:
            return f"{_where(path)} is out of range for {fmt}"
        return None

    return check


def _number_check(key: str, bound: Any, at: str) -> FitCheck:
    if not _is_type(bound, "number"):
        raise UnsupportedSchema(f"{at}/{key}: must be a number")

    def check(value: Any, path: str) -> str | None:
        if not _is_type(value, "number"):
            return None
        ok = {
            "minimum": value >= bound,
            "maximum": value <= bound,
            "exclusiveMinimum": value > bound,
            "exclusiveMaximum": value < bound,
        }[key]
        return None if ok else f"{_where(path)} violates {key} {bound}"

    return check


def _string_check(schema: Mapping[str, Any], at: str) -> FitCheck:
    lo = schema.get("minLength")
    hi = schema.get("maxLength")
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None

    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, str):
            return None
        if lo is not None and len(value) < lo:
            return f"{_where(path)} is shorter than {lo}"
        if hi is not None and len(value) > hi:
            return f"{_where(path)} is longer than {hi}"
        if pattern is not None and pattern.search(value) is None:
            return f"{_where(path)} does not match {pattern.pattern!r}"
        return None

    return check
