"""What the test suite costs in CPU, per test and per file: a pytest plugin and its summary.

Wall time says little on a shared two-core machine (a test waits for a core, or for a
client's timeout), and ``--durations`` counts neither the clients a test starts nor the
other xdist worker.  This plugin records, around each test, the CPU of the test's own
process plus that of the children it reaped (clients, kit processes, pytester runs), and
the CPU of each pytest session at its end; the summary adds them up.

    rm -f /tmp/cpu.*
    SUITE_CPU_OUT=/tmp/cpu PYTHONPATH=benchmarks .venv/bin/pytest -q -n 2 -p suite_cpu
    .venv/bin/python benchmarks/suite_cpu.py /tmp/cpu --top 30

The session total is the controller's CPU at its end, which includes its xdist workers
once they are reaped: the figure a CI machine pays for the suite.  Per-test figures do
not include a test's share of collection or of session-scoped fixtures.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def _out() -> str:
    return os.environ.get("SUITE_CPU_OUT", "/tmp/suite-cpu")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall = _cpu(), time.monotonic()
    yield
    with open(f"{_out()}.{os.getpid()}.tests", "a", encoding="utf-8") as f:
        f.write(f"{item.nodeid}\t{_cpu() - cpu:.3f}\t{time.monotonic() - wall:.3f}\n")


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = hasattr(session.config, "workerinput")
    with open(f"{_out()}.{os.getpid()}.session", "w", encoding="utf-8") as f:
        f.write(f"{'worker' if worker else 'main'}\t{_cpu():.3f}\n")


def summary(prefix: str, top: int) -> str:
    tests: list[tuple[str, float, float]] = []
    sessions: list[tuple[str, float]] = []
    folder, stem = Path(prefix).parent, Path(prefix).name
    for path in sorted(folder.glob(f"{stem}.*")):
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
        if path.suffix == ".tests":
            tests.extend((r[0], float(r[1]), float(r[2])) for r in rows if len(r) == 3)
        elif path.suffix == ".session":
            sessions.extend((r[0], float(r[1])) for r in rows if len(r) == 2)
    if not tests:
        return f"no per-test records under {prefix}.*: was pytest run with -p suite_cpu?"
    lines = []
    # the suite's session first; other pytest sessions it started (pytester runs in a
    # process, tests/conftest.py's collection-only primer) wrote theirs too
    for cpu in sorted((cpu for kind, cpu in sessions if kind == "main"), reverse=True):
        lines.append(f"session: {cpu:.1f} CPU-s (pytest and everything it reaped)")
    lines.append(f"{len(tests)} tests: {sum(t[1] for t in tests):.1f} CPU-s in the tests")
    by_file: dict[str, float] = {}
    for nodeid, cpu, _ in tests:
        name = nodeid.split("::")[0]
        by_file[name] = by_file.get(name, 0.0) + cpu
    ranked = sorted(by_file.items(), key=lambda item: -item[1])
    lines += [f"{cpu:8.1f}  {name}" for name, cpu in ranked]
    lines.append(f"the {top} costliest tests (CPU-s, wall s):")
    for nodeid, cpu, wall in sorted(tests, key=lambda t: -t[1])[:top]:
        lines.append(f"{cpu:8.2f} {wall:7.2f}  {nodeid}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix", help="the SUITE_CPU_OUT the suite ran with")
    parser.add_argument("--top", type=int, default=25, help="how many single tests to list")
    args = parser.parse_args(argv)
    print(summary(args.prefix, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
