"""The fit question again, answered yes/no by generated Python code: the decoder's hot path.

:mod:`fit` answers with a reason naming the path, which costs a closure call and a
path string per field even when everything fits.  Almost every line of a real
stream fits, so the decoder asks this module first — one straight-line function per
event type, built once from the same schema with the same reading (extra keys
ignored, ``oneOf`` as ``anyOf``, JSON integers only) — and asks :mod:`fit` for
the reason only when the answer is no.  ``tests/schemas/test_vocabulary.py`` checks the
two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from stella_conform.schemas.fit import (
    ANNOTATIONS,
    FORMAT_BOUNDS,
    SUPPORTED,
    UnsupportedSchema,
    resolve_ref,
)

Fits = Callable[[Any], bool]

_CLASSES = {
    "null": "type(None)",
    "boolean": "bool",
    "integer": "int",
    "number": "(int, float)",
    "string": "str",
    "array": "list",
    "object": "dict",
}


class FastCompiler:
    """Generates one module of functions for the schemas of one root document."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._lines: list[str] = []
        self._consts: dict[str, Any] = {}
        self._refs: dict[str, str] = {}
        self._count = 0

    def compile_many(self, schemas: Mapping[str, Any]) -> dict[str, Fits]:
        """One yes/no function per named schema, generated and compiled together."""
        names = {key: self._function(schema) for key, schema in schemas.items()}
        namespace: dict[str, Any] = dict(self._consts)
        exec("\n".join(self._lines), namespace)  # code we generated from the schema
        return {key: namespace[name] for key, name in names.items()}

    # ------------------------------------------------------------------ generation

    def _new(self, prefix: str = "f") -> str:
        self._count += 1
        return f"_{prefix}{self._count}"

    def _const(self, value: Any) -> str:
        name = self._new("c")
        self._consts[name] = value
        return name

    def _function(self, schema: Any) -> str:
        if isinstance(schema, Mapping) and set(schema) == {"$ref"}:
            return self._ref(schema["$ref"])  # the referenced function itself: no wrapper call
        name = self._new()
        body: list[str] = []
        self._emit(schema, "v", body, 1)
        self._lines.append(f"def {name}(v):")
        self._lines.extend(body or ["    pass"])
        self._lines.append("    return True")
        return name

    def _ref(self, ref: Any) -> str:
        if ref not in self._refs:
            target = resolve_ref(self._root, ref)
            name = self._new("r")
            self._refs[ref] = name  # before compiling, so recursion terminates
            body: list[str] = []
            self._emit(target, "v", body, 1)
            self._lines.append(f"def {name}(v):")
            self._lines.extend(body or ["    pass"])
            self._lines.append("    return True")
        return self._refs[ref]

    def _emit(self, schema: Any, var: str, out: list[str], depth: int) -> None:
        """Append statements that ``return False`` when ``var`` does not fit."""
        pad = "    " * depth
        if schema is True or schema == {}:
            return
        if schema is False:
            out.append(f"{pad}return False")
            return
        if not isinstance(schema, Mapping):
            raise UnsupportedSchema("a schema must be an object or a boolean")
        unknown = set(schema) - SUPPORTED - ANNOTATIONS
        if unknown:
            raise UnsupportedSchema(f"unsupported keyword(s) {sorted(unknown)}")
        if "$ref" in schema:
            out.append(f"{pad}if not {self._ref(schema['$ref'])}({var}): return False")
        numeric_only = False
        if "type" in schema:
            names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
            classes = ", ".join(_CLASSES[n] for n in names)
            # bool is an int: it needs ruling out only where an integer or a number may be
            may_be_bool = "boolean" not in names and bool({"integer", "number"} & set(names))
            no_bool = f" or {var}.__class__ is bool" if may_be_bool else ""
            out.append(f"{pad}if not isinstance({var}, ({classes},)){no_bool}: return False")
            numeric_only = set(names) <= {"integer", "number"}
        if "const" in schema:
            c = self._const(schema["const"])
            out.append(
                f"{pad}if {var}.__class__ is not {c}.__class__ or {var} != {c}: return False"
            )
        if "enum" in schema:
            options = list(schema["enum"])
            if all(isinstance(o, str) for o in options):
                c = self._const(frozenset(options))
                out.append(f"{pad}if {var}.__class__ is not str or {var} not in {c}: return False")
            else:
                c = self._const(options)
                out.append(
                    f"{pad}if not any({var}.__class__ is o.__class__ and {var} == o "
                    f"for o in {c}): return False"
                )
        # past a type check that admits numbers only, the bounds need no guard of their own
        numeric = (
            ""
            if numeric_only
            else f"(isinstance({var}, (int, float)) and {var}.__class__ is not bool) and "
        )
        if "format" in schema and schema["format"] in FORMAT_BOUNDS:
            lo, hi = FORMAT_BOUNDS[schema["format"]]
            out.append(
                f"{pad}if {var}.__class__ is int and not ({lo} <= {var} <= {hi}): return False"
            )
        for key, op in (
            ("minimum", "<"),
            ("maximum", ">"),
            ("exclusiveMinimum", "<="),
            ("exclusiveMaximum", ">="),
        ):
            if key in schema:
                out.append(f"{pad}if {numeric}{var} {op} {schema[key]!r}: return False")
        if "minLength" in schema:
            out.append(
                f"{pad}if {var}.__class__ is str and len({var}) < {int(schema['minLength'])}:"
                " return False"
            )
        if "maxLength" in schema:
            out.append(
                f"{pad}if {var}.__class__ is str and len({var}) > {int(schema['maxLength'])}:"
                " return False"
            )
        if "pattern" in schema:
            c = self._const(re.compile(schema["pattern"]))
            out.append(
                f"{pad}if {var}.__class__ is str and {c}.search({var}) is None: return False"
            )
        if (
            "required" in schema
            or "properties" in schema
            or isinstance(schema.get("additionalProperties"), Mapping)
        ):
            self._object(schema, var, out, depth)
        if "items" in schema or "minItems" in schema or "maxItems" in schema:
            self._array(schema, var, out, depth)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                names = [self._function(branch) for branch in schema[key]]
                calls = " or ".join(f"{n}({var})" for n in names)
                out.append(f"{pad}if not ({calls}): return False")
        for branch in schema.get("allOf", ()):
            out.append(f"{pad}if not {self._function(branch)}({var}): return False")
        if "not" in schema:
            out.append(f"{pad}if {self._function(schema['not'])}({var}): return False")

    def _object(self, schema: Mapping[str, Any], var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        inner = "    " * (depth + 1)
        out.append(f"{pad}if {var}.__class__ is dict:")
        start = len(out)
        props: Mapping[str, Any] = schema.get("properties", {})
        required = list(dict.fromkeys(schema.get("required", ())))
        checked: set[str] = set()
        for name, sub in props.items():
            if sub is True or sub == {}:
                continue
            child = self._new("x")
            body: list[str] = []
            self._emit(sub, child, body, depth + 1)
            if body and name in required:
                # one lookup says both that it is there and what it holds (the checks have
                # no side effects and raise nothing, so their order does not matter)
                out.append(f"{inner}{child} = {var}.get({name!r}, _MISSING)")
                out.append(f"{inner}if {child} is _MISSING: return False")
                out.extend(body)
                checked.add(name)
            elif body:
                out.append(f"{inner}{child} = {var}.get({name!r}, _MISSING)")
                out.append(f"{inner}if {child} is not _MISSING:")
                out.extend("    " + line for line in body)
        for name in required:
            if name not in checked:
                out.append(f"{inner}if {name!r} not in {var}: return False")
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            known = self._const(frozenset(props))
            item = self._new("x")
            body = []
            self._emit(extra, item, body, depth + 2)
            if body:
                out.append(f"{inner}for _k, {item} in {var}.items():")
                out.append(f"{inner}    if _k in {known}: continue")
                out.extend(body)  # emitted at depth + 2 already: the loop's body
        if len(out) == start:
            out.append(f"{inner}pass")
        self._consts["_MISSING"] = _MISSING

    def _array(self, schema: Mapping[str, Any], var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        inner = "    " * (depth + 1)
        out.append(f"{pad}if {var}.__class__ is list:")
        out.append(f"{inner}pass")
        if "minItems" in schema:
            out.append(f"{inner}if len({var}) < {int(schema['minItems'])}: return False")
        if "maxItems" in schema:
            out.append(f"{inner}if len({var}) > {int(schema['maxItems'])}: return False")
        items = schema.get("items")
        if items is not None and items is not True and items != {}:
            item = self._new("x")
            body: list[str] = []
            self._emit(items, item, body, depth + 2)
            if body:
                out.append(f"{inner}for {item} in {var}:")
                out.extend(body)


_MISSING = object()
