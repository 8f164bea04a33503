"""How long adapters take to say hello: the figures behind ``--mode auto``'s wait.

Each adapter is started as auto mode starts it (``STELLA_CONFORM_MODE=report``) and timed
from the start to its first line, a few times, on an idle machine and with ``--busy N``
busy loops beside it (started and stopped here).  The Python clients are also started
through ``python3`` as found on ``PATH`` (a pyenv shim costs a second process and more).
The TypeScript and Go templates are built into a scratch folder when their toolchains
are there (``.ci/run`` installs them), and left out otherwise.

    python benchmarks/hello_wait.py [--runs N] [--busy N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import machine, table

REPO = Path(__file__).resolve().parents[1]
TS_TOOLCHAIN = REPO / ".ci" / ".toolchains" / "ts" / "node_modules"


def clients(scratch: Path) -> dict[str, list[str]]:
    reference = str(REPO / "adapters/python/reference_client.py")
    template = str(REPO / "adapters/templates/python/stella_adapter.py")
    found = {
        "Python reference client": [sys.executable, reference],
        "Python template": [sys.executable, template],
    }
    shim = shutil.which("python3")
    if shim and Path(shim).resolve() != Path(sys.executable).resolve():
        found["Python reference client, python3 on PATH"] = [
            shim, str(REPO / "adapters/python/reference_client.py"),
        ]  # fmt: skip
    if shutil.which("node"):
        found["Node.js reference client"] = [
            "node",
            str(REPO / "adapters/node/reference_client.js"),
        ]
        if (TS_TOOLCHAIN / "typescript").is_dir():
            ts = scratch / "ts"
            shutil.copytree(REPO / "adapters/templates/typescript", ts)
            (ts / "node_modules").symlink_to(TS_TOOLCHAIN)
            tsc = ["node", str(TS_TOOLCHAIN / "typescript/bin/tsc"), "-p", "."]
            if subprocess.run(tsc, cwd=ts, capture_output=True, timeout=300).returncode == 0:
                found["TypeScript template"] = ["node", str(ts / "dist/stella_adapter.js")]
    if shutil.which("go"):
        go = scratch / "go"
        shutil.copytree(REPO / "adapters/templates/go", go)
        env = {**os.environ, "GOFLAGS": "-mod=mod"}
        build = ["go", "build", "-o", "adapter", "."]
        if subprocess.run(build, cwd=go, env=env, capture_output=True, timeout=600).returncode == 0:
            found["Go template"] = [str(go / "adapter")]
    return found


def hello_after(argv: list[str]) -> float:
    env = dict(os.environ, STELLA_CONFORM_MODE="report", STELLA_CONFORM_PROTOCOL="1")
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    took = time.perf_counter() - started
    proc.kill()
    proc.wait()
    if b"hello" not in line:
        raise SystemExit(f"{argv}: no hello ({line[:80]!r})")
    return took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", type=int, default=0, help="busy loops beside the adapters")
    args = parser.parse_args()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        with tempfile.TemporaryDirectory() as scratch:
            rows = []
            for name, argv in clients(Path(scratch)).items():
                times = [hello_after(argv) for _ in range(args.runs)]
                rows.append((name, f"{statistics.median(times) * 1000:.0f}",
                             f"{max(times) * 1000:.0f}"))  # fmt: skip
    finally:
        for loop in loops:  # each by its own process id
            loop.kill()
            loop.wait()
    print(f"machine: {machine()}; {args.busy} busy loop(s) beside; {args.runs} starts each\n")
    print(table(rows, ("adapter", "hello after, median ms", "slowest ms")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
