"""One strategy per known event type.

The default vocabulary's types have hand-written builders: shaped like what
stella really writes (``type`` first, small readable values), each writing an
event from expanded content (:mod:`content`).  The runs generator calls them with
a step's content; the strategies here draw one seed per event, which shrinks to 0,
the smallest event that still fits.  Types that only an
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

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.schema_driven import SchemaStrategies, SchemaStrategyError
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
    return SEEDS.map(lambda seed: Content(seed).words(WORDS, min_words, max_words))


def money_of(c: Content) -> float:
    return c.uint(50_000) / 10_000


# ------------------------------------------------------------------ events from content
# Each builder writes one event from expanded content (content.py): the runs generator
# calls them with a step's content, the strategies below with one drawn seed each.


def make_stage(c: Content, scope: str | None = None, name: str | None = None) -> Event:
    return {
        "type": "stage",
        "name": name if name is not None else c.pick(STAGE_ORDER),
        "scope": scope if scope is not None else c.pick(("turn", "run")),
    }


def make_text(c: Content, value: str | None = None) -> Event:
    return {"type": "text", "text": value if value is not None else c.words(WORDS, 1, 6)}


def make_text_delta(c: Content, value: str | None = None) -> Event:
    return {"type": "text_delta", "delta": value if value is not None else c.words(WORDS, 1, 2)}


def make_reasoning(c: Content) -> Event:
    return {"type": "reasoning", "delta": c.words(WORDS, 1, 3)}


def make_tool_input(c: Content) -> Any:
    """A path, a command, or any JSON value (a third each)."""
    kind = c.count(0, 2)
    if kind == 0:
        return {"path": c.pick(("src/lib.rs", "README.md", "a/b.py"))}
    if kind == 1:
        return {"cmd": c.words(WORDS, 1, 3)}
    return c.json()


def make_tool_start(c: Content, call_id: str | None = None, name: str | None = None) -> Event:
    return {
        "type": "tool_start",
        "call": {
            "call_id": call_id if call_id is not None else f"call_{c.count(1, 99)}",
            "name": name if name is not None else c.pick(TOOLS),
            "input": make_tool_input(c),
        },
    }


def make_tool_output(c: Content) -> dict[str, Any]:
    if not c.chance():
        return {"ok": {"content": c.words(WORDS, 0, 4)}}
    message = c.words(WORDS, 1, 4)
    kind = c.pick((None, "not_found", "timeout", "internal"))
    return {"error": {"message": message, **({"class": kind} if kind else {})}}


def make_tool_result(c: Content, call_id: str | None = None) -> Event:
    return {
        "type": "tool_result",
        "call_id": call_id if call_id is not None else f"call_{c.count(1, 99)}",
        "output": make_tool_output(c),
        "duration_ms": c.uint(60_000),
    }


def make_step_usage(c: Content, step: int | None = None) -> Event:
    return {
        "type": "step_usage",
        "step": step if step is not None else c.uint(20),
        "model": c.pick(MODELS),
        "input_tokens": c.uint(10_000),
        "output_tokens": c.uint(10_000),
        "cached_input_tokens": c.uint(10_000),
        "cost_usd": money_of(c),
        "duration_ms": c.uint(60_000),
        "retries": c.uint(3),
        "tool_calls": c.uint(5),
    }


def make_turn_complete(c: Content) -> Event:
    return {"type": "turn_complete", "model": c.pick(MODELS), "cost_usd": money_of(c)}


def make_run_complete(c: Content) -> Event:
    return {"type": "run_complete", "model": c.pick(MODELS), "cost_usd": money_of(c)}


def make_error(c: Content, retryable: bool | None = None) -> Event:
    message = c.words(WORDS, 1, 5)
    return {
        "type": "error",
        "message": message,
        "retryable": retryable if retryable is not None else c.chance(),
    }


def make_budget_tick(c: Content) -> Event:
    spent = money_of(c)
    limit = money_of(c) if c.chance() else None
    return {
        "type": "budget_tick",
        "spent_usd": spent,
        "limit_usd": limit,
        "mode": c.pick(("observed", "enforced", "off")),
    }


def make_file_change(c: Content) -> Event:
    return {
        "type": "file_change",
        "path": c.pick(("src/lib.rs", "README.md", "tests/test_a.py")),
        "kind": c.pick(("created", "modified", "deleted", "read")),
        "added": c.uint(500),
        "removed": c.uint(500),
    }


# ------------------------------------------------------------------ strategies
# One draw per event: the seed its content is expanded from (0: the simplest event).


def _seeded(make: Callable[..., Any], *args: Any) -> st.SearchStrategy[Any]:
    return SEEDS.map(lambda seed: make(Content(seed), *args))


@cache
def stage(scope: str | None = None, name: str | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_stage, scope, name)


@cache
def text(value: str | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_text, value)


@cache
def text_delta(value: str | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_text_delta, value)


@cache
def reasoning() -> st.SearchStrategy[Event]:
    return _seeded(make_reasoning)


@cache
def tool_input() -> st.SearchStrategy[Any]:
    return _seeded(make_tool_input)


@cache
def tool_start(call_id: str | None = None, name: str | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_tool_start, call_id, name)


@cache
def tool_output() -> st.SearchStrategy[dict[str, Any]]:
    return _seeded(make_tool_output)


@cache
def tool_result(call_id: str | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_tool_result, call_id)


@cache
def step_usage(step: int | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_step_usage, step)


@cache
def turn_complete() -> st.SearchStrategy[Event]:
    return _seeded(make_turn_complete)


@cache
def run_complete() -> st.SearchStrategy[Event]:
    return _seeded(make_run_complete)


@cache
def error(retryable: bool | None = None) -> st.SearchStrategy[Event]:
    return _seeded(make_error, retryable)


@cache
def budget_tick() -> st.SearchStrategy[Event]:
    return _seeded(make_budget_tick)


@cache
def file_change() -> st.SearchStrategy[Event]:
    return _seeded(make_file_change)


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
        self._schema_only: list[str] | None = None

    def for_type(self, tag: str) -> st.SearchStrategy[Event]:
        if tag not in self._cache:
            built = self._build(tag)
            if tag in self.vocab.prose_constrained:  # what the schema says only in prose
                built = built.map(partial(_mended, self.vocab, tag))
            self._cache[tag] = built
        return self._cache[tag]

    def schema_only_types(self) -> list[str]:
        # what stella writes, whether or not the client under test claims to know it
        # (the turn boundary is written by the run generator, under the vocabulary's name);
        # asked once per run, so worked out once
        if self._schema_only is None:
            self._schema_only = sorted(
                t
                for t in self.vocab.written
                if t != self.vocab.turn_boundary and self._hand_written(t) is None
            )
        return list(self._schema_only)

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
