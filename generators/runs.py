"""Structurally valid runs: what a healthy stella writes, in a legal order.

A run is one or more turns.  A wrapper (when present) brackets the turns with
run-scope stages that only move forward, except the revise loop back to
``execute`` (which never re-runs ``witness``).  Inside a turn the engine
writes its own turn-scope stages and, per step, ``text_delta`` previews
followed by the authoritative ``text`` (a retried call re-streams its deltas
from the start), tool calls paired by ``call_id``, and the metering events.
Each turn ends on ``turn_complete``; the run ends on exactly one
``run_complete``, or a failed run ends on ``error`` instead.  ``ts`` is absent,
present, partial, or going backwards.

Everything shrinks towards one turn with no steps: ``turn_complete`` then
``run_complete``.

Example::

    from hypothesis import given
    from stella_conform.generators import runs

    @given(runs())
    def test_dashboard_never_crashes(run):
        Dashboard().feed(run.to_bytes())
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose
from stella_conform.generators.events import (
    STAGE_ORDER,
    WORDS,
    Event,
    make_budget_tick,
    make_error,
    make_file_change,
    make_reasoning,
    make_run_complete,
    make_step_usage,
    make_text_delta,
    make_tool_input,
    make_tool_output,
    make_turn_complete,
    strategies_for,
)
from stella_conform.schemas.vocabulary import Vocabulary

TsMode = Literal["absent", "increasing", "partial", "backwards"]

#: Run-scope stages a wrapper may emit before the first execute.
_RUN_PRELUDE = ("triage", "context_recall", "research", "plan", "scope_review")
#: And after the last turn.
_RUN_CODA = ("verify", "verdict", "reflect", "context_write", "complete")


#: Built once: ``json.dumps`` with options builds an encoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: And its C encoder, built once too: ``JSONEncoder.encode`` builds one (and a float
#: formatter) on every call, half the cost of encoding an event.  The same options and
#: output; no circular-reference bookkeeping (an event is a tree).
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # untyped in typeshed
_C_ENCODE: Any = (
    _MAKE_ENCODER(
        None, _COMPACT.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    if _MAKE_ENCODER is not None
    else None
)


def encode(event: Any) -> bytes:
    """Compact JSON, UTF-8, as stella writes a stream line."""
    if _C_ENCODE is None:  # pragma: no cover - an interpreter without json's C speedups
        return _COMPACT.encode(event).encode("utf-8")
    return "".join(_C_ENCODE(event, 0)).encode("utf-8")


@dataclass
class Run:
    """A valid run: its events in order, and how it ends."""

    events: list[Event]
    failed: bool = False
    ts_mode: TsMode = "absent"
    wrapper: bool = False
    retried_steps: int = 0
    #: The file a recorded run was read from (``--seed-corpus``); None when generated.
    recording: str | None = None

    def to_bytes(self) -> bytes:
        return b"".join(encode(e) + b"\n" for e in self.events)


@cache
def subsequence(items: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    """An order-preserving subsequence, as one draw (a bit per item; shrinks towards empty)."""
    return st.integers(0, 2 ** len(items) - 1).map(
        lambda keep: [item for i, item in enumerate(items) if keep >> i & 1]
    )


_TOOL_NAMES = ("edit_file", "read_file", "bash")
_BETWEEN = (None, make_budget_tick, make_file_change, make_text_delta)


@dataclass(frozen=True)
class StepPlan:
    """What one model step writes, decoded from one drawn number (0: nothing at all).

    The digits, least significant first: a budget tick, a usage event, a text without
    previews, a retried model call, 0-3 previews, 0-2 reasoning events, 0-2 tool calls.
    Hypothesis shrinks the number towards 0, so a step sheds its tool calls last.
    """

    budget: bool
    usage: bool
    text_alone: bool
    retried: bool
    deltas: int
    reasoning: int
    tools: int

    #: The radix of each digit, in the order above.
    RADIX = (2, 2, 2, 2, 4, 3, 3)

    @classmethod
    def decode(cls, number: int) -> StepPlan:
        digits = []
        for radix in cls.RADIX:
            number, digit = divmod(number, radix)
            digits.append(digit)
        budget, usage, text_alone, retried, deltas, reasoning, tools = digits
        return cls(
            bool(budget), bool(usage), bool(text_alone), bool(retried), deltas, reasoning, tools
        )


_STEP_PLANS = st.integers(0, math.prod(StepPlan.RADIX) - 1)
_TS_MODES: st.SearchStrategy[TsMode] = st.sampled_from(
    ("absent", "increasing", "partial", "backwards")
)


def run_stage(name: str) -> Event:
    return {"type": "stage", "name": name, "scope": "run"}


def _step(plan: StepPlan, c: Content, step: int, next_call: list[int]) -> list[Event]:
    """One model step: previews, the authoritative text, tool calls, metering."""
    out: list[Event] = [make_reasoning(c) for _ in range(plan.reasoning)]
    deltas = [make_text_delta(c)["delta"] for _ in range(plan.deltas)]
    if deltas:
        out.extend({"type": "text_delta", "delta": d} for d in deltas)
        if plan.retried:
            # a retried model call re-streams its deltas from the start
            again = deltas[: c.count(1, len(deltas))]
            out.extend({"type": "text_delta", "delta": d} for d in again)
            deltas = again + [make_text_delta(c)["delta"] for _ in range(c.count(0, 1))]
            out.extend({"type": "text_delta", "delta": d} for d in deltas[len(again) :])
        final = "".join(deltas)
    else:
        final = c.words(WORDS, 1, 6)
    if deltas or plan.text_alone:
        out.append({"type": "text", "text": final})
    for _ in range(plan.tools):
        next_call[0] += 1
        call_id = f"call_{next_call[0]}"
        name = c.pick(_TOOL_NAMES)
        out.append(
            {
                "type": "tool_start",
                "call": {"call_id": call_id, "name": name, "input": make_tool_input(c)},
            }
        )
        between = c.pick(_BETWEEN)
        if between is not None:
            out.append(between(c))
        out.append(
            {
                "type": "tool_result",
                "call_id": call_id,
                "output": make_tool_output(c),
                "duration_ms": c.uint(60_000),
            }
        )
    if plan.usage:
        out.append(make_step_usage(c, step=step))
    if plan.budget:
        out.append(make_budget_tick(c))
    return out


@st.composite
def runs(
    draw: st.DrawFn,
    vocab: Vocabulary | None = None,
    *,
    max_turns: int = 3,
    max_steps: int = 3,
    failed: bool | None = None,
    ts: TsMode | None = None,
) -> Run:
    """Structurally valid runs (public strategy).

    A run is drawn as a plan — turns, their stages and steps, and one number per step
    saying which events it writes — plus one seed per step (and one per run) that its
    events' content is expanded from (content.py): a run of thirty events is about
    twenty draws.
    """
    vocab = vocab or Vocabulary.default()
    n_turns = between(draw, 1, max_turns)
    is_failed = draw(st.booleans()) if failed is None else failed
    wrapper = draw(st.booleans())
    ends = Content(draw(SEEDS))  # the turn and run terminators' content
    events: list[Event] = []
    if wrapper:
        events.extend(run_stage(n) for n in draw(subsequence(_RUN_PRELUDE)))
    next_call = [0]
    retried = 0
    step_no = 0
    for turn in range(n_turns):
        last = turn == n_turns - 1
        if wrapper:
            events.append(run_stage("execute"))  # the revise loop re-enters execute
        stages = draw(subsequence(STAGE_ORDER))
        cut = sum(1 for s in stages if STAGE_ORDER.index(s) <= STAGE_ORDER.index("execute"))
        events.extend({"type": "stage", "name": s, "scope": "turn"} for s in stages[:cut])
        for _ in range(between(draw, 0, max_steps)):
            step_no += 1
            plan = StepPlan.decode(draw(_STEP_PLANS))
            events.extend(_step(plan, Content(draw(SEEDS)), step_no, next_call))
            retried += plan.retried and plan.deltas > 0
        events.extend({"type": "stage", "name": s, "scope": "turn"} for s in stages[cut:])
        if last and is_failed:
            events.append(make_error(ends, retryable=False))
            break
        # an older stella closed a turn with `complete`: write the vocabulary's own name
        events.append({**make_turn_complete(ends), "type": vocab.turn_boundary})
        if wrapper and not last:
            if turn == 0 and draw(st.booleans()):
                events.append(run_stage("witness"))  # once, before the first verify
            events.append(run_stage("verify"))
    if wrapper and not is_failed:
        events.extend(run_stage(n) for n in draw(subsequence(_RUN_CODA)))
    if not is_failed:
        events.append(make_run_complete(ends))
    events = _with_schema_only_types(draw, vocab, events)
    ts_mode: TsMode = ts if ts is not None else draw(_TS_MODES)
    _stamp(events, ts_mode, draw)
    return Run(events, failed=is_failed, ts_mode=ts_mode, wrapper=wrapper, retried_steps=retried)


def _with_schema_only_types(draw: st.DrawFn, vocab: Vocabulary, events: list[Event]) -> list[Event]:
    """Sprinkle events of the types only an imported schema knows (never after the end).

    A function, not a strategy of its own: a strategy made for each run would be most of the
    cost of a run without such types (its label is a digest of this function's source,
    computed for every new strategy), and its draws are the same choices either way."""
    gen = strategies_for(vocab)
    others = gen.schema_only_types()
    if not others:
        return events
    out = list(events)
    for _ in range(between(draw, 0, 2)):
        tag = choose(draw, others)
        at = between(draw, 0, max(0, len(out) - 1))
        out.insert(at, draw(gen.for_type(tag)))
    return out


def _stamp(events: list[Event], mode: TsMode, draw: st.DrawFn) -> None:
    """Clock values expanded from one seed: the start, then each event's pace.

    Drawing each event's step, direction and presence cost up to four Hypothesis draws
    per event, for values no check is about beyond their order; a seeded pace gives the
    same distribution for one draw.  Seed 0 is a clock that stands still.
    """
    if mode == "absent":
        return
    pace = Content(draw(SEEDS))
    clock = 1_700_000_000_000 + pace.count(0, 100_000_000_000)
    for event in events:
        step = pace.count(0, 5_000)
        if mode == "backwards" and pace.chance(0.25):
            step = -pace.count(1, 10_000)
        clock = max(0, clock + step)
        if mode == "partial" and pace.chance():
            event.pop("ts", None)
            continue
        event["ts"] = clock


__all__ = ["Run", "StepPlan", "TsMode", "encode", "runs", "subsequence"]
