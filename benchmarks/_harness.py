"""Shared measuring helpers: every figure is a ratio against a baseline timed in the same run."""

from __future__ import annotations

import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

DRAW = settings(
    database=None,
    phases=[Phase.generate],
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def draw_for(
    strategy: st.SearchStrategy[Any], examples: int, seed: int = 0
) -> tuple[list[Any], float]:
    """Draw ``examples`` values under ``@given`` (the way the kit uses them); values and seconds."""
    out: list[Any] = []

    @settings(DRAW, max_examples=examples)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    from hypothesis import seed as hseed

    collect = hseed(seed)(collect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        collect()
        elapsed = time.perf_counter() - start
    return out, elapsed


def best_of(repeats: int, fn: Callable[[], float]) -> float:
    """The fastest of several timings: the least disturbed by a noisy shared machine."""
    return min(fn() for _ in range(repeats))


def machine() -> str:
    import os

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = (str(c).ljust(w) for c, w in zip(row, widths, strict=True))
        return "| " + " | ".join(cells) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *[line(r) for r in rows]])
