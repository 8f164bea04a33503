"""Mutations of ``ts``, the optional timestamp: removed, going backwards, at the edges of its
range, null, or a value no u64 holds.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import choose, choose_at, option_at
from stella_conform.generators.mutations.stream import Mutation, Stream
from stella_conform.schemas.vocabulary import Vocabulary


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


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
STAMP_MUTATIONS: tuple[Mutation, ...] = (
    Mutation("ts-removed", "ts", "every ts removed", ts_removed),
    Mutation("ts-backwards", "ts", "ts on every line, sometimes going backwards", ts_backwards),
    Mutation("ts-extreme", "ts", "ts at the edges of its range (0, 2^53+1, 2^64-1)", ts_extreme),
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
)
