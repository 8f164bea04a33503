"""Every field at its edges, and names that collide with a host language.

A reader is written against a handful of ordinary events; its bugs hide at the values
those never hold.  JavaScript's ``raw.text || raw.delta``, Python's ``x or default`` and
Go's zero value for an absent field take ``""``, ``0`` and ``false`` for "missing"; a
signed 64-bit counter refuses a u64 above 2^63 - 1 and takes ``-1``; ``int()`` takes
``"1200"`` and raises on ``"x1200"``; a dispatch table that is a plain JavaScript object
finds ``constructor`` and ``__proto__`` in every table.  This module derives, from the
wire schema of the client's vocabulary, each field's *class* (a string, an unsigned
integer of 64 or 32 bits, a number, a boolean, nullable, optional, any JSON), and
writes the edge values of each class:

* ``edge-values`` (valid, rule R1): one :data:`VALID_CELLS` cell in *every* field of its
  class, in one event of every known type that has such a field (the empty string in
  every string, 2^64 - 1 in every u64, ``false`` in every boolean, every optional field
  left out, ...).  The stream stays valid: a reader that rejects it, or reads it as
  another stream, is wrong.
* ``bad-edge-values`` (rule R4): one :data:`BAD_CELLS` cell in one field (``-1`` where
  an unsigned integer is due, ``"x1200"``, ``true`` or ``""`` where a number is,
  ``"true"`` where a boolean is, 2^64 in a u64): that body no longer fits, the stream is
  rejected there.
* ``host-type-names`` (R3): unrecognized events whose types are members of
  ``Object.prototype`` or other languages' special names (:data:`HOST_NAMES`).
* ``host-field-names`` (R5): the same names as unknown fields of a known event.
* ``case-folded-twins`` (R5): beside a known field, after it, an unknown field named the
  same but for case (``Text``, ``INPUT_TOKENS``) holding another value of its class: Go's
  ``encoding/json`` matches keys to struct fields without regard to case, the last match
  winning, so a reader decoding into a struct shows the twin; serde does not.

Values the contract lets a client read two ways are left out: ``1.0`` and ``-0`` where
an integer is due (the registered points ``integral-float`` and ``negative-zero``),
``null`` and out-of-range values in ``ts`` (``ts-null``, ``ts-out-of-range``).  Whatever
a cell means to write, the expected outcome is the reference decoder's reading of the
bytes, as for every case; a change that would not keep the body valid (a valid cell) or
would leave it valid (a bad cell) is not made.

Each cell is chosen at the choice site ``edge-cell`` (a bad cell's field at
``edge-field``, a name group at ``host-names``, a twin's spelling at ``twin-case``), so
:data:`EDGE_STRATA` makes every cell a stratum of the checks that grade it
(:mod:`stella_conform.generators.strata`): every default run draws every cell, whatever
its seed.  :func:`cells_in` finds the cells in a
parsed line, for the reach audit (:mod:`stella_conform.generators.grammar`).

    >>> sorted(cells_in({"type": "text", "text": ""}))
    ['edge.string-empty']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.engine.picks import between, choose_at
from stella_conform.generators.events import Event, strategies_for
from stella_conform.generators.mutations.stream import Line, Mutation, Stream, json_copy
from stella_conform.schemas.vocabulary import Vocabulary

_U64, _U32, _I64 = 2**64 - 1, 2**32 - 1, 2**63 - 1
_TWO_53 = 2**53

Path = tuple[str, ...]


# ------------------------------------------------------------------ fields and their classes


@dataclass(frozen=True)
class Field:
    """One field of a known type, as its wire schema types it.

    ``path`` leads from the event to the field (``("call", "call_id")``); a field of one
    arm of a tagged union (``("output", "ok", "content")``) is only there when the event
    holds that arm.
    """

    tag: str
    path: Path
    types: frozenset[str]
    #: The bounds an integer field's schema states (``None``: none).
    minimum: int | None
    maximum: int | None
    #: An enum or a const: its strings are names, not text.
    named: bool
    required: bool

    @property
    def name(self) -> str:
        return ".".join((self.tag, *self.path))

    @property
    def plain(self) -> bool:
        """Not ``ts``: the stamp's edges are the ``ts-*`` mutations' (and registered points)."""
        return self.path != ("ts",)

    @property
    def string(self) -> bool:
        return "string" in self.types and not self.named

    @property
    def integer(self) -> bool:
        return "integer" in self.types

    @property
    def unsigned(self) -> bool:
        return self.integer and self.minimum is not None and self.minimum >= 0

    @property
    def u64(self) -> bool:
        return self.unsigned and (self.maximum is None or self.maximum >= _U64)

    @property
    def u32(self) -> bool:
        return self.unsigned and self.maximum == _U32

    @property
    def number(self) -> bool:
        return "number" in self.types and not self.integer

    @property
    def numeric(self) -> bool:
        return self.integer or self.number

    @property
    def boolean(self) -> bool:
        return "boolean" in self.types

    @property
    def nullable(self) -> bool:
        return "null" in self.types

    @property
    def anything(self) -> bool:
        return not self.types


def _resolve(root: Mapping[str, Any], schema: Any) -> Any:
    seen = 0
    while isinstance(schema, Mapping) and "$ref" in schema and seen < 8:
        target: Any = root
        for part in str(schema["$ref"])[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        schema = target
        seen += 1
    return schema


def walk(
    root: Mapping[str, Any], tag: str, schema: Any, path: Path = (), required: bool = True
) -> Iterator[Field]:
    """The fields of ``schema`` (a type's body), resolving references in ``root``; the key
    ``type`` (an event's tag) is not a field."""
    schema = _resolve(root, schema)
    if not isinstance(schema, Mapping):
        return
    props = schema.get("properties")
    arms = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(props, Mapping) or isinstance(arms, list):
        needed = set(schema.get("required", ()))
        for key, sub in (props or {}).items():
            if path or key != "type":
                yield from walk(root, tag, sub, (*path, key), required and key in needed)
        for arm in arms if isinstance(arms, list) else ():
            yield from walk(root, tag, arm, path, required)
        return
    if not path:
        return
    kind = schema.get("type")
    types = frozenset([kind] if isinstance(kind, str) else kind or ())
    named = "enum" in schema or "const" in schema
    if named and not types:
        values = schema.get("enum", [schema.get("const")])
        types = frozenset("string" for v in values if isinstance(v, str))
        if not types:
            return
    low, high = schema.get("minimum"), schema.get("maximum")
    yield Field(
        tag,
        path,
        types,
        low if isinstance(low, int) else None,
        high if isinstance(high, int) else None,
        named,
        required,
    )


@lru_cache(maxsize=64)
def fields_of(vocab: Vocabulary) -> tuple[Field, ...]:
    """Every field of every known type, from the vocabulary's wire schema (each once)."""
    out: dict[tuple[str, Path], Field] = {}
    for tag in sorted(vocab.known):
        for f in walk(vocab.root, tag, vocab.members[tag]):
            out.setdefault((f.tag, f.path), f)
    return tuple(out.values())


# ------------------------------------------------------------------ the cells


@dataclass(frozen=True)
class Cell:
    """One edge: the fields of a class it goes in, and the value it writes there."""

    id: str
    what: str
    holds: Callable[[Field], bool]
    #: The value written (:data:`ABSENT`: the field is left out).
    value: Any


#: Left out: the value of the cell ``edge.absent``.
ABSENT = object()

VALID_CELLS: tuple[Cell, ...] = (
    Cell("edge.string-empty", 'the empty string "" in every string field', lambda f: f.string, ""),
    Cell(
        "edge.string-whitespace",
        'a string of whitespace alone (" ") in every string field',
        lambda f: f.string,
        " ",
    ),
    Cell("edge.integer-zero", "0 in every integer field", lambda f: f.integer and f.plain, 0),
    Cell("edge.number-zero", "0 in every number field (cost_usd)", lambda f: f.number, 0),
    Cell(
        "edge.number-negative-zero",
        "-0.0 in every number field",
        lambda f: f.number,
        -0.0,
    ),
    Cell("edge.boolean-false", "false in every boolean field", lambda f: f.boolean, False),
    Cell(
        "edge.null",
        "null in every nullable field",
        lambda f: f.nullable and f.plain,
        None,
    ),
    Cell(
        "edge.absent", "every optional field left out", lambda f: not f.required and f.plain, ABSENT
    ),
    Cell(
        "edge.empty-object", "{} where any JSON value is due (tool input)", lambda f: f.anything, {}
    ),
    Cell(
        "edge.empty-array", "[] where any JSON value is due (tool input)", lambda f: f.anything, []
    ),
    Cell(
        "edge.u64-max",
        "2^64 - 1 (above 2^63 and 2^53) in every u64 field, ts too",
        lambda f: f.u64,
        _U64,
    ),
    Cell(
        "edge.u64-above-i64",
        "2^63, one past the largest i64, in every u64 field, ts too",
        lambda f: f.u64,
        _I64 + 1,
    ),
    Cell(
        "edge.u64-above-2^53",
        "2^53 + 1, the first integer a double cannot hold, in every u64 field, ts too",
        lambda f: f.u64,
        _TWO_53 + 1,
    ),
    Cell("edge.u32-max", "2^32 - 1 in every u32 field (retries)", lambda f: f.u32, _U32),
)

BAD_CELLS: tuple[Cell, ...] = (
    Cell(
        "bad-value.numeric-string",
        'a numeric string ("1200") where an integer is due',
        lambda f: f.integer and f.plain,
        "1200",
    ),
    Cell(
        "bad-value.non-numeric-string",
        'a non-numeric string ("x1200") where an integer is due (int() raises)',
        lambda f: f.integer and f.plain,
        "x1200",
    ),
    Cell(
        "bad-value.empty-string-number",
        'the empty string where a number is due (Number("") is 0)',
        lambda f: f.numeric and f.plain,
        "",
    ),
    Cell(
        "bad-value.boolean-number",
        "true where a number is due (Number(true) is 1)",
        lambda f: f.numeric and f.plain,
        True,
    ),
    Cell(
        "bad-value.negative-unsigned",
        "-1 where an unsigned integer is due (a signed counter takes it)",
        lambda f: f.unsigned and f.plain,
        -1,
    ),
    Cell(
        "bad-value.beyond-u64",
        "2^65, beyond u64, where a u64 is due (2^64 is 2^64 - 1 to a double)",
        lambda f: f.u64 and f.maximum is not None and f.plain,
        2**65,
    ),
    Cell("bad-value.beyond-u32", "2^32 where a u32 is due", lambda f: f.u32 and f.plain, _U32 + 1),
    Cell(
        "bad-value.numeric-string-number",
        'a numeric string ("0.02") where a number is due',
        lambda f: f.number,
        "0.02",
    ),
    Cell(
        "bad-value.string-boolean",
        'the string "true" where a boolean is due',
        lambda f: f.boolean,
        "true",
    ),
    Cell(
        "bad-value.number-boolean",
        "0 where a boolean is due (falsy, as false is)",
        lambda f: f.boolean,
        0,
    ),
)

#: Where a bad cell's field is looked for first: what readers read (tokens, the text).
_FIRST = (
    "step_usage.input_tokens",
    "step_usage.retries",
    "step_usage.cost_usd",
    "error.retryable",
    "tool_result.duration_ms",
)

#: Names a host language gives meaning to, by group: the members of JavaScript's
#: ``Object.prototype`` (a plain object used as a table finds each of them), Python's
#: special attributes (``getattr`` and ``hasattr`` find them on every object), and names
#: other runtimes treat specially (a thenable's ``then``, ``JSON.stringify``'s ``toJSON``,
#: a constructor's ``prototype``, an array's ``length``).
HOST_NAMES: Mapping[str, tuple[str, ...]] = {
    "js-object-prototype": (
        "constructor",
        "__proto__",
        "toString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    ),
    "python-special": ("__class__", "__init__", "__dict__", "__module__", "__getattribute__"),
    "other-special": ("then", "toJSON", "prototype", "length", "self", "class"),
}
NAME_GROUPS = tuple(HOST_NAMES)
_HOST = {name: group for group, names in HOST_NAMES.items() for name in names}


# ------------------------------------------------------------------ writing a cell


def _container(event: Any, path: Path) -> dict[str, Any] | None:
    """The object holding the field at ``path``, when the event has it."""
    for key in path[:-1]:
        event = event.get(key) if isinstance(event, dict) else None
    return event if isinstance(event, dict) else None


def _fits(vocab: Vocabulary, event: Event) -> bool:
    tag = event["type"]
    return vocab.misfit(tag, vocab.normalize(tag, event)) is None and not vocab.archived_shape(
        tag, event
    )


def write(event: Event, f: Field, value: Any) -> bool:
    """Set (or remove) the field; False when the event has no place for it."""
    holder = _container(event, f.path)
    if holder is None:
        return False
    key = f.path[-1]
    if value is ABSENT:
        if key not in holder:
            return False
        del holder[key]
    else:
        holder[key] = json_copy(value)
    return True


def _event_of(draw: st.DrawFn, vocab: Vocabulary, tag: str) -> Event:
    return dict(draw(strategies_for(vocab).for_type(tag)))


def _with_optionals(event: Event, vocab: Vocabulary, fields: list[Field]) -> None:
    """Optional fields the cell needs, given an ordinary value first (their edge replaces it)."""
    for f in fields:
        holder = _container(event, f.path)
        if holder is None or f.path[-1] in holder:
            continue
        if f.boolean:
            holder[f.path[-1]] = True
        elif f.integer:
            holder[f.path[-1]] = 7
        elif f.number:
            holder[f.path[-1]] = 0.5
        elif f.string:
            holder[f.path[-1]] = "x"
        if not _fits(vocab, event):
            del holder[f.path[-1]]


#: A valid cell's new events come in two parts, one a case (the site ``edge-part``): the
#: first six types, then the rest, so a stratum stays a short stream (eight lines with
#: the simplest run's two terminators), and the strata hold both parts.
PARTS = 2
PART_SIZE = 6


def missing_tags(cell: Cell, vocab: Vocabulary, present: frozenset[str], part: int) -> list[str]:
    """The known types with a field of the cell's class that the run lacks, in ``part``."""
    tags = sorted({f.tag for f in fields_of(vocab) if cell.holds(f)} - present & set(vocab.written))
    return tags[:PART_SIZE] if part == 0 else tags[PART_SIZE:]


def edge_values(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """One valid cell in every field of its class: each known event of the run that has
    such a field, and one new event of each known type that has one but is not in it (of
    the part of those types the site ``edge-part`` picks)."""
    mark = "edge-values"
    cell = choose_at(draw, "edge-cell", VALID_CELLS)
    part = choose_at(draw, "edge-part", range(PARTS))
    fields = [f for f in fields_of(vocab) if cell.holds(f)]
    present = frozenset(stream.lines[i].obj["type"] for i in stream.event_indexes(vocab))
    at = max(0, len(stream.lines) - 1)  # before the run's last line, its terminator
    for tag in missing_tags(cell, vocab, present, part):
        stream.lines.insert(at, Line(_event_of(draw, vocab, tag)))
        at += 1
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        event = json_copy(line.obj)
        own = [f for f in fields if f.tag == event["type"]]
        if cell.value is not ABSENT:
            _with_optionals(event, vocab, own)
        changed = False
        for f in own:
            before = json_copy(event)
            if write(event, f, cell.value) and _fits(vocab, event):
                changed = True
            else:
                event = before
        if changed:
            line.obj = event
            line.marks.add(mark)


def bad_edge_values(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """One bad cell in one field (of a type the client knows): that body no longer fits."""
    mark = "bad-edge-values"
    cell = choose_at(draw, "edge-cell", BAD_CELLS)
    fields = [f for f in fields_of(vocab) if cell.holds(f) and f.tag in vocab.written]
    fields.sort(key=lambda f: _FIRST.index(f.name) if f.name in _FIRST else len(_FIRST))
    value = cell.value
    if not fields:  # a vocabulary without such a field: null in a field that may not be null
        value = None
        fields = [
            f
            for f in fields_of(vocab)
            if f.plain and f.required and not f.nullable and f.tag in vocab.written
        ]
    first = choose_at(draw, "edge-field", range(64))
    for attempt in range(len(fields)):
        f = fields[(first + attempt) % len(fields)]
        existing = [i for i in stream.event_indexes(vocab) if stream.lines[i].obj["type"] == f.tag]
        line = stream.lines[existing[between(draw, 0, len(existing) - 1)]] if existing else None
        event = json_copy(line.obj) if line is not None else _event_of(draw, vocab, f.tag)
        _with_optionals(event, vocab, [f])
        if not write(event, f, value) or _fits(vocab, event):
            continue
        if line is None:
            at = max(0, len(stream.lines) - 1)
            stream.lines.insert(between(draw, 0, at), Line(event, marks={mark}))
        else:
            line.obj = event
            line.marks.add(mark)
        return
    raise AssertionError(f"{mark}: no field of {vocab.ident} takes {cell.id}")


def host_type_names(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Unrecognized events named for a host language's members, one per name of a group."""
    mark = "host-type-names"
    group = choose_at(draw, "host-names", NAME_GROUPS)
    at = between(draw, 0, max(0, len(stream.lines) - 1))
    for name in HOST_NAMES[group]:
        if name in vocab.known:
            continue
        stream.lines.insert(at, Line({"type": name, "detail": name}, marks={mark}))
        at += 1


def host_field_names(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A known event carrying every name of a group as an unknown field."""
    mark = "host-field-names"
    group = choose_at(draw, "host-names", NAME_GROUPS)
    indexes = stream.event_indexes(vocab)
    if not indexes:
        return
    line = stream.lines[indexes[between(draw, 0, len(indexes) - 1)]]
    event = json_copy(line.obj)
    for name in HOST_NAMES[group]:
        if name not in event:
            event[name] = {"x": 1} if name == "__proto__" else "x"
            if not _fits(vocab, event):
                del event[name]
    line.obj = event
    line.marks.add(mark)


#: How a case-folded twin spells a field's name: ``Text``, ``Input_Tokens`` (each word's
#: first letter up), or ``TEXT``, ``INPUT_TOKENS``.
TWIN_CASES = ("title", "upper")
#: The types a twin's run holds, added where it lacks them: what readers read.
_TWIN_TYPES = ("text_delta", "text", "step_usage")


def twin_name(name: str, how: str) -> str:
    """``name`` spelled another way in case only (``how``: one of :data:`TWIN_CASES`)."""
    if how == "upper":
        return name.upper()
    return "_".join(word[:1].upper() + word[1:] for word in name.split("_"))


def _twin_value(f: Field, value: Any) -> Any:
    """A valid value of the field's class that differs from ``value`` (None: no twin)."""
    if f.string and isinstance(value, str):
        return f"CASE VARIANT {value}"
    if f.integer and isinstance(value, int) and not isinstance(value, bool):
        return value + 1 if value < (f.maximum if f.maximum is not None else _U64) else value - 1
    return None


def case_folded_twins(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Beside each top-level string or integer field of every known event, after it, an
    unknown field named the same but for case, holding another value of its class; a
    text_delta, a text and a step_usage are added where the run lacks them."""
    mark = "case-folded-twins"
    how = choose_at(draw, "twin-case", TWIN_CASES)
    present = frozenset(stream.lines[i].obj["type"] for i in stream.event_indexes(vocab))
    at = max(0, len(stream.lines) - 1)  # before the run's last line, its terminator
    for tag in _TWIN_TYPES:
        if tag in vocab.written and tag not in present:
            stream.lines.insert(at, Line(_event_of(draw, vocab, tag)))
            at += 1
    fields = [f for f in fields_of(vocab) if len(f.path) == 1 and f.plain]
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        event = json_copy(line.obj)
        changed = False
        for f in (f for f in fields if f.tag == event["type"]):
            twin, value = twin_name(f.path[0], how), _twin_value(f, event.get(f.path[0]))
            if value is None or twin in event or twin.lower() != f.path[0]:
                continue
            event[twin] = value
            if _fits(vocab, event):
                changed = True
            else:
                del event[twin]
        if changed:
            line.obj = event
            line.marks.add(mark)


EDGES: tuple[Mutation, ...] = (
    Mutation(
        "edge-values",
        "R1",
        'one edge value ("", 0, false, null, absent, {}, 2^64 - 1 ...) in every field of '
        "its class, one event of every known type",
        edge_values,
    ),
    Mutation(
        "bad-edge-values",
        "R4",
        'a value a lax reader coerces in one field: -1 unsigned, "x1200", true, "" for a '
        'number, "true" for a boolean, 2^64',
        bad_edge_values,
    ),
    Mutation(
        "host-type-names",
        "R3",
        "unrecognized types named constructor, __proto__, toString, __class__, then ...",
        host_type_names,
    ),
    Mutation(
        "host-field-names",
        "R5",
        "unknown fields named constructor, __proto__, toString, __class__, then ...",
        host_field_names,
    ),
    Mutation(
        "case-folded-twins",
        "R5",
        "Text beside text, Input_Tokens beside input_tokens: unknown fields that a reader "
        "matching keys without regard to case (Go's encoding/json) reads instead",
        case_folded_twins,
    ),
)
EDGES_REJECTING = frozenset({"bad-edge-values"})

#: The envelope variants that put a cell in a raw success's events, and the mutation each
#: applies there (``generators/envelopes.py``).
ENVELOPE_VARIANTS: Mapping[str, str] = {
    "events-edge-values": "edge-values",
    "events-bad-edge-values": "bad-edge-values",
}
#: The cells an envelope's events are graded on in every run: those of the fields an
#: envelope reader reads or sums (its strings, counts, booleans and nulls), the others
#: being the stream's (the events of an envelope follow the stream's rules).
ENVELOPE_CELLS = (
    "edge.string-empty",
    "edge.boolean-false",
    "edge.null",
    "edge.u64-max",
    "edge.u64-above-i64",
    "edge.u32-max",
    "bad-value.numeric-string",
    "bad-value.non-numeric-string",
    "bad-value.empty-string-number",
    "bad-value.boolean-number",
    "bad-value.negative-unsigned",
    "bad-value.beyond-u64",
)


def _envelope_strata(cells: tuple[Cell, ...]) -> tuple[Mapping[str, int], ...]:
    """A stratum per cell of :data:`ENVELOPE_CELLS` but the first (the simplest case's)."""
    return tuple({"edge-cell": k} for k, c in enumerate(cells) if k and c.id in ENVELOPE_CELLS)


def _second_part(cell: Cell) -> bool:
    """Whether a stratum of the cell's second part adds types (the simplest run holds the
    terminators only) under the default vocabulary."""
    simplest = frozenset({"turn_complete", "run_complete"})
    return bool(missing_tags(cell, Vocabulary.default(), simplest, 1))


#: Per mutation, the strata besides its simplest case: one per cell (a name group), and
#: for a valid cell one per part of the types it adds.
EDGE_STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    "edge-values": tuple(
        {"edge-cell": k, "edge-part": part}
        for k, cell in enumerate(VALID_CELLS)
        for part in range(PARTS)
        if (k or part) and (part == 0 or _second_part(cell))
    ),
    "bad-edge-values": tuple({"edge-cell": k} for k in range(1, len(BAD_CELLS))),
    "host-type-names": tuple({"host-names": k} for k in range(1, len(NAME_GROUPS))),
    "host-field-names": tuple({"host-names": k} for k in range(1, len(NAME_GROUPS))),
    "case-folded-twins": tuple({"twin-case": k} for k in range(1, len(TWIN_CASES))),
}
#: Per envelope variant, the strata besides its simplest document.
ENVELOPE_EDGE_STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    "events-edge-values": _envelope_strata(VALID_CELLS),
    "events-bad-edge-values": _envelope_strata(BAD_CELLS),
}


# ------------------------------------------------------------------ finding the cells


def _value_at(event: Any, path: Path) -> Any:
    holder = _container(event, path)
    return ABSENT if holder is None else holder.get(path[-1], ABSENT)


def _same(value: Any, edge: Any) -> bool:
    if isinstance(edge, bool) or isinstance(value, bool):
        return type(value) is type(edge) and value == edge
    if isinstance(edge, float) and edge == 0:
        return isinstance(value, float) and value == 0 and str(value).startswith("-")
    if isinstance(edge, (int, float)) and isinstance(value, (int, float)):
        return type(value) is type(edge) and value == edge
    return type(value) is type(edge) and value == edge


def cells_in(obj: Mapping[str, Any], vocab: Vocabulary | None = None) -> frozenset[str]:
    """The cells a parsed line holds: edge values in the fields of a known type (valid
    ones where the body fits, bad ones where it does not), and host-language names as an
    unknown type (``names.type.GROUP``) or as a field of a known one (``names.field.GROUP``)."""
    vocab = vocab or Vocabulary.default()
    tag = obj.get("type")
    if not isinstance(tag, str):
        return frozenset()
    if tag not in vocab.known:
        group = _HOST.get(tag)
        return frozenset({f"names.type.{group}"} if group else ())
    found = {f"names.field.{_HOST[k]}" for k in obj if k in _HOST}
    if _twinned(obj, vocab):
        found.add(TWIN_CELL)
    own = [f for f in fields_of(vocab) if f.tag == tag]
    return frozenset(found | held_cells(obj, own, _fits(vocab, dict(obj))))


#: The cell of a known event holding a case-folded twin of one of its fields.
TWIN_CELL = "names.field.case-folded"


def _twinned(obj: Mapping[str, Any], vocab: Vocabulary) -> bool:
    """Whether a key of the known event differs from one of its type's fields in case only."""
    own = {f.path[0] for f in fields_of(vocab) if f.tag == obj.get("type") and len(f.path) == 1}
    folded = {name.lower() for name in own}
    return any(isinstance(k, str) and k not in own and k.lower() in folded for k in obj)


def held_cells(obj: Mapping[str, Any], fields: Iterable[Field], fits: bool) -> set[str]:
    """The cells an object's ``fields`` hold: valid ones when its body ``fits``, else bad."""
    found: set[str] = set()
    for cell in VALID_CELLS if fits else BAD_CELLS:
        for f in fields:
            if not cell.holds(f):
                continue
            value = _value_at(obj, f.path)
            if cell.value is ABSENT:
                if value is ABSENT and _container(obj, f.path) is not None:
                    found.add(cell.id)
            elif value is not ABSENT and _same(value, cell.value):
                found.add(cell.id)
    return found


#: The cells :func:`cells_in` finds, with what each is.
CELLS: Mapping[str, str] = {
    **{c.id: c.what for c in VALID_CELLS},
    **{c.id: c.what for c in BAD_CELLS},
    **{
        f"names.type.{g}": f"an unrecognized type named {', '.join(n)}"
        for g, n in HOST_NAMES.items()
    },
    **{f"names.field.{g}": f"an unknown field named {', '.join(n)}" for g, n in HOST_NAMES.items()},
    TWIN_CELL: "an unknown field named as a known one but for case (Text beside text)",
}


__all__ = [
    "BAD_CELLS",
    "CELLS",
    "EDGES",
    "EDGES_REJECTING",
    "EDGE_STRATA",
    "ENVELOPE_CELLS",
    "ENVELOPE_EDGE_STRATA",
    "ENVELOPE_VARIANTS",
    "HOST_NAMES",
    "TWIN_CASES",
    "TWIN_CELL",
    "VALID_CELLS",
    "Cell",
    "Field",
    "cells_in",
    "fields_of",
    "held_cells",
    "twin_name",
    "walk",
    "write",
]
