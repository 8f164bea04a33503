"""Grading speed: cases per second per mode, -j speed-up, and end-to-end runs.

Baseline: exit-code mode, one process spawned per case. Persistent mode and the in-process
API are measured against it on the same cases (the curated fixture corpus), in the same run.

    python benchmarks/bench_grading.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _harness import machine, table

from stella_conform.conformance.clients.runner import (
    Client,
    PersistentSession,
    run_exit,
    run_report,
)
from stella_conform.oracle.corpus import iter_fixtures

REPO = Path(__file__).resolve().parents[1]
PY = (sys.executable, str(REPO / "adapters" / "python" / "reference_client.py"))
NODE = ("node", str(REPO / "adapters" / "node" / "reference_client.js"))
KIT = str(Path(sys.executable).parent / "stella-conform")


def cases_per_second(run: object, streams: list[bytes]) -> float:
    start = time.perf_counter()
    for stream in streams:
        run(stream)  # type: ignore[operator]
    return len(streams) / (time.perf_counter() - start)


def wall(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([KIT, *args], capture_output=True, check=False, cwd="/tmp")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2, help="passes over the fixture corpus")
    args = parser.parse_args()
    streams = [f.stream for f in iter_fixtures()] * args.repeat
    sys.path.insert(0, str(REPO / "examples" / "python-client"))
    from mini_stella import read  # the in-process example parser

    from stella_conform.conformance.clients.inprocess import run_inprocess

    exit_rate = cases_per_second(lambda s: run_exit(Client(PY), s), streams)
    report_rate = cases_per_second(lambda s: run_report(Client(PY, mode="report"), s), streams)
    with PersistentSession(Client(PY, mode="persistent")) as session:
        persistent_rate = cases_per_second(session.run, streams)
    inprocess_rate = cases_per_second(lambda s: run_inprocess(read, s), streams)
    rows = [
        ("exit mode, a process per case (baseline)", f"{exit_rate:,.1f}", "1.0"),
        (
            "report mode (lockstep), a process per case",
            f"{report_rate:,.1f}",
            f"{report_rate / exit_rate:.1f}",
        ),
        (
            "persistent mode, one process",
            f"{persistent_rate:,.1f}",
            f"{persistent_rate / exit_rate:.1f}",
        ),
        ("in-process (pytest API)", f"{inprocess_rate:,.1f}", f"{inprocess_rate / exit_rate:.1f}"),
    ]
    print(f"machine: {machine()}")
    print(
        f"cases: the {len(streams) // args.repeat} curated fixtures x {args.repeat}, "
        "Python reference client\n"
    )
    print(table(rows, ("grading", "cases/s", "x baseline")))

    j1 = wall("run", "--mode", "persistent", "--no-database", "-j", "1", "--", *PY)
    j2 = wall("run", "--mode", "persistent", "--no-database", "-j", "2", "--", *PY)
    print()
    print(
        table(
            [("-j 1", f"{j1:.1f} s", "1.0"), ("-j 2", f"{j2:.1f} s", f"{j1 / j2:.2f}")],
            ("stella-conform run --mode persistent (Python)", "wall", "speed-up"),
        )
    )

    e2e = [
        ("Python, default (--mode auto)", wall("run", "--no-database", "--", *PY)),
        ("Python, --mode report", wall("run", "--mode", "report", "--no-database", "--", *PY)),
        (
            "Python, --mode persistent",
            wall("run", "--mode", "persistent", "--no-database", "--", *PY),
        ),
    ]
    if shutil.which("node"):
        e2e += [
            ("Node.js, default (--mode auto)", wall("run", "--no-database", "--", *NODE)),
            (
                "Node.js, --mode persistent",
                wall("run", "--mode", "persistent", "--no-database", "--", *NODE),
            ),
        ]
    print()
    print(
        table(
            [(name, f"{secs:.1f} s") for name, secs in e2e],
            ("default run, all 17 checks, 25 examples each", "wall"),
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
