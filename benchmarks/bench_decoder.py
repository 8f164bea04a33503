"""Reference decoder speed against a bare ``json.loads``-per-line loop, and its memory.

The bare loop is the practical limit (the decoder must at least parse every line);
the goal is at least half its speed. Peak memory is measured in a fresh process for two
stream lengths: flat memory means the decoder never holds the stream.

    python benchmarks/bench_decoder.py [--lines N] [--memory-mib A,B]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time

from _harness import best_of, machine, table

from stella_conform.generators.export import draw_cases
from stella_conform.oracle.decoder import summarize


def sample_stream(lines: int) -> bytes:
    """Realistic lines: unmutated generated runs, repeated to the wanted length."""
    runs = [c.stream for c in draw_cases(40, seed=3, max_mutations=0)]
    block = b"".join(runs)
    per_block = block.count(b"\n")
    return block * (lines // per_block + 1)


def bare_loop(data: bytes) -> int:
    n = 0
    for line in io.BytesIO(data):
        if line.strip():
            json.loads(line)
        n += 1
    return n


MEMORY_PROBE = """
import sys
from stella_conform.oracle.decoder import decode
from stella_conform.generators.export import draw_cases
block = b"".join(c.stream for c in draw_cases(40, seed=3, max_mutations=0))
target = int(sys.argv[1]) * 1024 * 1024
def lines():
    produced = 0
    while produced < target:
        for line in block.splitlines(keepends=True):
            yield line
        produced += len(block)
n = sum(1 for _ in decode(lines()))
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(n, int(hwm) // 1024)
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument(
        "--memory-mib", default="64,1024", help="two stream sizes in MiB for the memory probe"
    )
    args = parser.parse_args()
    data = sample_stream(args.lines)
    n_lines = data.count(b"\n")

    def timed(fn: object) -> float:
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        return time.perf_counter() - start

    bare = best_of(3, lambda: timed(lambda: bare_loop(data)))
    decoder = best_of(3, lambda: timed(lambda: summarize(io.BytesIO(data))))
    rows = [
        ("bare json.loads per line (baseline)", f"{n_lines / bare:,.0f}", "1.00"),
        ("reference decoder (decode + fold)", f"{n_lines / decoder:,.0f}", f"{bare / decoder:.2f}"),
    ]
    print(f"machine: {machine()}")
    print(f"stream: {n_lines:,} lines, {len(data) / 1e6:.1f} MB of generated valid runs\n")
    print(table(rows, ("reader", "lines/s", "x baseline")))

    sizes = [int(x) for x in args.memory_mib.split(",")]
    mem_rows = []
    for size in sizes:
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, str(size)],
            capture_output=True,
            text=True,
            check=True,
        )
        events, peak = out.stdout.split()
        mem_rows.append(
            (
                f"{size} MiB",
                f"{int(events):,} lines",
                f"{peak} MiB",
                f"{time.perf_counter() - start:.1f} s",
            )
        )
    print()
    print(table(mem_rows, ("stream decoded line by line", "lines", "peak RSS", "time")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
