"""Mutations of the ``type`` field (rules R2 and R3): types a client must not recognize.

An unknown type named to tempt a guess or wearing a known type's fields, one between a
tool call and its result, a type missing or not a string, a near-miss spelling of a known
type, and a stage in its archived shape (no scope).
"""

from __future__ import annotations

from hypothesis import strategies as st

from stella_conform.generators.alphabets import NAME_CHARS
from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose
from stella_conform.generators.events import strategies_for, tool_start
from stella_conform.generators.mutations.stream import Line, Mutation, Stream, insert_at
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


def unknown_tag(c: Content, vocab: Vocabulary) -> str:
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
    tag = unknown_tag(c, vocab)
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


def unknown_type(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    insert_at(draw, stream, _unknown_event(draw, vocab, "unknown-type"))


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
    insert_at(draw, stream, Line(dict(body), marks={"type-missing"}))


def type_non_string(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    value = choose(draw, (5, None, True, ["text"], {"name": "text"}, 1.5))
    insert_at(draw, stream, Line({"type": value, "text": "x"}, marks={"type-non-string"}))


def near_misses(vocab: Vocabulary) -> list[tuple[str, str]]:
    """(known type, a spelling of it that is another string) the client could mistake."""
    return [
        (t, v)
        for t, vs in NEAR_MISS.items()
        if t in vocab.known
        for v in vs
        if v not in vocab.recognized
    ]


def type_near_miss(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    tag, variant = choose(draw, near_misses(vocab))
    body = dict(draw(strategies_for(vocab).for_type(tag)))
    body["type"] = variant
    insert_at(draw, stream, Line(body, marks={"type-near-miss"}))


def scopeless_stage(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A stage without scope (the archived shape of a stage)."""
    if "stage" not in vocab.known:
        return
    name = choose(draw, ("execute", "plan", "verify", "complete"))
    insert_at(draw, stream, Line({"type": "stage", "name": name}, marks={"scopeless-stage"}))


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
TYPE_MUTATIONS: tuple[Mutation, ...] = (
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
    Mutation(
        "scopeless-stage",
        "R3",
        "a stage without scope (an archived shape)",
        scopeless_stage,
        reading="scopeless-stage",
    ),
)
