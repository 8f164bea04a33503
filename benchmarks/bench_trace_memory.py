"""Peak memory of ``trace check`` against the journal's size: flat, whatever the size.

Each journal is a valid session written by ``tests/hostile/journal_flood.py`` (turns that
assemble a prompt of two frames, request, run and resolve one call, and perform one side
effect: every check has something to see, and every call id, effect id and frame set is
new, so what the checks remember grows with the journal).  It is written to a temporary
file first, then ``stella-conform trace check FILE`` runs on it alone.

Peak resident memory is the kernel's (``wait4``'s ``ru_maxrss``) for the kit's own
process.  Wall and CPU are shown only as context: the figures to compare are the MiB,
against the 150 MiB the kit promises (docs/trace.md).

    python benchmarks/bench_trace_memory.py [--sizes 20,120,400]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import machine, table

REPO = Path(__file__).resolve().parents[1]
KIT = str(Path(sys.executable).parent / "stella-conform")
FLOOD = REPO / "tests" / "hostile" / "journal_flood.py"
CAP_MIB = 150


def peak(argv: list[str]) -> tuple[float, float, float]:
    """(peak RSS MiB, wall s, CPU s) of one process, which must exit 0."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or "Traceback" in err:
        raise SystemExit(f"{argv[:4]}... exit {code}: {err[-2000:]}")
    return usage.ru_maxrss / 1024, wall, usage.ru_utime + usage.ru_stime


def measure(sizes: list[int]) -> list[tuple[str, ...]]:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        journal = Path(scratch) / "journal.jsonl"
        for mib in sizes:
            with open(journal, "wb") as out:
                subprocess.run([sys.executable, str(FLOOD), str(mib)], stdout=out, check=True)
            size = journal.stat().st_size / 1e6
            with open(journal, "rb") as written:
                lines = sum(1 for _ in written)
            rss, wall, cpu = peak([KIT, "trace", "check", str(journal)])
            row = (f"{size:.0f} MB", f"{lines:,}", f"{rss:.0f}", f"{wall:.0f}", f"{cpu:.0f}")
            rows.append(row)
            print(row, file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20,120,400", help="journal sizes in MiB")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = measure(sizes)
    print(f"trace check, peak memory by journal size ({machine()})\n")
    print(table(rows, ("journal", "lines", "peak MiB", "wall s", "CPU s")))
    worst = max(float(r[2]) for r in rows)
    verdict = "under" if worst < CAP_MIB else "OVER"
    print(f"\nworst peak {worst:.0f} MiB: {verdict} the {CAP_MIB} MiB cap")


if __name__ == "__main__":
    main()
