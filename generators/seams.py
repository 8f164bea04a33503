"""Seams: where a reader joins what it read, and where a run's steps join.

A reader's own framing code sits at a line's edges (the ``strip()`` or ``trim()`` it
calls before parsing), at its read buffer's edges (a character split across two reads)
and at the stream's end (a last line without its newline); a dashboard's preview sits
between the steps of a run.  The bugs there need cases no run of the grammar draws
often, so each mutation here is graded in the strata of the checks it concerns (their
``Check.strata``; :data:`SEAM_STRATA` names each option graded, and
:mod:`stella_conform.generators.strata` draws them), never among their random examples:
every default run draws each of them.

* ``strip-chars-edge``: a character a language's trimming removes but JSON's grammar does
  not take as whitespace, at an edge of a line that is not the last, or as the whole
  line: FS, GS, RS and US (Python's ``str.strip()``), U+FEFF on a line other than the
  first (JavaScript's ``String.prototype.trim``).  The line is not JSON under every
  reading, so the stream must be rejected.  (Go's ``strings.TrimSpace`` and Rust's
  ``str::trim`` remove Unicode's White_Space, the registered reading
  ``unicode-whitespace``; ``read`` without ``IFS=`` removes spaces and tabs, which JSON
  takes.)
* ``unterminated-content-last``: the run cut off before its terminator, its last line a
  ``text``, a ``text_delta`` or a ``tool_result`` without its newline.
* ``bad-body-unterminated-last``: the same, with that last line's body broken (a wrong
  type, a missing field): the stream must be rejected, in exit mode too, where a reader
  that drops an unterminated last line accepts.
* ``preview-across-tool``: previews streamed before a tool call and no text before it;
  the text of a later step replaces them all, or (a stratum) none does and they are
  still the preview when the run ends.
* ``text-after-streamed-step``: a step whose previews its text replaces, then a later
  step's text that no preview preceded.

    >>> from stella_conform.generators.strata import stream_strata
    >>> from stella_conform.schemas.vocabulary import Vocabulary
    >>> (case,) = stream_strata(Vocabulary.default(), ("unterminated-content-last",))
    >>> case.stream
    b'{"type":"text_delta","delta":"the"}\\n{"type":"text","text":"the"}'
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import choose_at
from stella_conform.generators.events import (
    WORDS,
    Event,
    make_text,
    make_text_delta,
    make_tool_result,
    make_tool_start,
)
from stella_conform.generators.mutations.stream import Line, Mutation, Stream
from stella_conform.schemas.vocabulary import Vocabulary

#: Characters a trimming function removes that JSON's grammar does not take as
#: whitespace, nor any registered reading: FS, GS, RS, US (Python's ``str.strip()``),
#: U+FEFF (JavaScript's ``trim()``; on the first line it is the ``utf8-bom`` reading).
STRIP_CHARS = ("\x1c", "\x1d", "\x1e", "\x1f", "\ufeff")
#: Where the character goes: before the line's object, after it, or as the whole line.
STRIP_PLACES = ("before", "after", "whole")
#: The content a cut-off run ends on.
CONTENT_KINDS = ("text", "text_delta", "tool_result")
#: How a run with previews before a tool call goes on: a later text replaces them, or
#: the run ends with them still the preview.
PREVIEW_ENDS = ("replaced", "left")
_TERMINATORS = ("run_complete", "error")
_CALL_ID = "call_seam"


def _type(line: Line) -> object:
    return line.obj.get("type") if line.is_event else None


def _step_at(stream: Stream) -> int:
    """Where a step's events go: before the last turn boundary or terminator."""
    for index in range(len(stream.lines) - 1, -1, -1):
        if _type(stream.lines[index]) == "turn_complete":
            return index
    for index, line in enumerate(stream.lines):
        if _type(line) in _TERMINATORS:
            return index
    return len(stream.lines)


def _insert(stream: Stream, at: int, events: list[Event], mark: str) -> None:
    stream.lines[at:at] = [Line(event, marks={mark}) for event in events]


def strip_chars_edge(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A trimmed-away character at an edge of a line that is neither first nor last."""
    mark = "strip-chars-edge"
    char = choose_at(draw, "strip-char", STRIP_CHARS).encode("utf-8")
    place = choose_at(draw, "strip-place", STRIP_PLACES)
    c = Content(draw(SEEDS))
    if len(stream.lines) < 2:  # a line before it (U+FEFF on the first is the BOM's reading)
        stream.lines.insert(0, Line({"type": "text_v2"}))
    at = 1  # neither first nor last: not a torn last line
    if place == "whole":
        stream.lines.insert(at, Line(raw=char, marks={mark}))
        return
    line = Line(make_text(c) if "text" in vocab.known else {"type": "text_v2"}, marks={mark})
    body = line.to_bytes()
    line.raw = char + body if place == "before" else body + char
    stream.lines.insert(at, line)


def _cut_before_terminator(stream: Stream) -> None:
    """Drop the terminator and the turn boundary before it: the run was cut off."""
    ends = [i for i, line in enumerate(stream.lines) if _type(line) in _TERMINATORS]
    if ends:
        del stream.lines[ends[0] :]
    while stream.lines and _type(stream.lines[-1]) == "turn_complete":
        stream.lines.pop()


def _content(c: Content, kind: str) -> list[Event]:
    """The events that end a cut-off run on ``kind`` (a tool result after its start)."""
    if kind == "text":
        return [make_text_delta(c), make_text(c)]
    if kind == "text_delta":  # two: a reader that drops the last line still sees a line
        return [make_text_delta(c), make_text_delta(c)]
    return [make_tool_start(c, call_id=_CALL_ID), make_tool_result(c, call_id=_CALL_ID)]


def _broken(event: Event) -> Event:
    """The event with a body that fits no reading (a field of the wrong type)."""
    field = {"text": "text", "text_delta": "delta", "tool_result": "output"}[event["type"]]
    return {**event, field: 5}


def _ending(draw: st.DrawFn, stream: Stream, vocab: Vocabulary, mark: str, broken: bool) -> None:
    kind = choose_at(draw, "seam-content", CONTENT_KINDS)
    c = Content(draw(SEEDS))
    if kind not in vocab.known:
        kind = next((k for k in CONTENT_KINDS if k in vocab.known), kind)
    events = _content(c, kind)
    if broken:
        events[-1] = _broken(events[-1])
    _cut_before_terminator(stream)
    stream.lines += [Line(event) for event in events]
    stream.lines[-1].marks.add(mark)  # the last line is the mutation's
    stream.final_newline = False


def unterminated_content_last(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """The run cut off on a content line, left without its newline."""
    _ending(draw, stream, vocab, "unterminated-content-last", broken=False)


def bad_body_unterminated_last(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """The run cut off on a content line whose body does not fit, without its newline."""
    _ending(draw, stream, vocab, "bad-body-unterminated-last", broken=True)


def _two_texts(c: Content) -> tuple[str, str]:
    first = c.words(WORDS, 1, 4)
    second = c.words(WORDS, 1, 4)
    return first, second if second != first else f"{second} again"


def preview_across_tool(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Previews, then a tool call before any text; then a later text, or none."""
    mark = "preview-across-tool"
    end = choose_at(draw, "preview-end", PREVIEW_ENDS)
    c = Content(draw(SEEDS))
    early, late = _two_texts(c)
    events = [
        make_text_delta(c, early),
        make_tool_start(c, call_id=_CALL_ID),
        make_tool_result(c, call_id=_CALL_ID),
    ]
    if end == "replaced":
        events += [make_text_delta(c, late), make_text(c, f"{early}{late}")]
    else:
        events.append(make_text_delta(c, late))
    _insert(stream, _step_at(stream), events, mark)


def text_after_streamed_step(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A step whose text replaces its previews, then a later step's text with none."""
    mark = "text-after-streamed-step"
    c = Content(draw(SEEDS))
    first, second = _two_texts(c)
    events = [
        make_text_delta(c, first),
        make_text(c, first),
        make_tool_start(c, call_id=_CALL_ID),
        make_tool_result(c, call_id=_CALL_ID),
        make_text(c, second),
    ]
    _insert(stream, _step_at(stream), events, mark)


SEAMS: tuple[Mutation, ...] = (
    Mutation(
        "strip-chars-edge",
        "R1",
        "FS, GS, RS, US or U+FEFF (what str.strip() or trim() removes, not JSON's "
        "whitespace) at an edge of a line that is not the last, or as the whole line",
        strip_chars_edge,
    ),
    Mutation(
        "preview-across-tool",
        "preview",
        "previews before a tool call with no text before it; a later text, or none",
        preview_across_tool,
    ),
    Mutation(
        "text-after-streamed-step",
        "preview",
        "a step's text after its previews, then a later step's text without previews",
        text_after_streamed_step,
    ),
    Mutation(
        "unterminated-content-last",
        "R6",
        "the run cut off on a text, text_delta or tool_result line without its newline",
        unterminated_content_last,
        byte_level=True,
    ),
    Mutation(
        "bad-body-unterminated-last",
        "R4",
        "the run cut off on a content line whose body does not fit, without its newline",
        bad_body_unterminated_last,
        byte_level=True,
    ),
)
#: Mutations after which a correct client must reject the stream.
SEAMS_REJECTING = frozenset({"strip-chars-edge", "bad-body-unterminated-last"})

#: Per seam, the strata besides its simplest case (``generators/strata.py``'s ``STRATA``):
#: each of FS, GS, RS, US in one place and U+FEFF in each; each content a cut-off run ends
#: on; previews left at the end as well as replaced.
SEAM_STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    "strip-chars-edge": (
        *({"strip-char": k, "strip-place": k % len(STRIP_PLACES)} for k in range(1, 4)),
        *({"strip-char": 4, "strip-place": k} for k in range(len(STRIP_PLACES))),
    ),
    "unterminated-content-last": tuple({"seam-content": k} for k in range(1, len(CONTENT_KINDS))),
    "bad-body-unterminated-last": tuple({"seam-content": k} for k in range(1, len(CONTENT_KINDS))),
    "preview-across-tool": ({"preview-end": 1},),
}

__all__ = [
    "CONTENT_KINDS",
    "PREVIEW_ENDS",
    "SEAMS",
    "SEAMS_REJECTING",
    "SEAM_STRATA",
    "STRIP_CHARS",
    "STRIP_PLACES",
]
