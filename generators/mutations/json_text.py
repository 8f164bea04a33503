"""Lines that test a client's JSON parser rather than its reading of the stream: corrupt
JSON, a value that is not an object, and the edges of JSON text (-0, a number beyond f64, a
lone surrogate, nesting deeper than 128 levels, a key twice).

Most edges can be read two ways: each produces a registered reading
(``stella_conform.oracle.readings``) and the oracle lists both.
"""

from __future__ import annotations

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose, choose_at
from stella_conform.generators.mutations.stream import Apply, Line, Mutation, Stream, insert_at
from stella_conform.generators.mutations.unknown_types import unknown_tag
from stella_conform.generators.runs import encode
from stella_conform.schemas.vocabulary import Vocabulary

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


def non_json_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    raw = choose_at(draw, "corrupt-line", choose_at(draw, "corrupt-family", CORRUPT_FAMILIES))
    insert_at(draw, stream, Line(raw=raw, marks={"non-json-line"}), not_last=True)


def not_object_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    smuggled = b'"{\\"type\\":\\"text\\",\\"text\\":\\"smuggled\\"}"'
    raw = choose(draw, (b"[1,2,3]", b'"text"', b"42", b"null", b"true", smuggled))
    insert_at(draw, stream, Line(raw=raw, marks={"not-object-line"}), not_last=True)


def negative_zero(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """-0 in an integer field: the duration of a tool result (ts would not do: reading B of
    ts-out-of-range ignores ts altogether)."""
    if "tool_result" not in vocab.known:
        return
    result = {"type": "tool_result", "call_id": "call_96", "output": {"ok": {"content": ""}}}
    line = encode(result)[:-1] + b',"duration_ms":-0}'
    insert_at(draw, stream, Line(raw=line, marks={"negative-zero"}))


def _edge_unknown(raw: bytes, mark: str) -> Apply:
    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        tag = unknown_tag(Content(draw(SEEDS)), vocab)
        line = encode({"type": tag})[:-1] + b',"payload":' + raw + b"}"
        insert_at(draw, stream, Line(raw=line, marks={mark}), not_last=True)

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
    insert_at(draw, stream, Line(raw=line, marks={"lone-surrogate"}), not_last=True)


def duplicate_keys(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A key twice in a known event: the last one wins, or the line is an error."""
    if "text" not in vocab.known:
        return
    first = choose(draw, ("draft", "", "first"))
    line = b'{"type":"text","text":' + encode(first) + b',"text":"final"}'
    insert_at(draw, stream, Line(raw=line, marks={"duplicate-keys"}))


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
JSON_TEXT_MUTATIONS: tuple[Mutation, ...] = (
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
)
