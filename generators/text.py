"""JSON text and line framing: how a line is spelled, and where a line ends.

The mutations in :mod:`mutations` change a stream's events and the hazards in
:mod:`hazards` what its strings and numbers hold.  These change the *text*: the
bytes RFC 8259 and the contract's framing rule ("one JSON object per line") allow
or forbid, at the places real parsers went wrong:

* ``cr-in-line`` — a carriage return between two tokens of a line.  JSON whitespace;
  only ``\\n`` ends a line, but Node.js's ``readline`` (and Python's universal
  newlines, and ``str.splitlines()``) end a line there too;
* ``two-values-per-line`` — two JSON values on one line (a lost newline between two
  writes), or a value followed by a stray token: not one JSON object, so a corrupt
  line; a reader that decodes value by value (Go's ``json.Decoder``) reads both;
* ``value-across-lines`` — one event pretty-printed over several lines: none of them
  is a JSON object, so the first is a corrupt line; a stream decoder reads it as one;
* ``ts-repeated`` — a stamp on every event, the clock standing still for a few lines
  (a wall clock in milliseconds repeats), so two events of one type share a ``ts``;
* ``unknown-big-numbers`` — an unrecognized event holding integers beyond 2^53 (to
  u64's and i64's ends): kept whole, they keep every unit; a reader that parses
  numbers as doubles (``JSON.parse``, Go's ``interface{}``) changes them;
* ``deep-tool-input`` — a tool call whose input nests 65 to 127 levels deep: valid
  JSON every reading accepts (serde_json refuses 128), beyond the 64 levels of
  .NET's ``System.Text.Json`` and Newtonsoft's defaults.

Each marks the lines it touched; the expected outcome is the reference decoder's.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose, choose_at
from stella_conform.generators.events import tool_start
from stella_conform.generators.hazards import Spelling
from stella_conform.generators.mutations.stream import Line, Mutation, Stream, insert_at
from stella_conform.generators.mutations.unknown_types import unknown_tag
from stella_conform.generators.runs import encode
from stella_conform.schemas.vocabulary import Vocabulary

#: How a carriage return sits between tokens: after a colon or a comma, or before one.
CR_COLONS = (":\r", "\r:", " \r: ", ":\r\t")
CR_COMMAS = (",", ",\r", "\r,", ", \r")


def cr_in_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A carriage return between tokens inside one to three event lines (never at a line's
    end, where it would be a CRLF ending: that is ``crlf``'s)."""
    events = [i for i, line in enumerate(stream.lines) if line.is_event and len(line.obj) > 1]
    if not events:
        return
    c = Content(draw(SEEDS))
    chosen = [choose(draw, events)]
    chosen += c.sample(events, c.count(0, min(2, len(events))))
    spelling = Spelling(choose(draw, CR_COLONS), choose(draw, CR_COMMAS))
    for index in dict.fromkeys(chosen):
        line = stream.lines[index]
        line.raw = spelling.write(line.obj).encode("utf-8")
        line.marks.add("cr-in-line")


#: What follows the first value on a line that holds more than one: another event (a
#: lost newline between two writes, with or without a space), or a stray token.
SEPARATORS = (b"", b" ", b"\t", b"  ")
STRAYS = (b"}", b"]", b",", b" null", b"{}", b' "x"')


def two_values_per_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Two JSON values on one line that is not the last: two events joined where a newline
    was lost, or an event and a stray token after it."""
    mark = "two-values-per-line"
    last = max((i for i, line in enumerate(stream.lines) if line.to_bytes().strip()), default=-1)
    # the joined line must not be the final one: a final line that fails is torn, not corrupt
    pairs = [
        i
        for i in range(len(stream.lines) - 1)
        if stream.lines[i].is_event and stream.lines[i + 1].is_event and i + 1 < last
    ]
    if pairs and draw(st.integers(0, 3)) < 3:
        i = choose(draw, pairs)
        first, second = stream.lines[i], stream.lines[i + 1]
        raw = first.to_bytes() + choose(draw, SEPARATORS) + second.to_bytes()
        stream.lines[i : i + 2] = [Line(raw=raw, marks={mark, *first.marks, *second.marks})]
        return
    events = [i for i, line in enumerate(stream.lines) if line.is_event and i < last]
    if events:
        line = stream.lines[choose(draw, events)]
        line.raw = line.to_bytes() + choose(draw, STRAYS)
        line.marks.add(mark)
        return
    # a run too short for either: a text event with a stray token, before the last line
    raw = encode({"type": "text", "text": "two values"}) + choose(draw, STRAYS)
    insert_at(draw, stream, Line(raw=raw, marks={mark}), not_last=True)


def value_across_lines(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """One event written over several lines: pretty-printed, or broken after a comma."""
    mark = "value-across-lines"
    events = [i for i, line in enumerate(stream.lines) if line.is_event and len(line.obj) > 1]
    if not events:
        return
    index = choose(draw, events)
    obj = stream.lines[index].obj
    if draw(st.booleans()):
        text = json.dumps(obj, ensure_ascii=False, indent=choose(draw, (1, 2, 4)))
        parts = [p.encode("utf-8") for p in text.split("\n")]
    else:  # one newline after the first member, as a writer that wrapped the line
        data = encode(obj)
        first = encode({k: obj[k] for k in list(obj)[:1]})[:-1] + b","
        parts = [first, data[len(first) :]]
    stream.lines[index : index + 1] = [Line(raw=p, marks={mark}) for p in parts]


def ts_repeated(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A stamp on every event, the clock standing still for a few lines: two events of
    one type share a ``ts`` (a text_delta pair is added when the run has no such pair)."""
    mark = "ts-repeated"
    events = [i for i, line in enumerate(stream.lines) if line.is_event]
    by_type: dict[str, list[int]] = {}
    for i in events:
        tag = stream.lines[i].obj.get("type")
        by_type.setdefault(tag if isinstance(tag, str) else "", []).append(i)
    pairs = [pair for ids in by_type.values() for pair in itertools.pairwise(ids)]
    if not pairs and "text_delta" in vocab.known:
        at = max(0, len(stream.lines) - 1)
        previews = [Line({"type": "text_delta", "delta": d}) for d in ("Work", "ing")]
        stream.lines[at:at] = previews
        events = [i for i, line in enumerate(stream.lines) if line.is_event]
        pairs = [(at, at + 1)]
    if not pairs:
        return
    c = Content(draw(SEEDS))
    start, end = choose(draw, pairs)
    stamped = [i for i in events if isinstance(stream.lines[i].obj.get("ts"), int)]
    if stamped and isinstance(stream.lines[start].obj.get("ts"), int):
        # the run has its clock already (going backwards, say): it only stands still here
        for i in events:
            if start < i <= end:
                stream.lines[i].obj["ts"] = stream.lines[start].obj["ts"]
            if start <= i <= end:
                stream.lines[i].marks.add(mark)
        return
    clock = 1_754_582_400_000 + c.count(0, 10**9)
    for i in events:
        if not start < i <= end:  # between the pair the clock stands still
            clock += c.count(0, 40) if c.chance(0.7) else c.count(41, 5_000)
        stream.lines[i].obj["ts"] = clock
        if start <= i <= end:
            stream.lines[i].marks.add(mark)


#: Integers a double cannot hold, up to u64's and down to i64's ends (serde_json keeps all
#: of them exact; beyond them it reads a float too, so none is generated).
BIG_NUMBERS = (
    2**53 + 1,
    -(2**53) - 1,
    12_345_678_901_234_567_891,
    2**63 - 1,
    2**63 + 1,
    2**64 - 1,
    -(2**63),
    123_456_789_012_345_678,
)


def unknown_big_numbers(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """An unrecognized event whose fields hold integers beyond 2^53, in a list and alone."""
    c = Content(draw(SEEDS))
    first = choose_at(draw, "big-number", BIG_NUMBERS)
    numbers = [first, *c.sample(BIG_NUMBERS, c.count(0, 3))]
    event = {"type": unknown_tag(c, vocab), "id": first, "counters": numbers}
    if c.chance():
        event["nested"] = {"offset": c.pick(BIG_NUMBERS), "scale": 1.5}
    insert_at(draw, stream, Line(event, marks={"unknown-big-numbers"}))


def deep_tool_input(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A tool call whose input nests 65 to 127 levels (the whole line), arrays and objects."""
    if "tool_start" not in vocab.known:
        return
    depth = between(draw, 65, 127)
    call = dict(draw(tool_start(call_id="call_deep")))
    value: Any = "bottom"
    for level in range(depth - 3):  # the event, its call and the input object are 3 levels
        value = [value] if level % 2 else {"k": value}
    call["call"] = {**call["call"], "input": {"tree": value}}
    insert_at(draw, stream, Line(call, marks={"deep-tool-input"}), not_last=True)


TEXT: tuple[Mutation, ...] = (
    Mutation(
        "cr-in-line",
        "R1",
        "a carriage return between tokens inside a line (JSON whitespace, not a line end)",
        cr_in_line,
        byte_level=True,
    ),
    Mutation(
        "two-values-per-line",
        "R1",
        "two JSON values on one line that is not the last (two events where a newline was "
        "lost, or an event and a stray token)",
        two_values_per_line,
        byte_level=True,
    ),
    Mutation(
        "value-across-lines",
        "R1",
        "one event written over several lines (pretty-printed, or wrapped after a comma)",
        value_across_lines,
        byte_level=True,
    ),
    Mutation(
        "ts-repeated",
        "ts",
        "ts on every event, standing still for a few lines: two events of one type share it",
        ts_repeated,
    ),
    Mutation(
        "unknown-big-numbers",
        "R3",
        "an unrecognized event holding integers beyond 2^53 (within u64 and i64)",
        unknown_big_numbers,
    ),
    Mutation(
        "deep-tool-input",
        "R1",
        "a tool call whose input nests 65 to 127 levels deep (valid under every reading)",
        deep_tool_input,
    ),
)

#: Text mutations after which a correct client must reject the stream.
TEXT_REJECTING = frozenset({"two-values-per-line", "value-across-lines"})
