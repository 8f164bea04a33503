"""Content hazards: valid (or precisely broken) input that real clients have misread.

The mutations in :mod:`mutations` change a stream's *structure*.  These change
what its strings and numbers hold, the way stella (or JSON) lawfully can, at the
places real readers went wrong:

* ``line-separators`` — U+2028, U+2029 and U+0085 written raw (stella writes them
  raw; ``str.splitlines()`` cuts a line there), VT, FF, FS, GS and RS escaped (JSON
  must escape them), inside the strings a client reads;
* ``unicode-edges`` — astral characters raw or as escaped surrogate pairs, ``\\u0000``,
  and a four-byte character straddling a 4, 8, 16 or 64 KiB read boundary (of its line,
  and half the time of the stream: the line comes first);
* ``type-like-payloads`` — ``{"type":"run_complete"}``, ``{"type":"complete"}`` and
  ``{"type":"text","text":"INJECTED"}`` inside a tool's input, just before the end;
* ``case-variant-keys`` — ``Text`` beside ``text`` (an unknown field, to be ignored);
* ``big-integers`` — integers above 2^53 in ts, token counts and durations;
* ``bad-read-values`` — a bad value in a field a client reads (``"input_tokens":"1200"``);
* ``torn-inner-object`` — a torn last line that holds a complete inner object;
* ``json-spellings`` — spaces after ``:`` and ``,``, other key orders, escaped
  non-ASCII, numbers as ``2E-2``, ``1.5e+0``, ``-0.0`` where the schema allows a number;
* ``megabyte-string`` — a ``text`` of over a megabyte (``R1.long-lines`` grades it, beside
  the megabyte ``text_delta`` of ``long-line-1m``).  Duplicate keys, lone surrogates and ``-0`` are
  the ambiguous-reading mutations of :mod:`mutations` (``duplicate-keys`` and others).

Each keeps the stream's meaning exactly where it should (the reference decoder
decides the expectation, as always) and marks the lines it touched.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from typing import Any, TypeVar

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import choose_at, option_at, set_at, text_at
from stella_conform.generators.events import Event, strategies_for
from stella_conform.generators.mutations.bodies import field_types, required_fields
from stella_conform.generators.mutations.stream import Apply, Line, Mutation, Stream, insert_at
from stella_conform.generators.runs import encode
from stella_conform.schemas.vocabulary import Vocabulary

#: Characters some line splitter treats as a line end, though JSON and stella do not.
#: The first three are legal raw inside a JSON string; the C0 ones must be escaped.
RAW_SEPARATORS = ("\u2028", "\u2029", "\u0085")
ESCAPED_SEPARATORS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
#: The types every dashboard reads (a client's own ``knows`` claim narrows this).
DASHBOARD_READS = (
    "text",
    "text_delta",
    "tool_start",
    "tool_result",
    "step_usage",
    "run_complete",
    "error",
)
#: Payload objects that look like events; a reader that searches bytes finds them.
TYPE_LIKE = (
    {"type": "run_complete", "model": "m", "cost_usd": 0},
    {"type": "complete"},
    {"type": "text", "text": "INJECTED"},
    {"type": "error", "message": "INJECTED", "retryable": False},
)
_TYPE_LIKE = st.sampled_from(TYPE_LIKE)  # dicts: Hypothesis cannot cache it by its arguments
INJECTED_TEXT = "INJECTED"
TWO_53 = 2**53

T = TypeVar("T", int, str)


@lru_cache(maxsize=4096)
def _sampled(options: tuple[T, ...]) -> st.SearchStrategy[T]:
    return st.sampled_from(options)


def _pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    """``draw(st.sampled_from(options))`` with the strategy built once per option tuple.

    A new ``sampled_from`` is validated on its first draw, which costs more than the draw;
    a cached one draws exactly the same choice (so the cases of a seed do not change).
    Only for ints or only for strings: a cache key would confuse ``True`` with ``1``.
    """
    strategy: st.SearchStrategy[T] = _sampled(tuple(options))
    return draw(strategy)


# ------------------------------------------------------------------ where strings live


def _string_slots(event: Event) -> list[tuple[Any, Any]]:
    """(container, key) pairs of the free-text strings a client reads in a known event."""
    tag = event.get("type")
    slots: list[tuple[Any, Any]] = []
    if tag == "text" and isinstance(event.get("text"), str):
        slots.append((event, "text"))
    elif tag in ("text_delta", "reasoning") and isinstance(event.get("delta"), str):
        slots.append((event, "delta"))
    elif tag == "error" and isinstance(event.get("message"), str):
        slots.append((event, "message"))
    elif tag == "tool_start" and isinstance(event.get("call"), dict):
        slots.extend(_nested_strings(event["call"].get("input")))
    elif tag == "tool_result" and isinstance(event.get("output"), dict):
        for branch, key in (("ok", "content"), ("error", "message")):
            inner = event["output"].get(branch)
            if isinstance(inner, dict) and isinstance(inner.get(key), str):
                slots.append((inner, key))
    return slots


def _nested_strings(value: Any) -> list[tuple[Any, Any]]:
    found: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(child, str):
                found.append((value, key))
            else:
                found.extend(_nested_strings(child))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            if isinstance(child, str):
                found.append((value, index))
            else:
                found.extend(_nested_strings(child))
    return found


def _still_fits(vocab: Vocabulary, event: Event) -> bool:
    tag = event["type"]
    return vocab.misfit(tag, vocab.normalize(tag, event)) is None


def _text_line(draw: st.DrawFn, stream: Stream, vocab: Vocabulary, mark: str) -> Line:
    """A text event placed before the run's last line (a text the final text may be)."""
    line = Line({"type": "text", "text": "plain"}, marks={mark})
    at = max(0, len(stream.lines) - 1)
    stream.lines.insert(at if draw(st.booleans()) else draw(st.integers(0, at)), line)
    return line


def _plant(
    draw: st.DrawFn,
    stream: Stream,
    vocab: Vocabulary,
    mark: str,
    pieces: st.SearchStrategy[str],
    *,
    at_most: int = 3,
) -> list[Line]:
    """Put drawn pieces inside the readable strings of up to ``at_most`` known events.

    Text events are preferred (the final text is what a dashboard shows); a run with
    no readable string gets a text event.
    """
    indexes = [i for i in stream.event_indexes(vocab) if _string_slots(stream.lines[i].obj)]
    texts = [i for i in indexes if stream.lines[i].obj["type"] in ("text", "text_delta")]
    chosen: list[int] = []
    if texts and draw(st.integers(0, 3)) < 3:
        chosen.append(_pick(draw, texts))
    if indexes:
        for _ in range(draw(st.integers(0 if chosen else 1, at_most - len(chosen)))):
            chosen.append(_pick(draw, indexes))
    lines = [stream.lines[i] for i in dict.fromkeys(chosen)]
    has_text = "text" in {line.obj["type"] for line in lines}
    if "text" in vocab.written and (not lines or (not has_text and draw(st.booleans()))):
        lines.append(_text_line(draw, stream, vocab, mark))
    touched: list[Line] = []
    for line in lines:
        before = copy.deepcopy(line.obj)
        container, key = draw(st.sampled_from(_string_slots(line.obj)))
        value = container[key]
        cut = draw(st.integers(0, len(value)))
        container[key] = value[:cut] + draw(pieces) + value[cut:]
        if _still_fits(vocab, line.obj):
            line.marks.add(mark)
            touched.append(line)
        else:  # a schema that constrains this string: leave the event as it was
            line.obj = before
    return touched


def escaped(obj: Any) -> bytes:
    """The same event with every non-ASCII character escaped (``\\u2028``, surrogate pairs)."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


# ------------------------------------------------------------------ line separators


@cache
def _separator_pieces() -> st.SearchStrategy[str]:
    raw_piece = st.sampled_from(RAW_SEPARATORS)
    any_piece = st.sampled_from(RAW_SEPARATORS + ESCAPED_SEPARATORS)
    return st.one_of(raw_piece, raw_piece, any_piece).flatmap(
        lambda sep: st.sampled_from((sep, f"first{sep}second", f"{sep}{sep}"))
    )


def line_separators(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    mark = "line-separators"
    for line in _plant(draw, stream, vocab, mark, _separator_pieces()):
        if draw(st.integers(0, 3)) == 3:
            line.raw = escaped(line.obj)  # the escaped spelling of the same text


# ------------------------------------------------------------------ unicode edges


UNICODE_EDGE_KINDS = ("astral", "chunk-edge", "surrogate-escapes", "nul")
#: Read buffers a character is split across: stdio, bufio, BufReader, io's; a pipe's, Node's.
CHUNK_BOUNDARIES = (4096, 8192, 16384, 65536)


def unicode_edges(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    mark = "unicode-edges"
    kind = choose_at(draw, "unicode-edges", UNICODE_EDGE_KINDS)
    if kind == "chunk-edge":
        boundary = choose_at(draw, "chunk-boundary", CHUNK_BOUNDARIES)
        back = draw(st.integers(1, 3))
        line = Line({"type": "text", "text": ""}, marks={mark})
        head = encode({"type": "text", "text": ""})[:-2]  # up to the opening quote
        if boundary == 65536:
            # the stream's 64 KiB read chunk (Node.js reads a pipe 64 KiB at a time), with
            # every line under 64 KiB: a reader with a 64 KiB line limit is not failed
            # here for a flaw R1.long-lines names
            pad = Line({"type": "text", "text": "y" * 32_000}, marks={mark})
            before = len(encode(pad.obj)) + 1
            line.obj["text"] = "x" * (boundary - back - before - len(head)) + "🙂 done"
            stream.lines[0:0] = [pad, line]
            return
        line.obj["text"] = "x" * (boundary - back - len(head)) + "🙂 done"
        at = max(0, len(stream.lines) - 1)
        # first, half the time: then the boundary is one of the stream's own read chunks,
        # not only one of a reader that reads each line in fixed pieces
        stream.lines.insert(0 if draw(st.booleans()) else draw(st.integers(0, at)), line)
        return
    pieces = {
        "astral": st.sampled_from(("🙂", "𝄞", "😀👍", "a🙂b")),
        "surrogate-escapes": st.sampled_from(("🙂", "𝄞x", "日本🙂")),
        "nul": st.sampled_from(("\x00", "a\x00b", "\x00\x00")),
    }[kind]
    for line in _plant(draw, stream, vocab, mark, pieces, at_most=2):
        if kind == "surrogate-escapes":
            line.raw = escaped(line.obj)  # 🙂 as \ud83d\ude42


# ------------------------------------------------------------------ type-like payloads


def type_like_payloads(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A tool call whose input holds an event-shaped object, just before the run's end,
    or as the last thing a run cut off before its terminator wrote."""
    mark = "type-like-payloads"
    if not {"tool_start", "tool_result"} <= vocab.written:
        return
    payload = copy.deepcopy(draw(_TYPE_LIKE))
    shape = draw(st.integers(0, 2))
    data: Any = payload if shape == 0 else {"event": payload} if shape == 1 else [payload]
    call_id = "call_type_like"
    start = Line(
        {"type": "tool_start", "call": {"call_id": call_id, "name": "bash", "input": data}},
        marks={mark},
    )
    lines = [start]
    if draw(st.booleans()):
        content = json.dumps(payload, separators=(",", ":"))
        result = {
            "type": "tool_result",
            "call_id": call_id,
            "output": {"ok": {"content": content}},
            "duration_ms": 1,
        }
        lines.append(Line(result, marks={mark}))
    last = len(stream.lines) - 1
    if draw(st.integers(0, 2)) < 2:
        # the run was cut off after this call: its terminator never came
        ends = [i for i, line in enumerate(stream.lines) if line.is_event]
        at = ends[-1] if ends else 0
        del stream.lines[at:]
        start.marks.add(f"{mark}:cut")
    else:
        at = max(0, last) if draw(st.integers(0, 3)) < 3 else draw(st.integers(0, max(0, last)))
    stream.lines[at:at] = lines


# ------------------------------------------------------------------ keys


def case_variant_keys(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """``Text`` beside ``text``: a different field (unknown, ignored), not a spelling."""
    mark = "case-variant-keys"
    indexes = [
        i
        for i in stream.event_indexes(vocab)
        if any(k != "type" and k.lower() != k.upper() for k in stream.lines[i].obj)
    ]
    texts = [i for i in indexes if stream.lines[i].obj["type"] == "text"]
    if not indexes:
        return
    prefer_text = bool(texts) and not draw(st.booleans())
    index = _pick(draw, texts if prefer_text else indexes)
    line = stream.lines[index]
    names = [k for k in line.obj if k != "ts" and k.lower() != k.upper()]
    read = {"text": "text", "text_delta": "delta"}.get(line.obj["type"])
    # three times in four the field a reader shows: Text beside text, Delta beside delta
    prefer_read = read in line.obj and draw(st.integers(0, 3)) < 3
    name = read if prefer_read and read is not None else _pick(draw, names)
    variants = [v for v in (name.capitalize(), name.upper(), name.swapcase()) if v not in line.obj]
    if not variants:
        return
    variant = _pick(draw, variants)
    value = line.obj[name]
    line.obj[variant] = f"CASE VARIANT {value}" if isinstance(value, str) else "CASE VARIANT"
    if vocab.archived_shape(line.obj["type"], line.obj) is None and _still_fits(vocab, line.obj):
        line.marks.add(mark)
    else:
        del line.obj[variant]


# ------------------------------------------------------------------ numbers


#: Integer fields a dashboard reads, per type (token counts and durations).
BIG_INTEGER_FIELDS = {
    "step_usage": ("input_tokens", "output_tokens", "cached_input_tokens", "duration_ms"),
    "tool_result": ("duration_ms",),
}


@cache
def _big() -> st.SearchStrategy[int]:
    """Above 2^53, where a double loses the units, and small enough that a run's sums fit i64."""
    return st.one_of(
        st.integers(1, 2_000).map(lambda n: TWO_53 + 2 * n + 1),
        st.integers(1, 2**55).map(lambda n: TWO_53 + n),
        st.sampled_from((2**55 + 3, 2**56 - 1)),
    )


def big_integers(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    mark = "big-integers"
    if "step_usage" in vocab.written and not any(
        line.is_event and line.obj.get("type") == "step_usage" for line in stream.lines
    ):
        usage = dict(draw(strategies_for(vocab).for_type("step_usage")))
        at = max(0, len(stream.lines) - 1)
        stream.lines.insert(draw(st.integers(0, at)), Line(usage))
    touched = False
    for index in stream.event_indexes(vocab):
        line = stream.lines[index]
        for name in BIG_INTEGER_FIELDS.get(line.obj["type"], ()):
            if name in line.obj and draw(st.integers(0, 2)) < 2:
                before = line.obj[name]
                line.obj[name] = draw(_big())
                if not _still_fits(vocab, line.obj):
                    line.obj[name] = before
                    continue
                line.marks.add(mark)
                touched = True
    if draw(st.booleans()) or not touched:
        clock = TWO_53 + 2 * draw(st.integers(0, 10_000)) + 1
        for index in stream.event_indexes(vocab):
            line = stream.lines[index]
            clock += draw(st.integers(1, 3))
            line.obj["ts"] = clock
            if _still_fits(vocab, line.obj):
                line.marks.add(mark)
            else:
                del line.obj["ts"]


#: Values a lenient reader turns into something (or nothing) instead of failing.
def _bad_values(types: list[str], value: Any) -> list[Any]:
    if "integer" in types:
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else "1200"
        return [text, f"{text}.0", None, -1, 1.5, True, "", "x1200"]
    if "number" in types:
        text = repr(value) if isinstance(value, float) else "0.02"
        return [text, None, True, "", "$0.02"]
    if "string" in types:
        return [None, 42, True]
    if "boolean" in types:
        return ["false", "true", 0, None]
    if "object" in types:
        return [None, "{}", []]
    return [None]


def bad_read_values(reads: Sequence[str] = DASHBOARD_READS) -> Apply:
    """A bad value in a field a client reads, on a type it reads (rule 4).

    The types are the client's ``knows`` claim when it makes one (the vocabulary is then
    restricted to it), otherwise ``reads``: the types every dashboard reads.  Numeric
    fields come first: ``"input_tokens":"1200"`` is the value a lenient reader quietly
    coerces or nulls.
    """

    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        mark = "bad-read-values"
        claimed = sorted(vocab.claimed) if vocab.claimed is not None else None
        tags = [t for t in (claimed or reads) if t in vocab.known] or sorted(vocab.known)
        numeric_tags = {
            t
            for t in tags
            if any(
                {"integer", "number"} & set(field_types(vocab, t, f) or ())
                for f in required_fields(vocab, t)
            )
        }
        # Hypothesis draws the first options most often: the numeric types go first
        tags = sorted(tags, key=lambda t: (t not in numeric_tags, t != "step_usage"))
        weighted = [t for t in tags for _ in range(4 if t in numeric_tags else 1)]
        for _ in range(20):
            tag = _pick(draw, weighted)
            fields = required_fields(vocab, tag)
            if not fields:
                continue
            numeric = [
                f for f in fields if {"integer", "number"} & set(field_types(vocab, tag, f) or ())
            ]
            prefer_numeric = bool(numeric) and draw(st.integers(0, 7)) < 7
            name = _pick(draw, numeric if prefer_numeric else fields)
            types = field_types(vocab, tag, name) or ["string"]
            existing = [
                i for i in stream.event_indexes(vocab) if stream.lines[i].obj["type"] == tag
            ]
            if existing:
                line = stream.lines[_pick(draw, existing)]
                event = copy.deepcopy(line.obj)
            else:
                line = None
                event = dict(draw(strategies_for(vocab).for_type(tag)))
            options = bad_options(vocab, event, name, types)
            if not options:
                continue
            event[name] = draw(st.sampled_from(options))
            normalized = vocab.normalize(tag, event)
            if vocab.misfit(tag, normalized) is None or vocab.archived_shape(tag, event):
                continue
            if line is None:
                insert_at(draw, stream, Line(event, marks={mark}))
            else:
                line.obj = event
                line.marks.add(mark)
            return
        raise AssertionError(f"{mark}: no read field of {vocab.ident} could be broken")

    return apply


def bad_options(vocab: Vocabulary, event: Event, name: str, types: list[str]) -> list[Any]:
    """The values of :func:`_bad_values` that break the event's body in field ``name``: of
    another JSON type, or of its type but out of bounds (``-1`` where it is unsigned)."""
    out = []
    for value in _bad_values(types, event.get(name)):
        if not _fits_type(value, types):
            out.append(value)
            continue
        broken = {**event, name: value}
        if vocab.misfit(broken["type"], vocab.normalize(broken["type"], broken)) is not None:
            out.append(value)
    return out


def _fits_type(value: Any, types: list[str]) -> bool:
    from stella_conform.schemas.fit import json_type_name

    name = json_type_name(value)
    return name in types or (name == "integer" and "number" in types)


def number_spellings(value: float | int) -> list[str]:
    """The same number in the other JSON spellings a schema's ``number`` allows."""
    exact = Decimal(repr(float(value)))
    if exact == 0:
        return ["-0.0", "0.0", "0E+0", "0e-3", "-0", "0"]
    digits, exponent = f"{exact:E}".split("E")
    out = [
        f"{exact:E}",
        f"{exact:e}",
        f"{digits}e{int(exponent):+d}",
        f"{exact.scaleb(1)}E-1",
    ]
    if exact == exact.to_integral_value() and abs(exact) < 2**53:
        out.append(str(int(exact)))  # an integer literal where the schema says number
    return [s for s in dict.fromkeys(out) if _spells(s, value)]


def spell_number(draw: st.DrawFn, options: Sequence[str]) -> str | None:
    """One of a number's ``options`` (``None``: none), drawn; a stratum may set which
    (``number-spelling``: the last when it has fewer)."""
    if not options:
        return None
    drawn = draw(st.sampled_from(options))
    at = option_at(draw, "number-spelling", 4)
    return drawn if at is None else options[min(at, len(options) - 1)]


def _spells(text: str, value: float | int) -> bool:
    """Whether ``text`` is a JSON number of ``value`` (``1E+17`` scaled by ten prints as
    ``1E+18``, whose ``E-1`` spelling is no number at all)."""
    try:
        return float(text) == float(value) and text.count("E") + text.count("e") <= 1
    except ValueError:
        return False


@lru_cache(maxsize=1024)
def _number_fields(vocab: Vocabulary, tag: str) -> frozenset[str]:
    """The fields of a known type that hold numbers and not integers (asked per line)."""
    props = vocab.members.get(tag, {}).get("properties", {})
    found = set()
    for name in props:
        types = field_types(vocab, tag, name) or []
        if "number" in types and "integer" not in types:
            found.add(name)
    return frozenset(found)


#: ``json.dumps(value, ensure_ascii=...)`` with the encoder built once per setting (with
#: any option ``json.dumps`` builds one per call, and a spelling writes every key).
_DUMPS = {flag: json.JSONEncoder(ensure_ascii=flag).encode for flag in (False, True)}


@dataclass(frozen=True)
class Spelling:
    """One way to write JSON: separators, whitespace inside brackets, key order, how
    strings are escaped, and number forms."""

    colon: str = ":"
    comma: str = ","
    reorder: Callable[[list[str]], list[str]] = list
    numbers: Callable[[str, Any], str | None] = lambda key, value: None
    ascii_only: bool = False
    #: Whitespace just inside every bracket: after ``{`` and ``[``, before ``}`` and ``]``.
    inner: str = ""
    #: How a string (a key or a value) is written; ``None``: JSON's own escapes only.
    string: Callable[[str], str] | None = None

    def write(self, value: Any, key: str = "") -> str:
        text = self.string or _DUMPS[self.ascii_only]
        inner = self.inner
        if isinstance(value, dict):
            parts = [
                text(k) + self.colon + self.write(value[k], k) for k in self.reorder(list(value))
            ]
            return "{" + inner + self.comma.join(parts) + inner + "}"
        if isinstance(value, list):
            return "[" + inner + self.comma.join(self.write(v) for v in value) + inner + "]"
        if isinstance(value, str):
            return text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            other = self.numbers(key, value)
            if other is not None:
                return other
        return _DUMPS[False](value)


#: Strings longer than this keep JSON's own escapes (a character at a time is slow).
_ESCAPE_LIMIT = 4096


def escape_some_ascii(c: Content) -> Callable[[str], str]:
    """A string writer that spells ASCII as ``\\u`` escapes too: every ``_`` (so
    ``"run_complete"`` is ``"run\\u005fcomplete"``) and a letter in four."""

    def write(value: str) -> str:
        if len(value) > _ESCAPE_LIMIT:
            return _DUMPS[False](value)
        out = []
        for ch in value:
            if ch == "_" or ("a" <= ch.lower() <= "z" and c.chance(0.25)):
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(_DUMPS[False](ch)[1:-1])
        return '"' + "".join(out) + '"'

    return write


def escape_solidus(value: str) -> str:
    """JSON's optional ``\\/`` for every ``/`` (``"src\\/lib.rs"``)."""
    return _DUMPS[False](value).replace("/", "\\/")


def upper_hex(value: str) -> str:
    """Non-ASCII escaped, with upper-case hex digits (``\\u00E9``, ``\\uD83D\\uDE42``)."""
    return _U_ESCAPE.sub(lambda m: m.group(0).upper().replace("\\U", "\\u"), _DUMPS[True](value))


_U_ESCAPE = re.compile(r"\\u[0-9a-f]{4}")
#: Texts whose characters JSON writes its own way, one kind each (a stratum sets which, by
#: its number from 1), so that a client failing one spelling is shown that one alone: what
#: JSON must escape (a quote, a backslash, the short escapes, a NUL: \u0000); two-, three-
#: and four-byte UTF-8 (raw, or \u00e9, \u2603 and a surrogate pair where escaped); a
#: solidus (\/ in the solidus style).
HARD_TEXTS = ('say "hi" back\\slash a\nb\tc\x00', "café ☃ 🙂", "a/b")

#: The string writers json-spellings draws from (besides JSON's own, ASCII or not).
STRING_STYLES = ("json", "some-ascii", "solidus", "upper-hex")


def _reversed(keys: list[str]) -> list[str]:
    return keys[::-1]


def _type_last(keys: list[str]) -> list[str]:
    return [k for k in keys if k != "type"] + (["type"] if "type" in keys else [])


#: Orders a spelling may write an object's keys in (key order is not part of the contract).
KEY_ORDERS: dict[str, Callable[[list[str]], list[str]]] = {
    "as-is": list,
    "reversed": _reversed,
    "type-last": _type_last,
    "sorted": sorted,
}


def string_writer(draw: st.DrawFn) -> Callable[[str], str] | None:
    """One of :data:`STRING_STYLES`, drawn (``None``: JSON's own escapes)."""
    style = set_at(draw, "string-style", STRING_STYLES, draw(st.sampled_from(STRING_STYLES)))
    return styled(style, Content(draw(SEEDS)) if style == "some-ascii" else Content(0))


def styled(style: str, c: Content) -> Callable[[str], str] | None:
    """The string writer of one of :data:`STRING_STYLES` (``c`` picks the escaped letters)."""
    if style == "some-ascii":
        return escape_some_ascii(c)
    return {"json": None, "solidus": escape_solidus, "upper-hex": upper_hex}[style]


#: The whitespace a line's spelling puts around colons and commas, inside brackets, and
#: before and after the line's value.
COLONS = (": ", ":", " : ", ":\t")
COMMAS = (", ", ",", " , ", ",\t")
INNERS = ("", " ", "\t", "  ")
LEADS = ("", " ", "\t", "  ")
TRAILS = ("", " ", "\t", " \t")


def json_spellings(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Every event line re-spelled: whitespace, key order, escapes, number forms.

    One spelling is drawn for the stream; half the lines (from one more seed, none for
    the simplest) take their own instead, as lines copied in from another writer would.
    """
    mark = "json-spellings"
    # each choice is drawn, then a stratum being built may set it (set_at): the draws
    # are the same with or without strata
    colon = set_at(draw, "colon", COLONS, draw(st.sampled_from(COLONS)))
    comma = set_at(draw, "comma", COMMAS, draw(st.sampled_from(COMMAS)))
    order = set_at(draw, "key-order", tuple(KEY_ORDERS), draw(st.sampled_from(tuple(KEY_ORDERS))))
    ascii_only = set_at(draw, "ascii-only", (False, True), draw(st.booleans()))
    respell_numbers = not draw(st.booleans())
    inner = set_at(draw, "inner", INNERS, draw(st.sampled_from(INNERS)))
    lead = set_at(draw, "lead", LEADS, draw(st.sampled_from(LEADS)))
    trail = set_at(draw, "trail", TRAILS, draw(st.sampled_from(TRAILS)))
    string = string_writer(draw)
    mix = Content(draw(SEEDS))
    hard = option_at(draw, "hard-text", len(HARD_TEXTS) + 1)
    if hard and "text" in vocab.written:  # a stratum: a text JSON spells its own way
        text = text_at(draw, "hard-text", HARD_TEXTS[hard - 1])
        stream.lines.insert(0, Line({"type": "text", "text": text}))

    reorder = KEY_ORDERS[order]
    for line in stream.lines:
        if not line.is_event:
            continue
        tag = line.obj.get("type")
        known = isinstance(tag, str) and tag in vocab.written
        floats = _number_fields(vocab, tag) if known else frozenset()

        def numbers(key: str, value: Any, floats: frozenset[str] = floats) -> str | None:
            if not respell_numbers or key not in floats:
                return None
            return spell_number(draw, number_spellings(value))

        if mix.chance():  # this line spelled its own way
            spelling = Spelling(
                mix.pick(COLONS),
                mix.pick(COMMAS),
                KEY_ORDERS[mix.pick(tuple(KEY_ORDERS))],
                numbers,
                mix.chance(),
                mix.pick(INNERS),
                styled(mix.pick(STRING_STYLES), mix),
            )
            text = mix.pick(LEADS) + spelling.write(line.obj) + mix.pick(TRAILS)
        else:
            spelling = Spelling(colon, comma, reorder, numbers, ascii_only, inner, string)
            text = lead + spelling.write(line.obj) + trail
        line.raw = text.encode("utf-8")
        line.marks.add(mark)


# ------------------------------------------------------------------ torn tails


def torn_inner_object(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """The last line torn just after a complete inner object that looks like an event.

    A process killed while writing a ``tool_start`` whose input holds
    ``{"type":"text","text":"INJECTED"}`` leaves that object whole in the torn bytes;
    a reader that rescues objects from a torn line reports it.
    """
    mark = "torn-inner-object"
    if "tool_start" not in vocab.written:
        return
    events = [i for i, line in enumerate(stream.lines) if line.is_event]
    keep = (events[-1] + (0 if draw(st.integers(0, 2)) == 0 else 1)) if events else 0
    del stream.lines[keep:]  # sometimes the killed write replaced the run's last event
    payload = draw(_TYPE_LIKE)
    call = {"call_id": "call_torn", "name": "write_file", "input": {"event": payload, "n": 1}}
    data = encode({"type": "tool_start", "call": call})
    inner = encode(payload)
    end = data.index(inner) + len(inner)
    cut = end + draw(st.integers(0, len(data) - end - 1))
    stream.lines.append(Line(raw=data[:cut], marks={mark}))
    stream.final_newline = draw(st.integers(0, 3)) == 3


def megabyte_string(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    if "text" not in vocab.written:
        return
    text = "megabyte " * (1024 * 1024 // 9 + draw(st.integers(1, 8)))
    _text_line(draw, stream, vocab, "megabyte-string").obj["text"] = text


HAZARDS: tuple[Mutation, ...] = (
    Mutation(
        "line-separators",
        "R1",
        "U+2028, U+2029, U+0085 (raw or escaped) and escaped VT, FF, FS, GS, RS inside "
        "strings a client reads",
        line_separators,
    ),
    Mutation(
        "unicode-edges",
        "R1",
        "astral characters raw or as escaped surrogate pairs, \\u0000, or a four-byte "
        "character across a 4, 8, 16 or 64 KiB read boundary",
        unicode_edges,
    ),
    Mutation(
        "type-like-payloads",
        "R2",
        'a tool input holding {"type":"run_complete"}, {"type":"complete"} or '
        '{"type":"text","text":"INJECTED"}, near the end of the run',
        type_like_payloads,
    ),
    Mutation(
        "case-variant-keys",
        "R5",
        "a key differing only in case from a field of the event (Text beside text): unknown",
        case_variant_keys,
    ),
    Mutation(
        "big-integers",
        "precision",
        "integers above 2^53 in ts, token counts and durations",
        big_integers,
    ),
    Mutation(
        "bad-read-values",
        "R4",
        'a bad value in a field a client reads, e.g. "input_tokens":"1200" in step_usage',
        bad_read_values(),
    ),
    Mutation(
        "megabyte-string",
        "R1",
        "a text event whose text is over a megabyte",
        megabyte_string,
    ),
    Mutation(
        "torn-inner-object",
        "R6",
        "the last line torn just after a complete inner object that looks like an event",
        torn_inner_object,
        byte_level=True,
    ),
    Mutation(
        "json-spellings",
        "R1",
        "every line re-spelled: spaces after : and , , key order, escaped non-ASCII, "
        "numbers as 2E-2 or -0.0 where the schema allows a number",
        json_spellings,
        byte_level=True,
    ),
)

#: Hazards after which a correct client must reject the stream.
HAZARDS_REJECTING = frozenset({"bad-read-values"})
