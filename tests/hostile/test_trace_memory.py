"""``trace check`` holds no more for a long journal than for a short one.

A journal has no size cap: the checks that look back over all of it (call ids, effect ids,
frame sets) keep what they remember in tables that move to disk past a budget, so the peak
stays flat (``benchmarks/bench_trace_memory.py`` measures a 400 MB journal).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hostile_kit import MEMORY_CAP_MIB, kit_peak, no_leaks  # noqa: F401 (no_leaks: autouse)

FLOOD = Path(__file__).parent / "journal_flood.py"

#: How much more a six times longer journal may take: the on-disk tables' page cache
#: filling up, and the allocator's noise (a kit that keeps every id takes 60 MiB more).
GROWTH_MIB = 12


def _peak_of_journal(mib: int) -> int:
    gen = subprocess.Popen([sys.executable, str(FLOOD), str(mib)], stdout=subprocess.PIPE)
    assert gen.stdout is not None
    try:
        code, peak, stderr = kit_peak("trace", "check", "-", stdin=gen.stdout.fileno())
    finally:
        gen.stdout.close()
        gen.wait()
    assert code == 0, stderr
    return peak


@pytest.mark.slow
def test_trace_check_memory_is_flat_in_the_journal_size() -> None:
    """Valid journals of 20 and 120 MiB, every call, effect and frame set new."""
    short, long = _peak_of_journal(20), _peak_of_journal(120)
    assert long - short < GROWTH_MIB and long < MEMORY_CAP_MIB, (short, long)
