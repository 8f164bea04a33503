"""Composable mutations of a valid run, each with a stable id and the rule it targets.

A mutation works on a :class:`Stream` — a list of lines that are either
objects still to be serialized or literal bytes — and marks the lines it
touched, so a test can ask "did the decoder reject exactly the line the
mutation broke?".  Object-level mutations run before byte-level ones
(CRLF, the missing final newline, the torn tail), in the order of
:data:`MUTATIONS`, so applying a set of mutations is deterministic.

Mutations never decide the expected outcome: the reference decoder does
(:mod:`cases`).  What each one *intends* is in its description and is
asserted by the test suite.

Example::

    from hypothesis import given
    from stella_conform.generators import cases

    @given(cases(mutations=["torn-tail", "unknown-type"]))
    def test_survives(case):
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.alphabets import NAME_CHARS, PAYLOAD_TEXT
from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose, choose_at, index_at, option_at
from stella_conform.generators.events import Event, strategies_for, tool_start
from stella_conform.generators.runs import encode
from stella_conform.schemas.fit import json_type_name
from stella_conform.schemas.tagged_unions import union_nodes
from stella_conform.schemas.vocabulary import Vocabulary

#: Unknown type names chosen to tempt a client into guessing.
TEMPTING_NAMES = (
    "text_v2",
    "tool_result_partial",
    "text_delta_v2",
    "run_completed",
    "complete",
    "turn_done",
    "stage_v2",
    "tool_start_batch",
    "error_detail",
    "quantum_reticulation",
    "holographic_verdict",
    "tool_result_stream",
    "final_text",
)
NEAR_MISS = {
    "text": ("Text", "TEXT", "text ", " text"),
    "run_complete": ("Run_Complete", "run-complete", "runComplete", "run_complete "),
    "tool_result": ("ToolResult", "tool-result"),
    "error": ("Error", "ERROR", "error "),
    "text_delta": ("TextDelta", "text-delta", "text_delta "),
}
#: Corrupt lines, by the kind of parser that would take them for JSON: the classic ones,
#: then number spellings the grammar refuses (jq 1.6 reads 01, +1, .5 and 1.), a raw
#: control character in a string (Python's json.loads(strict=False) reads it), escapes
#: JSON does not have, literals it does not have, and bytes that are not UTF-8 (Go's
#: encoding/json replaces them).  Drawn a family first, so each is drawn often.
CORRUPT_FAMILIES: tuple[tuple[bytes, ...], ...] = (
    (
        b'{"type":"text","text":"unterminated',
        b'{"type":"text",}',
        b"not json at all",
        b"{'type': 'text'}",
        b'{"type":"text" "text":"x"}',
        b"}",
        b'{type:"text",text:"bare keys"}',
    ),
    (
        b'{"type":"error","message":"x","retryable":True}',
        b'{"type":"text","text":None}',
        b'{"type":"budget_tick","spent_usd":NaN,"mode":"observed"}',
        b'{"type":"budget_tick","spent_usd":-Infinity,"mode":"observed"}',
    ),
    (
        b'{"type":"budget_tick","spent_usd":01,"mode":"observed"}',
        b'{"type":"budget_tick","spent_usd":+1,"mode":"observed"}',
        b'{"type":"budget_tick","spent_usd":.5,"mode":"observed"}',
        b'{"type":"budget_tick","spent_usd":1.,"mode":"observed"}',
        b'{"type":"budget_tick","spent_usd":0x1F,"mode":"observed"}',
    ),
    (
        b'{"type":"text","text":"a\tb"}',
        b'{"type":"text","text":"a\x01b"}',
        # the bound: jq 1.6's lexer takes a raw U+001F; a shell's `read` drops a NUL
        b'{"type":"text","text":"a\x1fb"}',
        b'{"type":"text","text":"a\x00b"}',
    ),
    (b'{"type":"text","text":"bad \\x41 escape"}', b'{"type":"text","text":"bad \\\' escape"}'),
    (b'{"type":"text","text":"\xff\xfe"}',),
)
CORRUPT_LINES: tuple[bytes, ...] = tuple(line for family in CORRUPT_FAMILIES for line in family)


def json_copy(value: Any) -> Any:
    """A copy of a JSON value (dicts and lists copied all the way down).

    ``copy.deepcopy`` keeps a memo for shared and cyclic objects, which JSON has none
    of; copying every event of a run with it would be a tenth of a case's generation.
    """
    if isinstance(value, dict):
        # most values of an event are strings and numbers: copied without a call each
        return {
            key: json_copy(item) if isinstance(item, (dict, list)) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [json_copy(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


@dataclass
class Line:
    """One line of a stream under construction."""

    obj: Any = None
    raw: bytes | None = None
    marks: set[str] = field(default_factory=set)
    #: This line's terminator when it is not the stream's (a CRLF line in an LF stream).
    end: bytes | None = None

    def to_bytes(self) -> bytes:
        return self.raw if self.raw is not None else encode(self.obj)

    @property
    def is_event(self) -> bool:
        return self.raw is None and isinstance(self.obj, dict)


@dataclass
class Stream:
    """A stream under construction: lines plus how they are terminated."""

    lines: list[Line]
    final_newline: bool = True
    crlf: bool = False

    @classmethod
    def of(cls, events: list[Event]) -> Stream:
        return cls([Line(json_copy(e)) for e in events])

    def to_bytes(self) -> bytes:
        end = b"\r\n" if self.crlf else b"\n"
        if any(line.end is not None for line in self.lines):
            ends = [line.end or end for line in self.lines]
            if ends and not self.final_newline:
                ends[-1] = b""
            return b"".join(line.to_bytes() + e for line, e in zip(self.lines, ends, strict=True))
        parts = [line.to_bytes() for line in self.lines]
        body = end.join(parts)
        return body + end if (self.final_newline and parts) else body

    def marked(self, mutation_id: str) -> list[int]:
        """1-based line numbers the mutation touched."""
        return [i for i, line in enumerate(self.lines, 1) if mutation_id in line.marks]

    def event_indexes(self, vocab: Vocabulary, *, known: bool = True) -> list[int]:
        return [
            i
            for i, line in enumerate(self.lines)
            if line.is_event
            and isinstance(line.obj.get("type"), str)
            and (line.obj["type"] in vocab.known) == known
        ]


Apply = Callable[[st.DrawFn, Stream, Vocabulary], None]


@dataclass(frozen=True)
class Mutation:
    """A named transformation; ``rule`` is the rule or guarantee it targets."""

    id: str
    rule: str
    description: str
    apply: Apply
    byte_level: bool = False
    #: The registered point of the contract (``stella_conform.oracle.readings``) the mutation
    #: produces, when its cases can be read two ways; the oracle lists both.
    reading: str | None = None


# ------------------------------------------------------------------ helpers


def _insert_at(draw: st.DrawFn, stream: Stream, line: Line, *, not_last: bool = False) -> int:
    hi = len(stream.lines) - (1 if not_last and stream.lines else 0)
    at = between(draw, 0, max(0, hi))
    stream.lines.insert(at, line)
    return at


def _unknown_tag(c: Content, vocab: Vocabulary) -> str:
    """A tempting name half the time, an invented one otherwise (the first name when simplest).

    Never a type this stella writes: not one the client knows, nor one it merely does not
    claim (that one would be a real event of the stream, not an invented one).
    """
    names = [n for n in TEMPTING_NAMES if n not in vocab.written and n not in vocab.recognized]
    if c.chance():
        invented = c.chars(NAME_CHARS, 3, 12)
        if invented not in vocab.written and invented not in vocab.recognized:
            return invented
    return c.pick(names)


def _unknown_event(draw: st.DrawFn, vocab: Vocabulary, mark: str) -> Line:
    """An unrecognized event, often wearing the fields of a known one."""
    c = Content(draw(SEEDS))
    tag = _unknown_tag(c, vocab)
    # the most tempting unknown type wears the body of the known type it is named after
    namesakes = sorted((t for t in vocab.known if tag.startswith(t + "_")), key=len)
    if namesakes and c.count(0, 3) > 0:
        body = dict(draw(strategies_for(vocab).for_type(namesakes[-1])))
    elif c.chance():
        donor = c.pick(sorted(vocab.known or vocab.written))
        body = dict(draw(strategies_for(vocab).for_type(donor)))
    else:
        body = {"splines": ["alpha", "beta"], "nested": {"depth": 3}}
    body.pop("type", None)
    return Line({"type": tag, **body}, marks={mark})


def _field_types(vocab: Vocabulary, tag: str, name: str) -> list[str] | None:
    """JSON types a field of a known type may take, when the schema says plainly."""
    types = _schema_field_types(vocab, tag, name)
    return list(types) if types is not None else None


@lru_cache(maxsize=4096)
def _schema_field_types(vocab: Vocabulary, tag: str, name: str) -> tuple[str, ...] | None:
    """:func:`_field_types`, worked out once per field (mutations ask it per event)."""
    prop = vocab.members[tag].get("properties", {}).get(name)
    seen = 0
    while isinstance(prop, Mapping) and "$ref" in prop and seen < 8:
        target: Any = vocab.root
        for part in str(prop["$ref"])[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        prop = target
        seen += 1
    if not isinstance(prop, Mapping):
        return None
    if "type" in prop:
        t = prop["type"]
        return (t,) if isinstance(t, str) else tuple(t)
    if "enum" in prop or "const" in prop:
        values = list(prop.get("enum", [prop.get("const")]))
        return tuple(sorted({json_type_name(v) for v in values}))
    branches = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(branches, list):
        found: set[str] = set()
        for branch in branches:
            if isinstance(branch, Mapping) and "const" in branch:
                found.add(json_type_name(branch["const"]))
            elif isinstance(branch, Mapping) and isinstance(branch.get("type"), str):
                found.add(branch["type"])
            else:
                return None
        return tuple(sorted(found))
    return None


WRONG_VALUES: Mapping[str, tuple[Any, ...]] = {
    "string": (5, True, ["x"], {"text": "x"}),
    "integer": ("5", 1.5, True, [1]),
    "number": ("0.1", True, [0.1]),
    "boolean": ("true", 1, None),
    "object": ("x", 7, ["x"]),
    "array": ("x", {"0": "x"}, 7),
    "null": (0, "null"),
}


def _required_fields(vocab: Vocabulary, tag: str) -> list[str]:
    required = [f for f in vocab.members[tag].get("required", ()) if f != "type"]
    archived = vocab.archived.get(tag)
    return [f for f in required if archived is None or f != archived.missing]


def _break_event(
    draw: st.DrawFn,
    stream: Stream,
    vocab: Vocabulary,
    mark: str,
    breaker: Callable[[st.DrawFn, Event, Vocabulary], Event | None],
) -> None:
    """Break one known event so its body no longer fits; insert one if none can be."""
    candidates = stream.event_indexes(vocab)
    # from a drawn starting point on (one draw, where a permutation cost one per event)
    start = between(draw, 0, len(candidates) - 1) if candidates else 0
    for index in candidates[start:] + candidates[:start]:
        line = stream.lines[index]
        broken = breaker(draw, json_copy(line.obj), vocab)
        if (
            broken is not None
            and vocab.misfit(broken["type"], vocab.normalize(broken["type"], broken)) is not None
            and vocab.archived_shape(broken["type"], broken) is None
        ):
            line.obj = broken
            line.marks.add(mark)
            return
    # nothing in the run can be broken this way: add a known event and break that
    for tag in ("tool_start", "text", *sorted(vocab.known)):
        if tag not in vocab.known:
            continue
        fresh = dict(draw(strategies_for(vocab).for_type(tag)))
        broken = breaker(draw, fresh, vocab)
        if (
            broken is not None
            and vocab.misfit(tag, vocab.normalize(tag, broken)) is not None
            and vocab.archived_shape(tag, broken) is None
        ):
            _insert_at(draw, stream, Line(broken, marks={mark}))
            return
    raise AssertionError(f"{mark}: no known type of {vocab.ident} can be broken this way")


# ------------------------------------------------------------------ object-level


def unknown_type(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    _insert_at(draw, stream, _unknown_event(draw, vocab, "unknown-type"))


def unknown_in_tool_pair(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    mark = "unknown-in-tool-pair"
    starts = [
        i
        for i, line in enumerate(stream.lines)
        if line.is_event and line.obj.get("type") == "tool_start"
    ]
    if starts:
        at = choose(draw, starts) + 1
        stream.lines.insert(at, _unknown_event(draw, vocab, mark))
        return
    # no tool pair yet: add one, with the unknown event inside it
    call = draw(tool_start(call_id="call_99"))
    result = {
        "type": "tool_result",
        "call_id": "call_99",
        "output": {"ok": {"content": ""}},
        "duration_ms": 1,
    }
    at = between(draw, 0, max(0, len(stream.lines) - 1))
    stream.lines[at:at] = [Line(call), _unknown_event(draw, vocab, mark), Line(result)]


def type_missing(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    body = choose(draw, ({"call_id": "c1", "text": "no type"}, {}, {"kind": "text"}))
    _insert_at(draw, stream, Line(dict(body), marks={"type-missing"}))


def type_non_string(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    value = choose(draw, (5, None, True, ["text"], {"name": "text"}, 1.5))
    _insert_at(draw, stream, Line({"type": value, "text": "x"}, marks={"type-non-string"}))


def _near_misses(vocab: Vocabulary) -> list[tuple[str, str]]:
    """(known type, a spelling of it that is another string) the client could mistake."""
    return [
        (t, v)
        for t, vs in NEAR_MISS.items()
        if t in vocab.known
        for v in vs
        if v not in vocab.recognized
    ]


def type_near_miss(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    tag, variant = choose(draw, _near_misses(vocab))
    body = dict(draw(strategies_for(vocab).for_type(tag)))
    body["type"] = variant
    _insert_at(draw, stream, Line(body, marks={"type-near-miss"}))


def _pick_known(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> Line | None:
    indexes = stream.event_indexes(vocab)
    return stream.lines[choose(draw, indexes)] if indexes else None


_EXTRA_NAMES = ("confidence", "lang", "trace_id", "x_vendor", "_meta", "v2")


def _extra_value(c: Content) -> Any:
    """An unknown field's value: null (the simplest), a boolean, a small integer, a short
    string, a nested object or an empty list."""
    kind = c.count(0, 5)
    if kind == 0:
        return None
    if kind == 1:
        return c.chance()
    if kind == 2:
        return c.count(-5, 5)
    if kind == 3:
        return c.chars(PAYLOAD_TEXT, 0, 5)
    # fresh objects per call: a shared one would carry one case's mutations into the
    # next, and a nested mutation could put it inside itself (a cycle json cannot write)
    if kind == 4:
        return {"nested": {"deep": [1, 2, {"k": "v"}]}}
    return []


def extra_fields(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = _pick_known(draw, stream, vocab)
    if line is None:
        return
    c = Content(draw(SEEDS))
    for name in c.sample(_EXTRA_NAMES, c.count(1, 3)):
        line.obj.setdefault(name, _extra_value(c))
    line.marks.add("extra-fields")


def _nested_objects(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if depth > 0:
            found.append(value)
        for child in value.values():
            found.extend(_nested_objects(child, depth + 1))
    elif isinstance(value, list):
        for child in value:
            found.extend(_nested_objects(child, depth + 1))
    return found


def extra_fields_nested(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    indexes = [i for i in stream.event_indexes(vocab) if _nested_objects(stream.lines[i].obj)]
    if indexes:
        line = stream.lines[choose(draw, indexes)]
    else:  # nothing nested in this run: add a tool_start, whose call is an object
        line = Line(dict(draw(tool_start(call_id="call_98"))))
        _insert_at(draw, stream, line, not_last=True)
    unions = {id(node) for node in union_nodes(vocab, line.obj["type"], line.obj)}
    targets = [t for t in _nested_objects(line.obj) if id(t) not in unions]
    if not targets:  # only a wrapper is nested: step inside its arm
        targets = [v for t in _nested_objects(line.obj) for v in t.values() if isinstance(v, dict)]
    if not targets:
        return
    target = targets[between(draw, 0, len(targets) - 1)]
    c = Content(draw(SEEDS))
    target.setdefault(c.pick(_EXTRA_NAMES), _extra_value(c))
    line.marks.add("extra-fields-nested")


def extra_key_beside_arm(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A key beside the single key of a tagged union (``{"ok": {...}, "x": 1}``)."""
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        nodes = union_nodes(vocab, line.obj["type"], line.obj)
        if nodes:
            c = Content(draw(SEEDS))
            c.pick(nodes).setdefault(c.pick(_EXTRA_NAMES), _extra_value(c))
            line.marks.add("extra-key-beside-arm")
            return
    if "tool_result" not in vocab.known:
        return
    c = Content(draw(SEEDS))
    result = {
        "type": "tool_result",
        "call_id": "call_97",
        "output": {"ok": {"content": ""}, c.pick(_EXTRA_NAMES): _extra_value(c)},
        "duration_ms": 1,
    }
    _insert_at(draw, stream, Line(result, marks={"extra-key-beside-arm"}))


def extra_fields_borrowed(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = _pick_known(draw, stream, vocab)
    if line is None:
        return
    tag = line.obj["type"]
    own = set(vocab.members[tag].get("properties", {}))
    alias = vocab.aliases.get(tag)
    if alias is not None:
        own |= {alias.field, alias.legacy}
    # any type this stella writes lends its fields, known to the client or not: a client
    # that knows one type still has fields of others to ignore
    donors = sorted(t for t in vocab.written if t != tag)
    donor = dict(draw(strategies_for(vocab).for_type(choose(draw, donors))))
    borrowed = [k for k in donor if k not in own and k not in ("type", "ts")]
    for name in borrowed[: between(draw, 1, 3)]:
        line.obj[name] = donor[name]
    line.marks.add("extra-fields-borrowed")


def extra_field_huge(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    line = _pick_known(draw, stream, vocab)
    if line is None:
        return
    line.obj["attachment"] = "x" * (65 * 1024 + between(draw, 0, 64))
    line.marks.add("extra-field-huge")


def _huge(size: int) -> Apply:
    """A long line made of a *known* field (a preview delta), so no unknown field is involved."""

    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        mark = f"long-line-{'1m' if size > 1_000_000 else '64k'}"
        filler = "long preview " * ((size + between(draw, 0, 64)) // 13 + 1)
        if "text_delta" in vocab.known:
            line = Line({"type": "text_delta", "delta": filler}, marks={mark})
            _insert_at(draw, stream, line, not_last=True)
            return
        target = _pick_known(draw, stream, vocab)
        if target is not None:
            target.obj["attachment"] = filler
            target.marks.add(mark)

    return apply


def legacy_alias(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    # a line still in the self-describing spelling (a recorded run may have legacy ones)
    indexes = [
        i
        for i in stream.event_indexes(vocab)
        if stream.lines[i].obj["type"] in vocab.aliases
        and vocab.aliases[stream.lines[i].obj["type"]].field in stream.lines[i].obj
    ]
    if not indexes:
        tag = choose(draw, sorted(vocab.aliases)) if vocab.aliases else None
        if tag is None:
            return
        line = Line(dict(draw(strategies_for(vocab).for_type(tag))))
        _insert_at(draw, stream, line, not_last=True)
    else:
        line = stream.lines[choose(draw, indexes)]
    alias = vocab.aliases[line.obj["type"]]
    line.obj[alias.legacy] = line.obj.pop(alias.field)  # legacy spelling only
    line.marks.add("legacy-alias")


def field_and_alias(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A field beside its legacy alias (reading A: the self-describing one wins; B: an error)."""
    tag = choose(draw, sorted(vocab.aliases)) if vocab.aliases else None
    if tag is None:
        return
    line = Line(dict(draw(strategies_for(vocab).for_type(tag))), marks={"field-and-alias"})
    line.obj[vocab.aliases[tag].legacy] = "IGNORED: the self-describing name wins"
    _insert_at(draw, stream, line)


def ts_removed(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    for line in stream.lines:
        if line.is_event and "ts" in line.obj:
            del line.obj["ts"]
            line.marks.add("ts-removed")


def ts_backwards(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Steps of -10 s to +2 s from one seed (the simplest: back 10 s on every line)."""
    pace = Content(draw(SEEDS))
    clock = 1_700_000_000_000 + pace.count(0, 100_000_000_000)
    for line in stream.lines:
        if line.is_event:
            clock = max(0, clock + pace.count(-10_000, 2_000))
            line.obj["ts"] = clock
            line.marks.add("ts-backwards")


#: ts at the edges of its range.
TS_EDGES = (0, 1, 2**53 + 1, 2**63, 2**64 - 1)


def ts_extreme(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Each known event's ts one of :data:`TS_EDGES` (a stratum: all of them the one)."""
    edges = Content(draw(SEEDS))
    every = option_at(draw, "ts-edge", len(TS_EDGES))
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        line.obj["ts"] = edges.pick(TS_EDGES) if every is None else TS_EDGES[every]
        line.marks.add("ts-extreme")


def _missing(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    fields = _required_fields(vocab, event["type"])
    if not fields:
        return None
    name = choose(draw, fields)
    event.pop(name, None)
    alias = vocab.aliases.get(event["type"])
    if alias is not None and name == alias.field:
        event.pop(alias.legacy, None)
    return event


def _wrong_type(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    options: list[tuple[str, Any]] = []
    for name in _required_fields(vocab, tag):
        types = _field_types(vocab, tag, name)
        if types:
            bad = [
                v
                for t in types
                for v in WRONG_VALUES.get(t, ())
                if json_type_name(v) not in types
                and not (json_type_name(v) == "integer" and "number" in types)
            ]
            options.extend((name, v) for v in bad)
    if not options:
        return None
    name, value = choose(draw, options)
    event[name] = json_copy(value)
    return event


def _null(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    fields = [
        f
        for f in _required_fields(vocab, tag)
        if "null" not in (_field_types(vocab, tag, f) or ["null"])
    ]
    if not fields:
        return None
    event[choose(draw, fields)] = None
    return event


def _wrong_nesting(draw: st.DrawFn, event: Event, vocab: Vocabulary) -> Event | None:
    tag = event["type"]
    objects = [
        f
        for f in _required_fields(vocab, tag)
        if _field_types(vocab, tag, f) == ["object"] and isinstance(event.get(f), dict)
    ]
    if not objects:
        return None
    name = choose(draw, objects)
    inner = event[name]
    choice = between(draw, 0, 2)
    if choice == 0:
        event[name] = [inner]  # wrapped one level too deep
    elif choice == 1:
        event[name] = encode(inner).decode()  # serialized twice: a string
    else:
        event.update(inner)  # flattened one level too shallow
        del event[name]
    return event


def _breakable(vocab: Vocabulary, test: Callable[[list[str] | None], bool]) -> bool:
    """Some known type has a required field whose declared types pass ``test``."""
    return any(
        test(_field_types(vocab, tag, name))
        for tag in vocab.known
        for name in _required_fields(vocab, tag)
    )


def applicable(mutation_id: str, vocab: Vocabulary) -> bool:
    """Whether the mutation can be made with the types the client knows.

    A client that knows only ``text`` and ``run_complete`` has no known type with a
    nested object, so no rule-4 case of the wrong-nesting kind exists for it: that
    mutation is left out of its cases instead of failing to generate.
    """
    if mutation_id in ("bad-body-missing-field", "bad-read-values"):
        return _breakable(vocab, lambda types: True)
    if mutation_id == "bad-body-wrong-type":
        return _breakable(vocab, lambda types: bool(types))
    if mutation_id == "bad-body-null":
        return _breakable(vocab, lambda types: "null" not in (types or ["null"]))
    if mutation_id == "bad-body-wrong-nesting":
        return _breakable(vocab, lambda types: types == ["object"])
    if mutation_id == "type-near-miss":
        return bool(_near_misses(vocab))
    return True


def _breaker(fn: Callable[[st.DrawFn, Event, Vocabulary], Event | None], mark: str) -> Apply:
    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        _break_event(draw, stream, vocab, mark, fn)

    return apply


def non_json_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    raw = choose_at(draw, "corrupt-line", choose_at(draw, "corrupt-family", CORRUPT_FAMILIES))
    _insert_at(draw, stream, Line(raw=raw, marks={"non-json-line"}), not_last=True)


def not_object_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    smuggled = b'"{\\"type\\":\\"text\\",\\"text\\":\\"smuggled\\"}"'
    raw = choose(draw, (b"[1,2,3]", b'"text"', b"42", b"null", b"true", smuggled))
    _insert_at(draw, stream, Line(raw=raw, marks={"not-object-line"}), not_last=True)


# ------------------------------------------------------------------ registered readings
# Each produces one point of stella_conform.oracle.readings: the oracle lists both readings.


def scopeless_stage(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A stage recorded before scope existed."""
    if "stage" not in vocab.known:
        return
    name = choose(draw, ("execute", "plan", "verify", "complete"))
    _insert_at(draw, stream, Line({"type": "stage", "name": name}, marks={"scopeless-stage"}))


def ts_null(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """ts: null on known events: the absent stamp (reading A), or a ts that is not the
    integer the wire schema types it as (reading B of ``ts-null``)."""
    indexes = stream.event_indexes(vocab)
    chosen = Content(draw(SEEDS)) if indexes else None
    for index in chosen.sample(indexes, chosen.count(1, len(indexes))) if chosen else ():
        stream.lines[index].obj["ts"] = None
        stream.lines[index].marks.add("ts-null")


#: ts values no u64 holds: negative, a fraction, a string, one past u64, i64's least.
TS_OUT_OF_RANGE: tuple[Any, ...] = (-5, 1.5, "1754582400123", 2**64, -(2**63))


def ts_out_of_range(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A ts no u64 can hold on one known event whose body otherwise fits."""
    indexes = stream.event_indexes(vocab)
    if not indexes:
        return
    line = stream.lines[choose(draw, indexes)]
    line.obj["ts"] = choose_at(draw, "ts-out-of-range", TS_OUT_OF_RANGE)
    line.marks.add("ts-out-of-range")


#: Unicode whitespace beyond JSON's four, as UTF-8.
UNICODE_SPACES = (" ", " ", " ", "", "", "　", "")


def unicode_whitespace(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Unicode whitespace around a line, or a line made of it."""
    space = choose(draw, UNICODE_SPACES).encode("utf-8")
    events: list[int] = [i for i, line in enumerate(stream.lines) if line.is_event]
    around: bool = draw(st.booleans())
    if events and around:
        line = stream.lines[choose(draw, events)]
        before, after = choose(draw, ((space, b""), (b"", space), (space, space)))
        line.raw = before + line.to_bytes() + after
        line.marks.add("unicode-whitespace")
    else:
        _insert_at(draw, stream, Line(raw=space, marks={"unicode-whitespace"}), not_last=True)


def negative_zero(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """-0 in an integer field: the duration of a tool result (ts would not do: reading B of
    ts-out-of-range ignores ts altogether)."""
    if "tool_result" not in vocab.known:
        return
    result = {"type": "tool_result", "call_id": "call_96", "output": {"ok": {"content": ""}}}
    line = encode(result)[:-1] + b',"duration_ms":-0}'
    _insert_at(draw, stream, Line(raw=line, marks={"negative-zero"}))


def _edge_unknown(raw: bytes, mark: str) -> Apply:
    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        tag = _unknown_tag(Content(draw(SEEDS)), vocab)
        line = encode({"type": tag})[:-1] + b',"payload":' + raw + b"}"
        _insert_at(draw, stream, Line(raw=line, marks={mark}), not_last=True)

    return apply


def deep_nesting(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """An unrecognized event nested deeper than 128 levels."""
    depth = between(draw, 130, 400)
    _edge_unknown(b"[" * depth + b"]" * depth, "deep-nesting")(draw, stream, vocab)


def lone_surrogate(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A lone surrogate escape in the text of a known event."""
    if "text" not in vocab.known:
        return
    escape = choose(draw, (b"\\ud800", b"\\udfff", b"\\udbff"))
    line = b'{"type":"text","text":"half ' + escape + b' a pair"}'
    _insert_at(draw, stream, Line(raw=line, marks={"lone-surrogate"}), not_last=True)


def duplicate_keys(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A key twice in a known event: the last one wins, or the line is an error."""
    if "text" not in vocab.known:
        return
    first = choose(draw, ("draft", "", "first"))
    line = b'{"type":"text","text":' + encode(first) + b',"text":"final"}'
    _insert_at(draw, stream, Line(raw=line, marks={"duplicate-keys"}))


def utf8_bom(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A UTF-8 byte order mark before the first line."""
    if stream.lines:
        first = stream.lines[0]
        first.raw = b"\xef\xbb\xbf" + first.to_bytes()
        first.marks.add("utf8-bom")


# ------------------------------------------------------------------ byte-level


def blank_lines(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Empty and whitespace-only lines (a lone CR among them: a blank CRLF line)."""
    kinds = (b"", b"   ", b"\t", b" \t ", b"\r", b" \r")
    for _ in range(between(draw, 1, 3)):
        _insert_at(draw, stream, Line(raw=choose(draw, kinds), marks={"blank-lines"}))
    # and, from one seed (none for the simplest), more of them: before the first line,
    # after the last, and of every kind
    c = Content(draw(SEEDS))
    around = option_at(draw, "blank-around", 2)  # a stratum: before the first, after the last
    if c.chance() or around:
        stream.lines.insert(0, Line(raw=c.pick(kinds), marks={"blank-lines"}))
    if c.chance() or around:
        stream.lines.append(Line(raw=c.pick(kinds), marks={"blank-lines"}))
    for raw in c.sample(kinds, c.count(0, 3)):
        at = c.count(0, len(stream.lines))
        stream.lines.insert(at, Line(raw=raw, marks={"blank-lines"}))


def crlf(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """CRLF on every line, or (a third of the time) on some lines of an LF stream."""
    if index_at(draw, "crlf-lines", 3) < 2 or len(stream.lines) < 2:
        stream.crlf = True
        return
    c = Content(draw(SEEDS))
    for index in [0, *c.sample(range(1, len(stream.lines)), c.count(0, len(stream.lines) - 1))]:
        stream.lines[index].end = b"\r\n"
        stream.lines[index].marks.add("crlf")


def no_trailing_newline(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    stream.final_newline = False


TORN_KINDS = ("anywhere", "mid-key", "mid-string", "mid-escape", "mid-utf8")


def _inside_strings(data: bytes, openers: tuple[bytes, ...]) -> list[int]:
    """Cut points strictly inside the strings that follow an opener (a key or a value)."""
    spots: list[int] = []
    for i in range(len(data) - 1):
        if data[i : i + 2] in openers:
            j = i + 2
            while j < len(data) and data[j : j + 1] != b'"':
                j += 2 if data[j : j + 1] == b"\\" else 1
            spots.extend(range(i + 2, min(j, len(data)) + 1))
    return spots


def torn_tail(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Cut the last line short, as a process killed mid-write leaves it."""
    events = [i for i, line in enumerate(stream.lines) if line.is_event]
    if not events:
        return
    index = events[-1]
    del stream.lines[index + 1 :]  # the torn line is the last line
    line = stream.lines[index]
    obj = dict(line.obj)
    kind = choose_at(draw, "torn-kind", TORN_KINDS)
    if kind == "mid-escape":
        obj["note"] = 'say "hi"\n'
    elif kind == "mid-utf8":
        obj["note"] = "café ☃"
    data = encode(obj)
    if kind == "mid-key":
        spots = _inside_strings(data, (b'{"', b',"'))
    elif kind == "mid-string":
        spots = _inside_strings(data, (b':"',))
    elif kind == "mid-escape":
        spots = [i + 1 for i in range(len(data)) if data[i : i + 1] == b"\\"]
    elif kind == "mid-utf8":
        spots = [i for i in range(1, len(data)) if 0x80 <= data[i] < 0xC0]
    else:
        spots = list(range(1, len(data)))
    spots = [s for s in spots if 1 <= s < len(data)] or list(range(1, len(data)))
    cut = choose(draw, spots)
    line.raw = data[:cut]
    line.marks.update(("torn-tail", f"torn-tail:{kind}"))
    stream.final_newline = False


def torn_then_newline(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A torn last line followed by a newline: the final line, or a corrupt one?"""
    if "torn-tail" not in {m for line in stream.lines for m in line.marks}:
        torn_tail(draw, stream, vocab)
    for line in stream.lines:
        if "torn-tail" in line.marks:
            line.marks.add("torn-then-newline")
            stream.final_newline = True


def _registry() -> dict[str, Mutation]:
    items = [
        Mutation(
            "unknown-type",
            "R3",
            "an unrecognized type, named to tempt guessing or "
            "wearing a known type's fields, inserted anywhere",
            unknown_type,
        ),
        Mutation(
            "unknown-in-tool-pair",
            "R3",
            "an unrecognized type between a tool_start and its tool_result",
            unknown_in_tool_pair,
        ),
        Mutation(
            "type-missing",
            "R3",
            "an object with no type",
            type_missing,
            reading="missing-or-non-string-type",
        ),
        Mutation(
            "type-non-string",
            "R3",
            "a type that is not a string",
            type_non_string,
            reading="missing-or-non-string-type",
        ),
        Mutation(
            "type-near-miss",
            "R2",
            "a case or spelling variant of a known type name with that type's body: unrecognized",
            type_near_miss,
        ),
        Mutation("extra-fields", "R5", "unknown top-level fields on a known event", extra_fields),
        Mutation(
            "extra-fields-nested",
            "R5",
            "an unknown field inside a nested object of a known event",
            extra_fields_nested,
        ),
        Mutation(
            "extra-fields-borrowed",
            "R5",
            "fields borrowed from other known types",
            extra_fields_borrowed,
        ),
        Mutation(
            "extra-field-huge",
            "R5",
            "an unknown field with a value over 64 KiB on a known event",
            extra_field_huge,
        ),
        Mutation(
            "long-line-64k",
            "R1",
            "a known event over 64 KiB (a large unknown field)",
            _huge(65 * 1024),
        ),
        Mutation(
            "long-line-1m",
            "R1",
            "a known event over 1 MiB (a large unknown field)",
            _huge(1024 * 1024 + 1),
        ),
        Mutation(
            "legacy-alias",
            "aliases",
            "a legacy field spelling in place of the self-describing one",
            legacy_alias,
        ),
        Mutation("ts-removed", "ts", "every ts removed", ts_removed),
        Mutation("ts-backwards", "ts", "ts on every line, sometimes going backwards", ts_backwards),
        Mutation(
            "ts-extreme", "ts", "ts at the edges of its range (0, 2^53+1, 2^64-1)", ts_extreme
        ),
        Mutation(
            "bad-body-missing-field",
            "R4",
            "a known event missing a required field",
            _breaker(_missing, "bad-body-missing-field"),
        ),
        Mutation(
            "bad-body-wrong-type",
            "R4",
            "a required field of the wrong JSON type",
            _breaker(_wrong_type, "bad-body-wrong-type"),
        ),
        Mutation(
            "bad-body-null",
            "R4",
            "null in a required field that does not allow it",
            _breaker(_null, "bad-body-null"),
        ),
        Mutation(
            "bad-body-wrong-nesting",
            "R4",
            "a nested object wrapped, stringified or flattened",
            _breaker(_wrong_nesting, "bad-body-wrong-nesting"),
        ),
        Mutation(
            "non-json-line", "R4", "a corrupt (non-JSON) line that is not the last", non_json_line
        ),
        Mutation(
            "not-object-line",
            "R1",
            "a JSON value that is not an object (a JSON string holding an event among them)",
            not_object_line,
            reading="non-object-line",
        ),
        Mutation(
            "scopeless-stage",
            "R3",
            "a stage without scope (an archived shape)",
            scopeless_stage,
            reading="scopeless-stage",
        ),
        Mutation(
            "field-and-alias",
            "aliases",
            "a field beside its legacy alias on one line",
            field_and_alias,
            reading="field-and-alias",
        ),
        Mutation(
            "ts-null",
            "ts",
            "ts: null on known events (the absent stamp)",
            ts_null,
            reading="ts-null",
        ),
        Mutation(
            "ts-out-of-range",
            "ts",
            "a ts that is negative, fractional, a string or beyond u64 on one known event",
            ts_out_of_range,
            reading="ts-out-of-range",
        ),
        Mutation(
            "unicode-whitespace",
            "R1",
            "Unicode whitespace (NBSP, U+2028, form feed...) around a line or as a line",
            unicode_whitespace,
            reading="unicode-whitespace",
        ),
        Mutation(
            "negative-zero",
            "R4",
            "-0 as the duration_ms of a tool result",
            negative_zero,
            reading="negative-zero",
        ),
        Mutation(
            "number-beyond-f64",
            "R3",
            "1e400 inside an unrecognized event",
            _edge_unknown(b"[1e400,-1E+999]", "number-beyond-f64"),
            reading="number-beyond-f64",
        ),
        Mutation(
            "lone-surrogate",
            "R1",
            "a lone surrogate escape in a text",
            lone_surrogate,
            reading="lone-surrogate",
        ),
        Mutation(
            "deep-nesting",
            "R3",
            "an unrecognized event nested deeper than 128 levels",
            deep_nesting,
            reading="deep-nesting",
        ),
        Mutation(
            "duplicate-keys",
            "R2",
            "a key twice in a known event",
            duplicate_keys,
            reading="duplicate-keys",
        ),
        Mutation(
            "extra-key-beside-arm",
            "R5",
            "a key beside the single key of a tagged union",
            extra_key_beside_arm,
            reading="extra-key-beside-arm",
        ),
        Mutation(
            "utf8-bom",
            "R1",
            "a UTF-8 byte order mark before the first line",
            utf8_bom,
            reading="utf8-bom",
        ),
        Mutation(
            "blank-lines", "R1", "blank and whitespace-only lines", blank_lines, byte_level=True
        ),
        Mutation("crlf", "R1", "CRLF line endings, on every line or some", crlf, byte_level=True),
        Mutation(
            "no-trailing-newline",
            "R6",
            "a complete last line without its newline",
            no_trailing_newline,
            byte_level=True,
        ),
        Mutation(
            "torn-tail",
            "R6",
            "the last line cut short (mid-key, mid-string, "
            "mid-escape, inside a UTF-8 character, or anywhere)",
            torn_tail,
            byte_level=True,
        ),
        Mutation(
            "torn-then-newline",
            "R6",
            "a torn last line followed by a newline",
            torn_then_newline,
            byte_level=True,
            reading="torn-then-newline",
        ),
    ]
    return {m.id: m for m in items}


def _with_hazards() -> dict[str, Mutation]:
    """The structural mutations above, then the content hazards (their own module)."""
    from stella_conform.generators.hazards import HAZARDS
    from stella_conform.generators.text import TEXT

    every = [*_registry().values(), *HAZARDS, *TEXT]
    # object-level first (structure, then content), byte-level last, each in registry order
    ordered = [m for m in every if not m.byte_level] + [m for m in every if m.byte_level]
    return {m.id: m for m in ordered}


MUTATIONS: Mapping[str, Mutation] = _with_hazards()


def _rejecting() -> frozenset[str]:
    from stella_conform.generators.hazards import HAZARDS_REJECTING
    from stella_conform.generators.text import TEXT_REJECTING

    return HAZARDS_REJECTING | TEXT_REJECTING


#: Mutations after which a correct client must reject the stream.
REJECTING = (
    frozenset(
        {
            "bad-body-missing-field",
            "bad-body-wrong-type",
            "bad-body-null",
            "bad-body-wrong-nesting",
            "non-json-line",
            "not-object-line",
        }
    )
    | _rejecting()
)


def canonical_order(ids: list[str] | tuple[str, ...]) -> list[str]:
    """Mutation ids in application order (object-level first, torn tail last)."""
    order = list(MUTATIONS)
    unknown = [i for i in ids if i not in MUTATIONS]
    if unknown:
        raise ValueError(f"unknown mutation id(s): {', '.join(unknown)}")
    return sorted(dict.fromkeys(ids), key=order.index)


def apply_mutations(
    draw: st.DrawFn, stream: Stream, ids: list[str] | tuple[str, ...], vocab: Vocabulary
) -> Stream:
    for mutation_id in canonical_order(ids):
        MUTATIONS[mutation_id].apply(draw, stream, vocab)
    return stream
