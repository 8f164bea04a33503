"""Folding line outcomes into a :class:`RunSummary`: what a correct client (a dashboard)
reconstructs from the stream."""

from __future__ import annotations

from collections.abc import Collection, Sized
from dataclasses import dataclass, field
from typing import Any

from stella_conform.oracle.outcomes import NO_CHOICES, U64_MAX, Kind, LineOutcome


@dataclass
class ToolCallRecord:
    call_id: str
    name: str | None
    status: str  # ok | error | open | orphan


@dataclass
class RunSummary:
    """What a correct client reconstructs from the stream."""

    verdict: str = "accept"
    rejected_line: int | None = None
    reason: str | None = None
    lines: int = 0
    known_events: int = 0
    unrecognized_events: int = 0
    unrecognized_types: list[str] = field(default_factory=list)
    blank_lines: int = 0
    torn_final_line: bool = False
    texts: list[str] = field(default_factory=list)
    preview: str | None = None
    stages: dict[str, list[str]] = field(default_factory=lambda: {"turn": [], "run": []})
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    terminator: str | None = None
    turns_completed: int = 0
    events_after_terminator: int = 0
    cost_usd: float | None = None
    elapsed_ms: int | None = None
    #: Sums over step_usage events (None before the first one): exact integers, however big.
    usage: dict[str, int] | None = None
    #: What a bounded fold (``decode``) did not keep, by field: characters of ``preview``,
    #: earlier ``texts``, ``tool_calls``, ``stages``, ``unrecognized_types``.  Empty when
    #: nothing was cut (always, when grading).
    cut: dict[str, int] = field(default_factory=dict)

    @property
    def final_text(self) -> str | None:
        return self.texts[-1] if self.texts else None

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "rejected_line": self.rejected_line,
            "reason": self.reason,
            "lines": self.lines,
            "known_events": self.known_events,
            "unrecognized_events": self.unrecognized_events,
            "unrecognized_types": list(self.unrecognized_types),
            "blank_lines": self.blank_lines,
            "torn_final_line": self.torn_final_line,
            "final_text": self.final_text,
            "texts": list(self.texts),
            "preview": self.preview,
            "stages": {k: list(v) for k, v in self.stages.items()},
            "tool_calls": [
                {"call_id": c.call_id, "name": c.name, "status": c.status} for c in self.tool_calls
            ],
            "terminator": self.terminator,
            "turns_completed": self.turns_completed,
            "events_after_terminator": self.events_after_terminator,
            "cost_usd": self.cost_usd,
            "elapsed_ms": self.elapsed_ms,
            "usage": dict(self.usage) if self.usage is not None else None,
            **({"cut": dict(self.cut)} if self.cut else {}),
        }


#: The step_usage counts a dashboard sums (RunSummary.usage).
USAGE_FIELDS = ("input_tokens", "output_tokens", "duration_ms")


#: What a bounded fold keeps: characters of the texts and of the preview (each), and
#: items of each list (tool calls, a scope's stages, unrecognized types).
FOLD_TEXT_KEEP = 4 * 1024 * 1024
FOLD_ITEMS_KEEP = 50_000


class RunFold:
    """Folds line outcomes into a :class:`RunSummary`, one outcome at a time.

    ``turn_boundary`` is the vocabulary's name for the end of a turn: ``turn_complete``
    today, ``complete`` in the older stella that had not renamed it yet; or several
    (:attr:`Vocabulary.turn_boundaries`: a client that knows both names counts either).

    ``bounded``: keep at most :data:`FOLD_TEXT_KEEP` characters of the texts (the latest:
    the final text stays right) and of the preview (its start), and at most
    :data:`FOLD_ITEMS_KEEP` items of each list; what is left out is counted in
    ``summary.cut``.  ``decode`` folds bounded, so its memory does not grow with the
    stream (a whole fold holds every text delta it reads); grading folds whole.
    """

    def __init__(
        self,
        turn_boundary: str | Collection[str] = "turn_complete",
        *,
        choices: frozenset[str] = NO_CHOICES,
        touched: set[str] | None = None,
        bounded: bool = False,
    ) -> None:
        self.summary = RunSummary()
        #: Reading B of ``unknown-count``: the count is of distinct type names.
        self._count_names = "unknown-count" in choices
        self._touched = touched
        self._untyped = 0  # unrecognized lines with no type name
        one = isinstance(turn_boundary, str)
        self._turn_boundaries = frozenset([turn_boundary] if one else turn_boundary)
        self._preview: list[str] = []
        self._calls: dict[str, ToolCallRecord] = {}
        self._unknown: dict[str, None] = {}
        self._last_ts: int | None = None
        self._last_known: str | None = None
        self._bounded = bounded
        self._preview_chars = 0
        self._text_chars = 0

    def _cut(self, what: str, amount: int = 1) -> None:
        self.summary.cut[what] = self.summary.cut.get(what, 0) + amount

    def _full(self, items: Sized, what: str) -> bool:
        """Whether a bounded fold keeps no more of this list (and counts the one left out)."""
        if self._bounded and len(items) >= FOLD_ITEMS_KEEP:
            self._cut(what)
            return True
        return False

    def feed(self, outcome: LineOutcome) -> None:
        s = self.summary
        if outcome.line > s.lines:
            s.lines = outcome.line
        kind = outcome.kind
        if kind is Kind.KNOWN:
            self._known(outcome)
            return
        if kind is Kind.BLANK:
            s.blank_lines += 1
            return
        if kind is Kind.TORN:
            s.torn_final_line = True
            return
        if kind is Kind.REJECT:
            s.verdict = "reject"
            s.rejected_line = outcome.line
            s.reason = outcome.reason
            return
        event = outcome.event or {}
        self._clock(event.get("ts"))
        s.unrecognized_events += 1
        if outcome.tag is None:
            self._untyped += 1
        elif outcome.tag in self._unknown or not self._full(self._unknown, "unrecognized_types"):
            self._unknown.setdefault(outcome.tag)

    def _known(self, outcome: LineOutcome) -> None:
        s = self.summary
        event = outcome.event or {}
        ts = event.get("ts")
        if ts is not None:
            self._clock(ts)
        s.known_events += 1
        tag = outcome.tag
        if s.terminator == "run_complete":
            s.events_after_terminator += 1
        self._last_known = tag
        if tag == "text_delta":
            delta = event["delta"]
            if self._bounded and self._preview_chars + len(delta) > FOLD_TEXT_KEEP:
                self._cut("preview", len(delta))
            else:
                self._preview.append(delta)
                self._preview_chars += len(delta)
        elif tag == "text":
            s.texts.append(event["text"])
            self._preview.clear()
            self._preview_chars = 0
            if self._bounded:
                self._text_chars += len(event["text"])
                while self._text_chars > FOLD_TEXT_KEEP and len(s.texts) > 1:
                    self._text_chars -= len(s.texts.pop(0))
                    self._cut("texts")
        elif tag == "stage":
            # a stage without scope is known only to a vocabulary from before scope
            # existed, when every stage was the engine's: a turn stage
            stages = s.stages.setdefault(event.get("scope", "turn"), [])
            if not self._full(stages, "stages"):
                stages.append(event["name"])
        elif tag == "tool_start":
            call = event["call"]
            if not self._full(s.tool_calls, "tool_calls"):
                record = ToolCallRecord(call["call_id"], call["name"], "open")
                self._calls[record.call_id] = record
                s.tool_calls.append(record)
        elif tag == "tool_result":
            output = event["output"]
            status = "ok" if "ok" in output else "error"
            found = self._calls.get(event["call_id"])
            if found is not None and found.status == "open":
                found.status = status
            elif not self._full(s.tool_calls, "tool_calls"):
                s.tool_calls.append(ToolCallRecord(event["call_id"], None, "orphan"))
        elif tag == "step_usage":
            totals = s.usage if s.usage is not None else dict.fromkeys(USAGE_FIELDS, 0)
            for name in USAGE_FIELDS:
                value = event.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    totals[name] += value
            s.usage = totals
        elif tag in self._turn_boundaries:
            s.turns_completed += 1
        elif tag == "run_complete" and s.terminator != "run_complete":
            s.terminator = "run_complete"
            s.cost_usd = event["cost_usd"]

    def _clock(self, ts: Any) -> None:
        if not isinstance(ts, int) or isinstance(ts, bool) or not 0 <= ts <= U64_MAX:
            return
        s = self.summary
        if self._last_ts is None:
            s.elapsed_ms = 0
        else:
            s.elapsed_ms = (s.elapsed_ms or 0) + max(0, ts - self._last_ts)
        self._last_ts = ts

    def finish(self) -> RunSummary:
        s = self.summary
        s.unrecognized_types = sorted(self._unknown)
        # reading B counts each type name once (a line without a name still counts once)
        by_name = len(s.unrecognized_types) + self._untyped
        if s.unrecognized_events != by_name:  # some name seen twice
            if self._touched is not None:
                self._touched.add("unknown-count")
            if self._count_names:
                s.unrecognized_events = by_name
        s.preview = "".join(self._preview) if self._preview else None
        if s.terminator is None and self._last_known == "error":
            s.terminator = "error"
        return s
