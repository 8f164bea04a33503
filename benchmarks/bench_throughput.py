"""Grading at the speed of the client: the kit's cases/s over the client's own cases/s.

One default persistent run of the reader profile (every check, the default 25 generated
examples each, one worker) is graded in this process while every stream handed to the
client is recorded: cold (a new case cache folder: every case generated, and kept), then
warm (the same run again, its cases read from that folder, as a second run or a CI run
after a cache restore grades them).  The same streams are then given to a fresh client
process alone, every case written at once (pipelined), which is the fastest the client
can take them; through ``minimal_harness.py`` (a case at a time, reading each answer
up to its summary, nothing checked: what the protocol itself costs); and once more through
the kit's runner and the oracle without any generation (lockstep, a case at a time), the
floor of the kit's own machinery.  A last row grades the same run again with the cases a
first client's run kept in memory (shared generation, as ``stella-conform matrix`` does
for every client after the first).  Wall and CPU (this process and its reaped children:
the client) are both reported, as rates and as ratios to the client alone.

    python benchmarks/bench_throughput.py [--examples N] [--client python|node|both] [--rounds N]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import minimal_harness
from _harness import machine, table

from stella_conform.allocator import keep_large_blocks
from stella_conform.conformance.checks import select
from stella_conform.conformance.clients.runner import LINES, Client, Feed, PersistentSession
from stella_conform.conformance.suite import forget_shared_cases, run_suite
from stella_conform.options.suite import suite_config
from stella_conform.oracle.decoder import decode_all

REPO = Path(__file__).resolve().parents[1]
CLIENTS = {
    "python": (sys.executable, str(REPO / "adapters" / "python" / "reference_client.py")),
    "node": ("node", str(REPO / "adapters" / "node" / "reference_client.js")),
}


def cpu() -> float:
    """CPU seconds of this process and of its reaped children (the client)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measured(fn: Callable[[], int]) -> tuple[int, float, float]:
    """(cases, wall seconds, CPU seconds) of one call."""
    wall0, cpu0 = time.perf_counter(), cpu()
    cases = fn()
    return cases, time.perf_counter() - wall0, cpu() - cpu0


def kit_run(
    argv: tuple[str, ...],
    examples: int,
    streams: list[bytes],
    *,
    share: bool = False,
    cache: Path | None = None,
    seed: int = 0,
) -> int:
    """A default persistent run of the reader profile, recording every stream it sends.

    ``share``: keep the generated cases for the next client (as a matrix does); ``cache``:
    the case cache folder (``stella-conform run``'s default is one; ``None``: no cache);
    ``seed``: the run's ``--seed``."""
    real_run = PersistentSession.run

    def recording(self: PersistentSession, stream: bytes, feed: Feed = LINES) -> object:
        streams.append(stream)
        return real_run(self, stream, feed)

    with tempfile.TemporaryDirectory() as scratch:
        config = suite_config(
            Client(argv, mode="persistent"),
            {
                "examples": examples,
                "seed": seed,
                "failures_dir": Path(scratch),
                "case_cache": cache,
            },
            database_dir=None,
            share_generation=share,
        )
        PersistentSession.run = recording  # type: ignore[method-assign]
        try:
            results = run_suite(select(("reader",)), config, jobs=1)
        finally:
            PersistentSession.run = real_run  # type: ignore[method-assign]
    bad = [r.id for r in results if r.outcome not in ("pass", "skip")]
    if bad:
        raise SystemExit(f"the reference client did not pass {bad}: not a fair measurement")
    return len(streams)


def client_alone(argv: tuple[str, ...], streams: list[bytes]) -> int:
    """Every case written at once to one client process; returns when all are answered."""
    # the environment the kit gives a client (a long text may be sent as its digest)
    env = Client(argv, mode="persistent").environment()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin

    def feed() -> None:
        for n, stream in enumerate(streams):
            payload = base64.b64encode(stream).decode("ascii")
            stdin.write(b'{"kind":"case","id":"c%d","stream":"%s"}\n' % (n, payload.encode()))
        stdin.write(b'{"kind":"shutdown"}\n')
        stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    answered = 0
    for raw in proc.stdout:
        if b'"summary"' in raw and json.loads(raw).get("kind") == "summary":
            answered += 1
    writer.join()
    proc.wait()
    if answered != len(streams):
        raise SystemExit(f"the client answered {answered} of {len(streams)} cases")
    return answered


def kit_replay(argv: tuple[str, ...], streams: list[bytes]) -> int:
    """The same streams through the kit's runner and oracle, no generation: the floor."""
    with PersistentSession(Client(argv, mode="persistent")) as session:
        for stream in streams:
            obs = session.run(stream)
            decode_all(stream)  # the oracle's reading, as the kit makes it for each case
            if not obs.ok:  # (verdicts were graded in the kit's run, alternatives and all)
                raise SystemExit(f"replay failed: {obs.describe()}")
    return len(streams)


ROWS = (
    "client alone, pipelined (baseline)",
    "minimal harness, a case at a time (the floor)",
    "kit runner + oracle, no generation",
    "kit, cold: cases generated (and cached)",
    "kit, warm: the cases from the case cache",
    "kit, the same run for a second client (matrix)",
)


def measure(name: str, argv: tuple[str, ...], examples: int, rounds: int) -> list[tuple[str, ...]]:
    """Each row's rates and ratios, the median over ``rounds`` (a ratio is taken within a
    round: the kit and the client alone measured back to back, under the same load)."""
    kit_run(argv, min(examples, 2), [])  # warm-up: imports, strategy construction
    samples: dict[str, list[tuple[float, float, float, float]]] = {row: [] for row in ROWS}
    cases = 0
    for _ in range(rounds):
        streams: list[bytes] = []
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder)
            cases, cold_wall, cold_cpu = measured(
                partial(kit_run, argv, examples, streams, cache=cache)
            )
            again: list[bytes] = []
            _, warm_wall, warm_cpu = measured(partial(kit_run, argv, examples, again, cache=cache))
        if again != streams:
            raise SystemExit("the warm run sent other streams than the cold one")
        _, alone_wall, alone_cpu = measured(partial(client_alone, argv, streams))
        _, least_wall, least_cpu = measured(partial(minimal_harness.feed, argv, streams))
        _, floor_wall, floor_cpu = measured(partial(kit_replay, argv, streams))
        kit_run(argv, examples, [], share=True)  # a first client draws the cases...
        _, shared_wall, shared_cpu = measured(lambda: kit_run(argv, examples, [], share=True))
        forget_shared_cases()
        timed = (
            (alone_wall, alone_cpu),
            (least_wall, least_cpu),
            (floor_wall, floor_cpu),
            (cold_wall, cold_cpu),
            (warm_wall, warm_cpu),
            (shared_wall, shared_cpu),
        )
        for row, (wall, cpu_s) in zip(ROWS, timed, strict=True):
            samples[row].append((wall, cpu_s, alone_wall, alone_cpu))
        size = sum(len(s) for s in streams)
        print(f"{name}: {cases} cases, {size / 1e6:.2f} MB of streams", file=sys.stderr)
    return [
        (
            f"{name}: {row}",
            f"{statistics.median(cases / w for w, _, _, _ in samples[row]):,.0f}",
            f"{statistics.median(cases / c for _, c, _, _ in samples[row]):,.0f}",
            f"{statistics.median(aw / w for w, _, aw, _ in samples[row]):.3f}",
            f"{statistics.median(ac / c for _, c, _, ac in samples[row]):.3f}",
        )
        for row in ROWS
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=25)
    parser.add_argument("--client", choices=("python", "node", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=1, help="report the median of N rounds")
    args = parser.parse_args()
    keep_large_blocks()  # the kit's process as `stella-conform run` sets it up (allocator.py)
    names = ["python", "node"] if args.client == "both" else [args.client]
    if "node" in names and not shutil.which("node"):
        print("node not found: the Node.js client is not measured", file=sys.stderr)
        names.remove("node")
    rows: list[tuple[str, ...]] = []
    for name in names:
        rows += measure(name, CLIENTS[name], args.examples, args.rounds)
    print(f"machine: {machine()}")
    print(
        f"cases: every stream a default persistent run (reader profile, {args.examples} "
        f"examples per check, -j 1) hands the client; median of {args.rounds} round(s)\n"
    )
    header = ("grading", "cases/s wall", "cases/s CPU", "x client, wall", "x client, CPU")
    print(table(rows, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
