"""Hypothesis strategies for what the fake ``stella`` plays to a wrapper: a run and how it ends.

A :class:`ScenarioCase` is a valid run's stream plus an ending: exit 0 after
``run_complete``; exit 1 after an ``error``; exit 3 (stopped on purpose,
``status: aborted``, a ``reason`` naming the cap) after the last finished turn;
130 or 143 cut at a line boundary, or, for ``killed-mid-line``, in the middle
of the last line written.  What a conforming wrapper makes of it is
:func:`stella_conform.conformance.clients.wrapper.expected_outcome`, not stored here.

Kinds: ``ending`` (any of the above), ``stopped`` (exit 3 only),
``killed-mid-line`` (130 or 143, dying mid-line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.envelopes import ABORT_REASONS
from stella_conform.generators.runs import Run, runs
from stella_conform.schemas.vocabulary import Vocabulary

KINDS = ("ending", "stopped", "killed-mid-line")
EXITS = (0, 1, 3, 130, 143)


@dataclass(frozen=True)
class ScenarioCase:
    kind: str
    scenario: dict[str, Any] = field(hash=False)
    stream: bytes = b""


def _cut(run: Run, keep: int) -> bytes:
    """The run's first ``keep`` events, as bytes (a run stopped before its end)."""
    return Run(run.events[:keep]).to_bytes()


@st.composite
def scenario_cases(
    draw: st.DrawFn, vocab: Vocabulary | None = None, kinds: tuple[str, ...] = KINDS
) -> ScenarioCase:
    """Wrapper scenarios of the given kinds (public strategy)."""
    vocab = vocab or Vocabulary.default()
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown scenario kind {unknown[0]!r} (known: {', '.join(KINDS)})")
    kind = draw(st.sampled_from(kinds))
    if kind == "stopped":
        code = 3
    elif kind == "killed-mid-line":
        code = draw(st.sampled_from((130, 143)))
    else:
        code = draw(st.sampled_from(EXITS))
    run = draw(runs(vocab, failed=code == 1, max_turns=2, max_steps=2))
    scenario: dict[str, Any] = {"exit": code, "pace_ms": 0}
    if code in (0, 1):
        stream = run.to_bytes()
    else:
        # stopped or killed before the end: no run_complete; keep at least one event
        body = [e for e in run.events if e.get("type") != "run_complete"]
        keep = draw(st.integers(1, max(1, len(body))))
        stream = _cut(Run(body), keep)
    if code == 3:
        scenario["reason"] = draw(st.sampled_from(ABORT_REASONS))
    if kind == "killed-mid-line":
        scenario["die_mid_line"] = True
    return ScenarioCase(kind, scenario, stream)


__all__ = ["KINDS", "ScenarioCase", "scenario_cases"]
