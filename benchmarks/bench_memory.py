"""Peak memory against the size of a run: flat, or it grows with what a run graded.

Three axes, each the kit's own process (its clients are not counted):

* ``--examples 25,100,400``: ``stella-conform run --mode persistent -j 1`` on the Python
  reference client (every reader and dashboard check), without a case cache (cold) and
  then again from one (warm);
* ``--lines 16,250,550,1950``: the same run in a kit process whose generated runs are drawn
  larger (``runs(max_turns=T, max_steps=T)``, T chosen for the median stream length asked
  for; the table gives the lengths the streams had);
* ``--fuzz 300``: ``stella-conform fuzz --for 300s`` on the same client (coverage feedback
  on, its default), the kit's resident memory sampled every few seconds; the slope of the
  second half, in MiB per minute, and where it leads after 30 minutes.

Peak resident memory is the kernel's (``wait4``'s ``ru_maxrss``), so a table row is the
most the process ever held.  Wall and CPU are shown only as context: the figures to compare
are the MiB.

    python benchmarks/bench_memory.py [--examples LIST] [--lines LIST] [--fuzz SECONDS]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import machine, table

REPO = Path(__file__).resolve().parents[1]
KIT = str(Path(sys.executable).parent / "stella-conform")
CLIENT = [sys.executable, str(REPO / "adapters" / "python" / "reference_client.py")]
#: runs(max_turns=T, max_steps=T) for a wanted median stream length (measured: 30 draws
#: each, medians 16, 245, 550 and 1,946 lines).
SIZES = {16: 3, 250: 20, 550: 40, 1950: 60}


def peak(
    argv: list[str], cwd: str, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """(peak RSS MiB, wall s, CPU s) of one process, its children's CPU included."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) not in (0, 1) or "Traceback" in err:
        raise SystemExit(f"{argv[:3]}... failed: {err[-2000:]}")
    return usage.ru_maxrss / 1024, wall, usage.ru_utime + usage.ru_stime


def by_examples(counts: list[int]) -> list[tuple[str, ...]]:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for n in counts:
            base = [KIT, "run", "--mode", "persistent", "--no-database", "-j", "1",
                    "--profile", "dashboard", "--examples", str(n)]  # fmt: skip
            folder = str(Path(scratch) / f"cases-{n}")
            for label, cache in (("cold", ["--no-case-cache"]), ("warm", [])):
                if label == "warm":  # fill the cache first, then measure a run from it
                    peak([*base, "--case-cache", folder, "--", *CLIENT], scratch)
                argv = [*base, *(cache or ["--case-cache", folder]), "--", *CLIENT]
                mib, wall, cpu = peak(argv, scratch)
                rows.append((f"--examples {n}, {label}", f"{mib:.0f}", f"{wall:.1f}", f"{cpu:.1f}"))
                print(rows[-1], file=sys.stderr)
    return rows


#: A kit process whose runs are drawn larger, grading like ``run`` and printing the line
#: counts of the streams it handed the client.
_LARGER = """
import functools, importlib, statistics, sys, tempfile
from pathlib import Path
cases_module = importlib.import_module("stella_conform.generators.cases")
runs_module = importlib.import_module("stella_conform.generators.runs")
size = int(sys.argv[1])
cases_module.runs = functools.partial(runs_module.runs, max_turns=size, max_steps=size)
from stella_conform.conformance.checks import select
from stella_conform.conformance.clients.runner import Client, PersistentSession
from stella_conform.conformance.suite import run_suite
from stella_conform.options.suite import suite_config
lines = []
real = PersistentSession.run
def counted(self, stream, feed=None, _real=real):
    lines.append(stream.count(b"\\n"))
    return _real(self, stream) if feed is None else _real(self, stream, feed)
PersistentSession.run = counted
with tempfile.TemporaryDirectory() as scratch:
    config = suite_config(
        Client(tuple(sys.argv[4:]), mode="persistent", timeout=60),
        {"examples": int(sys.argv[2]), "failures_dir": Path(scratch)}, database_dir=None,
    )
    results = run_suite(select(("reader", "dashboard")), config, jobs=1)
bad = [r.id for r in results if r.outcome not in ("pass", "skip")]
with open(sys.argv[3], "w") as out:
    print(statistics.median(lines), max(lines), sum(lines), len(lines), ",".join(bad), file=out)
"""


def by_lines(medians: list[int], examples: int) -> list[tuple[str, ...]]:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for wanted in medians:
            size = SIZES.get(wanted) or max(3, round((wanted / 16) ** 0.5 * 3))
            out = Path(scratch) / "out.txt"
            argv = [sys.executable, "-c", _LARGER, str(size), str(examples), str(out), *CLIENT]
            mib, wall, _ = peak(argv, scratch)
            median, longest, total, _, bad = out.read_text().split(" ", 4)
            note = f" (not passed: {bad.strip()})" if bad.strip() else ""
            rows.append((
                f"runs of up to {size} turns x {size} steps, --examples {examples}",
                f"{float(median):,.0f}", f"{int(longest):,}", f"{int(total):,}", f"{mib:.0f}",
                f"{wall:.1f}{note}",
            ))  # fmt: skip
            print(rows[-1], file=sys.stderr)
    return rows


def fuzz_slope(seconds: int, every: float = 5.0) -> tuple[list[tuple[str, ...]], str]:
    samples: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as scratch:
        argv = [KIT, "fuzz", "--for", f"{seconds}s", "--no-database", "--", *CLIENT]
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=scratch, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        while True:
            pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
            except OSError:
                status = ""
            rss = next((int(line.split()[1]) for line in status.splitlines()
                        if line.startswith("VmRSS:")), 0)  # fmt: skip
            if rss:
                samples.append((time.perf_counter() - started, rss / 1024))
            time.sleep(every)
        proc.returncode = 0  # reaped above
    half = [s for s in samples if s[0] >= samples[-1][0] / 2]
    slope = statistics.linear_regression([t for t, _ in half], [m for _, m in half]).slope
    last = samples[-1][1]
    at_30 = last + slope * (1800 - samples[-1][0])
    rows = [(f"{t:.0f}", f"{m:.0f}") for t, m in samples[:: max(1, len(samples) // 12)]]
    summary = (
        f"peak {usage.ru_maxrss / 1024:.0f} MiB; slope over the second half "
        f"{slope * 60:+.2f} MiB per minute; at 30 minutes about {at_30:.0f} MiB"
    )
    return rows, summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", default="25,100,400")
    parser.add_argument("--lines", default="16,250,550,1950")
    parser.add_argument("--lines-examples", type=int, default=10)
    parser.add_argument("--fuzz", type=int, default=0, help="seconds of fuzzing (0: none)")
    args = parser.parse_args()
    print(f"machine: {machine()}\n")
    if args.examples:
        rows = by_examples([int(n) for n in args.examples.split(",")])
        print(table(rows, ("run (reader + dashboard, persistent, -j 1)", "peak MiB",
                           "wall s", "CPU s")) + "\n")  # fmt: skip
    if args.lines:
        rows = by_lines([int(n) for n in args.lines.split(",")], args.lines_examples)
        header = ("generated runs", "median lines", "longest", "lines graded", "peak MiB", "wall s")
        print(table(rows, header) + "\n")
    if args.fuzz:
        rows, summary = fuzz_slope(args.fuzz)
        print(table(rows, ("fuzz, seconds", "resident MiB")))
        print(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
