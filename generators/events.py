"""One strategy per known event type.

The default vocabulary's types have hand-written strategies: fast, shaped
like what stella really writes (``type`` first, small readable values), and
shrinking towards the smallest event that still fits.  Types that only an
imported wire schema knows are generated from the schema
(:mod:`schema_driven`), or — opt-in — by ``hypothesis-jsonschema``'s
``from_schema`` where that package works on the installed Hypothesis.

Example::

    from hypothesis import given
    from stella_conform.generators import events

    @given(events("tool_result"))
    def test_my_parser_reads_tool_results(event):
        assert my_parser.parse(event).call_id == event["call_id"]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any, Literal

from hypothesis import strategies as st

from stella_conform.generators.schema_driven import (
    ANY_JSON,
    SchemaStrategies,
    SchemaStrategyError,
)
from stella_conform.schemas.prose import repair
from stella_conform.schemas.vocabulary import Vocabulary

Event = dict[str, Any]
Engine = Literal["kit", "hypothesis-jsonschema"]

WORDS = (
    "the",
    "fix",
    "test",
    "auth",
    "module",
    "store",
    "migration",
    "done",
    "made",
    "change",
    "file",
    "error",
    "retry",
    "plan",
    "ok",
    "café",
    "naïve",
    "日本",
    "🙂",
    'quote"',
    "back\\slash",
)
MODELS = ("anthropic/claude-fable-5", "openai/gpt-x", "local/tiny", "m")
TOOLS = ("edit_file", "read_file", "bash", "write_file", "search")

#: Stage names in the order stella emits them (a turn emits a subsequence).
STAGE_ORDER = (
    "triage",
    "context_recall",
    "research",
    "plan",
    "scope_review",
    "execute",
    "witness",
    "verify",
    "verdict",
    "reflect",
    "context_write",
    "complete",
)

U64_MAX = 2**64 - 1


@cache
def prose(min_words: int = 1, max_words: int = 6) -> st.SearchStrategy[str]:
    """Readable text from a small word list, with some non-ASCII and escapes in it."""
    return st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=max_words).map(" ".join)


@cache
def small_uint(hi: int = 10_000) -> st.SearchStrategy[int]:
    return st.integers(0, hi)


@cache
def money() -> st.SearchStrategy[float]:
    return st.integers(0, 50_000).map(lambda n: n / 10_000)


@cache
def call_ids() -> st.SearchStrategy[str]:
    return st.integers(1, 99).map(lambda n: f"call_{n}")


@cache
def stage(scope: str | None = None, name: str | None = None) -> st.SearchStrategy[Event]:
    return st.builds(
        lambda n, s: {"type": "stage", "name": n, "scope": s},
        st.just(name) if name is not None else st.sampled_from(STAGE_ORDER),
        st.just(scope) if scope is not None else st.sampled_from(("turn", "run")),
    )


@cache
def text(value: str | None = None) -> st.SearchStrategy[Event]:
    return (st.just(value) if value is not None else prose()).map(
        lambda t: {"type": "text", "text": t}
    )


@cache
def text_delta(value: str | None = None) -> st.SearchStrategy[Event]:
    return (st.just(value) if value is not None else prose(1, 2)).map(
        lambda d: {"type": "text_delta", "delta": d}
    )


@cache
def reasoning() -> st.SearchStrategy[Event]:
    return prose(1, 3).map(lambda d: {"type": "reasoning", "delta": d})


@cache
def tool_input() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries({"path": st.sampled_from(("src/lib.rs", "README.md", "a/b.py"))}),
        st.fixed_dictionaries({"cmd": prose(1, 3)}),
        ANY_JSON,
    )


@cache
def tool_start(call_id: str | None = None, name: str | None = None) -> st.SearchStrategy[Event]:
    return st.builds(
        lambda cid, n, i: {"type": "tool_start", "call": {"call_id": cid, "name": n, "input": i}},
        st.just(call_id) if call_id is not None else call_ids(),
        st.just(name) if name is not None else st.sampled_from(TOOLS),
        tool_input(),
    )


@cache
def tool_output() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        prose(0, 4).map(lambda c: {"ok": {"content": c}}),
        st.builds(
            lambda m, c: {"error": {"message": m, **({"class": c} if c else {})}},
            prose(1, 4),
            st.sampled_from((None, "not_found", "timeout", "internal")),
        ),
    )


@cache
def tool_result(call_id: str | None = None) -> st.SearchStrategy[Event]:
    return st.builds(
        lambda cid, out, d: {
            "type": "tool_result",
            "call_id": cid,
            "output": out,
            "duration_ms": d,
        },
        st.just(call_id) if call_id is not None else call_ids(),
        tool_output(),
        small_uint(60_000),
    )


@cache
def step_usage(step: int | None = None) -> st.SearchStrategy[Event]:
    return st.builds(
        lambda s, m, i, o, c, cost, d, r, t: {
            "type": "step_usage",
            "step": s,
            "model": m,
            "input_tokens": i,
            "output_tokens": o,
            "cached_input_tokens": c,
            "cost_usd": cost,
            "duration_ms": d,
            "retries": r,
            "tool_calls": t,
        },
        st.just(step) if step is not None else small_uint(20),
        st.sampled_from(MODELS),
        small_uint(),
        small_uint(),
        small_uint(),
        money(),
        small_uint(60_000),
        small_uint(3),
        small_uint(5),
    )


@cache
def turn_complete() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda m, c: {"type": "turn_complete", "model": m, "cost_usd": c},
        st.sampled_from(MODELS),
        money(),
    )


@cache
def run_complete() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda m, c: {"type": "run_complete", "model": m, "cost_usd": c},
        st.sampled_from(MODELS),
        money(),
    )


@cache
def error(retryable: bool | None = None) -> st.SearchStrategy[Event]:
    return st.builds(
        lambda m, r: {"type": "error", "message": m, "retryable": r},
        prose(1, 5),
        st.just(retryable) if retryable is not None else st.booleans(),
    )


@cache
def budget_tick() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda spent, limit, mode: {
            "type": "budget_tick",
            "spent_usd": spent,
            "limit_usd": limit,
            "mode": mode,
        },
        money(),
        st.none() | money(),
        st.sampled_from(("observed", "enforced", "off")),
    )


@cache
def file_change() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda p, k, a, r: {"type": "file_change", "path": p, "kind": k, "added": a, "removed": r},
        st.sampled_from(("src/lib.rs", "README.md", "tests/test_a.py")),
        st.sampled_from(("created", "modified", "deleted", "read")),
        small_uint(500),
        small_uint(500),
    )


@dataclass(frozen=True)
class HandWritten:
    """A hand-written strategy and the required fields it always writes."""

    make: Callable[[], st.SearchStrategy[Event]]
    writes: frozenset[str]


HANDWRITTEN: Mapping[str, HandWritten] = {
    "stage": HandWritten(stage, frozenset({"type", "name", "scope"})),
    "text": HandWritten(text, frozenset({"type", "text"})),
    "text_delta": HandWritten(text_delta, frozenset({"type", "delta"})),
    "reasoning": HandWritten(reasoning, frozenset({"type", "delta"})),
    "tool_start": HandWritten(tool_start, frozenset({"type", "call"})),
    "tool_result": HandWritten(
        tool_result, frozenset({"type", "call_id", "output", "duration_ms"})
    ),
    "step_usage": HandWritten(
        step_usage,
        frozenset(
            {
                "type",
                "step",
                "model",
                "input_tokens",
                "output_tokens",
                "cached_input_tokens",
                "cost_usd",
                "duration_ms",
                "retries",
                "tool_calls",
            }
        ),
    ),
    "turn_complete": HandWritten(turn_complete, frozenset({"type", "model", "cost_usd"})),
    "run_complete": HandWritten(run_complete, frozenset({"type", "model", "cost_usd"})),
    "error": HandWritten(error, frozenset({"type", "message", "retryable"})),
    "budget_tick": HandWritten(budget_tick, frozenset({"type", "spent_usd", "mode", "limit_usd"})),
    "file_change": HandWritten(
        file_change, frozenset({"type", "path", "kind", "added", "removed"})
    ),
}


@dataclass
class StrategyReport:
    """How each type of a vocabulary is generated, and what fell back and why."""

    sources: dict[str, str] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)

    def describe(self) -> list[str]:
        return [f"{tag}: {why}" for tag, why in sorted(self.fallbacks.items())]


class EventStrategies:
    """Per-type strategies for one vocabulary, built once and cached."""

    def __init__(self, vocab: Vocabulary, engine: Engine = "kit") -> None:
        self.vocab = vocab
        self.engine = engine
        self.report = StrategyReport()
        self._cache: dict[str, st.SearchStrategy[Event]] = {}
        self._schema = SchemaStrategies(vocab.root)

    def for_type(self, tag: str) -> st.SearchStrategy[Event]:
        if tag not in self._cache:
            built = self._build(tag)
            if tag in self.vocab.prose_constrained:  # what the schema says only in prose
                built = built.map(partial(_mended, self.vocab, tag))
            self._cache[tag] = built
        return self._cache[tag]

    def schema_only_types(self) -> list[str]:
        # what stella writes, whether or not the client under test claims to know it
        # (the turn boundary is written by the run generator, under the vocabulary's name)
        return sorted(
            t
            for t in self.vocab.written
            if t != self.vocab.turn_boundary and self._hand_written(t) is None
        )

    def _hand_written(self, tag: str) -> HandWritten | None:
        hand = HANDWRITTEN.get(tag)
        if hand is None:
            return None
        required = set(self.vocab.members[tag].get("required", ()))
        if not required <= hand.writes:
            self.report.fallbacks[tag] = (
                f"this schema requires {sorted(required - hand.writes)}, which the hand-written "
                "strategy does not write; generated from the schema instead"
            )
            return None
        return hand

    def _build(self, tag: str) -> st.SearchStrategy[Event]:
        hand = self._hand_written(tag)
        if hand is not None:
            self.report.sources[tag] = "hand-written"
            return hand.make()
        member = self.vocab.schema_for(tag)
        if self.engine == "hypothesis-jsonschema":
            probed = _probe_from_schema(member)
            if isinstance(probed, str):
                self.report.fallbacks[tag] = f"hypothesis-jsonschema: {probed}; used the kit's own"
            else:
                self.report.sources[tag] = "hypothesis-jsonschema"
                return probed
        try:
            strategy = self._schema.build(self.vocab.members[tag], f"#/oneOf[{tag}]")
            self.report.sources[tag] = "schema-driven"
            return strategy
        except SchemaStrategyError as exc:
            self.report.fallbacks[tag] = f"cannot generate from its schema ({exc}); minimal shape"
            self.report.sources[tag] = "minimal"
            return st.just({"type": tag})


def _mended(vocab: Vocabulary, tag: str, event: Event) -> Event:
    return repair(vocab, tag, dict(event))


def _probe_from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Event] | str:
    """``from_schema`` for one member, proven by one real draw, or why it cannot be used."""
    try:
        from hypothesis_jsonschema import from_schema  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return "not installed (pip install 'stella-conform[schema]')"
    try:
        strategy = from_schema(schema)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strategy.example()  # from_schema defers its errors to the first draw
    except Exception as exc:
        return f"broken on this Hypothesis ({type(exc).__name__}: {exc})"
    return strategy  # type: ignore[no-any-return]


@cache
def strategies_for(vocab: Vocabulary, engine: Engine = "kit") -> EventStrategies:
    return EventStrategies(vocab, engine)


def events(tag: str, vocab: Vocabulary | None = None) -> st.SearchStrategy[Event]:
    """Valid events of one known type (public strategy)."""
    vocab = vocab or Vocabulary.default()
    if tag not in vocab.known:
        raise ValueError(f"{tag!r} is not a known type of {vocab.ident}")
    return strategies_for(vocab).for_type(tag)


def known_events(vocab: Vocabulary | None = None) -> st.SearchStrategy[Event]:
    """Valid events of any known type of the vocabulary (public strategy)."""
    vocab = vocab or Vocabulary.default()
    gen = strategies_for(vocab)
    return st.one_of([gen.for_type(tag) for tag in sorted(vocab.known)])
