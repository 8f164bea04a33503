"""``trace check`` holds no more for a long journal than for a short one.

A journal has no size cap: the checks that look back over all of it (call ids, effect ids,
frame sets) keep what they remember in tables that move to disk past a budget, so the peak
stays flat (``benchmarks/bench_trace_memory.py`` measures a 400 MB journal).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_kit import (  # noqa: F401 (no_leaks: autouse)
    HANG_GUARD,
    KIT_ARGV,
    MEMORY_CAP_MIB,
    kit_peak,
    no_leaks,
)
from journal_ids import many_ids_lines

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog scans /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_trace_check_stopped_with_its_ids_on_disk_leaves_no_folder(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """Stopped while its tables are on disk and it waits for more of the journal: the stop
    handler removes the folder (exit 143), or after SIGKILL the watchdog does."""
    temp = Path(os.environ["TMPDIR"])
    proc = subprocess.Popen(
        [*KIT_ARGV, "trace", "check", "-"], cwd=tmp_path, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdin is not None
        proc.stdin.writelines(many_ids_lines(60))  # 60,000 ids: past the memory budget
        proc.stdin.flush()
        deadline = time.monotonic() + 10 * HANG_GUARD
        while not any(temp.glob("stella-conform-trace-*")):  # the tables moved to disk
            assert time.monotonic() < deadline and proc.poll() is None, "no folder made"
            time.sleep(0.05)
        time.sleep(0.5)  # (its watchdog told of it: the line follows the folder at once)
        proc.send_signal(stop)
        _out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (143 if stop == signal.SIGTERM else -9), err[-2000:]
    deadline = time.monotonic() + HANG_GUARD
    while any(temp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(temp.iterdir())
