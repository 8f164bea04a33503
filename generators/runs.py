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
import random
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

from stella_conform.generators.events import (
    STAGE_ORDER,
    Event,
    budget_tick,
    error,
    file_change,
    prose,
    reasoning,
    run_complete,
    step_usage,
    strategies_for,
    text_delta,
    tool_input,
    tool_output,
    turn_complete,
)
from stella_conform.schemas.vocabulary import Vocabulary

TsMode = Literal["absent", "increasing", "partial", "backwards"]

#: Run-scope stages a wrapper may emit before the first execute.
_RUN_PRELUDE = ("triage", "context_recall", "research", "plan", "scope_review")
#: And after the last turn.
_RUN_CODA = ("verify", "verdict", "reflect", "context_write", "complete")


def encode(event: Any) -> bytes:
    """Compact JSON, UTF-8, as stella writes a stream line."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class Run:
    """A valid run: its events in order, and how it ends."""

    events: list[Event]
    failed: bool = False
    ts_mode: TsMode = "absent"
    wrapper: bool = False
    retried_steps: int = 0

    def to_bytes(self) -> bytes:
        return b"".join(encode(e) + b"\n" for e in self.events)


def subsequence(items: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    """An order-preserving subsequence (shrinks towards empty)."""
    return st.lists(st.booleans(), min_size=len(items), max_size=len(items)).map(
        lambda keep: [item for item, k in zip(items, keep, strict=True) if k]
    )


_BETWEEN = st.lists(st.one_of(budget_tick(), file_change(), text_delta()), max_size=1)
_DELTAS = st.lists(prose(1, 2), max_size=3)
_MORE_DELTAS = st.lists(prose(1, 2), max_size=1)
_REASONING = st.lists(reasoning(), min_size=1, max_size=2)
_TOOL_NAMES = st.sampled_from(("edit_file", "read_file", "bash"))


def run_stage(name: str) -> Event:
    return {"type": "stage", "name": name, "scope": "run"}


def _step(draw: st.DrawFn, step: int, next_call: list[int]) -> tuple[list[Event], bool]:
    """One model step: previews, the authoritative text, tool calls, metering."""
    out: list[Event] = []
    if draw(st.booleans()):
        out.extend(draw(_REASONING))
    deltas = draw(_DELTAS)
    retried = False
    if deltas:
        out.extend({"type": "text_delta", "delta": d} for d in deltas)
        if draw(st.booleans()):
            # a retried model call re-streams its deltas from the start
            retried = True
            again = deltas[: draw(st.integers(1, len(deltas)))]
            out.extend({"type": "text_delta", "delta": d} for d in again)
            deltas = again + draw(_MORE_DELTAS)
            out.extend({"type": "text_delta", "delta": d} for d in deltas[len(again) :])
        final = "".join(deltas)
    else:
        final = draw(prose())
    if bool(deltas) or draw(st.booleans()):
        out.append({"type": "text", "text": final})
    for _ in range(draw(st.integers(0, 2))):
        next_call[0] += 1
        call_id = f"call_{next_call[0]}"
        name = draw(_TOOL_NAMES)
        out.append(
            {
                "type": "tool_start",
                "call": {"call_id": call_id, "name": name, "input": draw(tool_input())},
            }
        )
        out.extend(draw(_BETWEEN))
        out.append(
            {
                "type": "tool_result",
                "call_id": call_id,
                "output": draw(tool_output()),
                "duration_ms": draw(st.integers(0, 60_000)),
            }
        )
    if draw(st.booleans()):
        out.append(draw(step_usage(step=step)))
    if draw(st.booleans()):
        out.append(draw(budget_tick()))
    return out, retried


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
    """Structurally valid runs (public strategy)."""
    vocab = vocab or Vocabulary.default()
    n_turns = draw(st.integers(1, max_turns))
    is_failed = draw(st.booleans()) if failed is None else failed
    wrapper = draw(st.booleans())
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
        for _ in range(draw(st.integers(0, max_steps))):
            step_no += 1
            step_events, was_retried = _step(draw, step_no, next_call)
            events.extend(step_events)
            retried += was_retried
        events.extend({"type": "stage", "name": s, "scope": "turn"} for s in stages[cut:])
        if last and is_failed:
            events.append(draw(error(retryable=False)))
            break
        # an older stella closed a turn with `complete`: write the vocabulary's own name
        events.append({**draw(turn_complete()), "type": vocab.turn_boundary})
        if wrapper and not last:
            if turn == 0 and draw(st.booleans()):
                events.append(run_stage("witness"))  # once, before the first verify
            events.append(run_stage("verify"))
    if wrapper and not is_failed:
        events.extend(run_stage(n) for n in draw(subsequence(_RUN_CODA)))
    if not is_failed:
        events.append(draw(run_complete()))
    events = draw(_with_schema_only_types(vocab, events))
    ts_mode: TsMode = (
        ts
        if ts is not None
        else draw(st.sampled_from(("absent", "increasing", "partial", "backwards")))
    )
    _stamp(events, ts_mode, draw)
    return Run(events, failed=is_failed, ts_mode=ts_mode, wrapper=wrapper, retried_steps=retried)


@st.composite
def _with_schema_only_types(draw: st.DrawFn, vocab: Vocabulary, events: list[Event]) -> list[Event]:
    """Sprinkle events of the types only an imported schema knows (never after the end)."""
    gen = strategies_for(vocab)
    others = gen.schema_only_types()
    if not others:
        return events
    out = list(events)
    for _ in range(draw(st.integers(0, 2))):
        tag = draw(st.sampled_from(others))
        at = draw(st.integers(0, max(0, len(out) - 1)))
        out.insert(at, draw(gen.for_type(tag)))
    return out


def _stamp(events: list[Event], mode: TsMode, draw: st.DrawFn) -> None:
    """Clock values from a plan of two draws (the start, and a seed for the pace).

    Drawing each event's step, direction and presence cost up to four Hypothesis draws
    per event, a third of a case's draws, for values no check is about beyond their
    order; a seeded pace gives the same distribution for two, and shrinks to seed 0.
    """
    if mode == "absent":
        return
    clock = draw(st.integers(1_700_000_000_000, 1_800_000_000_000))
    pace = random.Random(draw(st.integers(0, 2**32 - 1)))
    for event in events:
        step = pace.randint(0, 5_000)
        if mode == "backwards" and pace.randint(0, 3) == 0:
            step = -pace.randint(1, 10_000)
        clock = max(0, clock + step)
        if mode == "partial" and pace.random() < 0.5:
            event.pop("ts", None)
            continue
        event["ts"] = clock


__all__ = ["Run", "TsMode", "encode", "runs", "subsequence"]
