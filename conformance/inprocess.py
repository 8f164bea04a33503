"""Grade a Python parser in-process: no subprocess, same checks, same shrinking.

The client author hands over a callable::

    def read(lines, report):           # report is optional: read(lines) also works
        for number, raw in enumerate(lines, 1):
            ...                          # parse one physical line (bytes, with its newline)
            report.line(number, "known", type=event["type"])
        return {"unrecognized_events": n, "final_text": text}   # or None

Returning means the stream was accepted; raising any exception means it was
rejected (give the exception a ``line`` attribute to name the line).  The
callable sees the lines one at a time, in lockstep: line *k+1* is produced
only after line *k* was reported (when ``report`` is used), so a parser that
buffers the whole stream is caught by ``R1.line-by-line`` exactly as a
subprocess would be.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any

from stella_conform.conformance.runner import Observation, split_lines

OUTCOMES = ("known", "unknown", "blank", "torn", "reject")


class Report:
    """What the parser tells the kit, line by line."""

    def __init__(self) -> None:
        self.lines: dict[int, dict[str, Any]] = {}
        self.pending: set[int] = set()

    def line(
        self,
        number: int,
        outcome: str,
        type: str | None = None,
        reason: str | None = None,
    ) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
        self.lines[number] = {
            "kind": "line",
            "line": number,
            "outcome": outcome,
            "type": type,
            "reason": reason,
        }
        self.pending.discard(number)

    def defer(self, number: int) -> None:
        """The line may be a torn last line; it will be reported once more is known."""
        self.pending.add(number)


def wants_report(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in params.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in positional)


def run_inprocess(fn: Callable[..., Any], stream: bytes) -> Observation:
    obs = Observation()
    started = time.monotonic()
    report = Report()
    lines = split_lines(stream)
    lockstep = wants_report(fn)

    def feed() -> Iterator[bytes]:
        for index, line in enumerate(lines, 1):
            if lockstep and index > 1 and obs.stalled_at is None:
                previous = index - 1
                if previous not in report.lines and previous not in report.pending:
                    obs.stalled_at = previous  # asked for more before reporting the last one
            yield line

    try:
        result = fn(feed(), report) if lockstep else fn(feed())
    except Exception as exc:  # any exception is the parser rejecting
        obs.verdict = "reject"
        line = getattr(exc, "line", None) or getattr(exc, "lineno", None)
        obs.summary = {
            "kind": "summary",
            "verdict": "reject",
            "rejected_line": line if isinstance(line, int) else None,
        }
        obs.detail = f"{type(exc).__name__}: {exc}"
    else:
        obs.verdict = "accept"
        summary = dict(result) if isinstance(result, dict) else {}
        summary.update({"kind": "summary", "verdict": "accept"})
        obs.summary = summary
    obs.lines = report.lines
    obs.seconds = time.monotonic() - started
    return obs
