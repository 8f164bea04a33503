"""What persistent mode saves on each template `stella-conform init` writes: CPU side by side.

Each template is written and built into a scratch folder (the TypeScript one with the
toolchain ``.ci/run`` installs, Go with ``go build``, Rust with Debian's serde crates
offline; a language whose toolchain is missing is left out), then graded on the reader
profile in report mode (a process per case) and in persistent mode (one process for every
case), the same cases from one warm case cache, so the figures are the client's and the
pipes' cost, not generation.  CPU is the kit's and every client's (the children reaped),
each mode's best of ``--repeats``; the ratio is taken in the same run.  One more
persistent run, its client started through a small wrapper that records the client's own
CPU, says how much of the persistent figure is the client's: the rest is the kit's own
work (its start, the expected readings, the judging), the same in both modes, and the
last column compares the client's side alone.  Then the TypeScript
template is fuzzed for ``--fuzz-for`` in each mode, and the cases per second compared.

    python benchmarks/bench_templates.py [--examples 25] [--repeats 2] [--fuzz-for 30s]
                                         [--languages python,typescript,go,rust]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import machine, table

REPO = Path(__file__).resolve().parents[1]
KIT = [sys.executable, "-m", "stella_conform"]
TS_TOOLCHAIN = REPO / ".ci" / ".toolchains" / "ts" / "node_modules"
LANGUAGES = ("python", "typescript", "go", "rust")
#: Runs a client and appends the CPU it used (its own and its children's) to a file.
WRAPPER = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[2:])
used = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "a") as out:
    out.write(f"{used.ru_utime + used.ru_stime}\\n")
sys.exit(done.returncode)
"""


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def build(language: str, folder: Path) -> list[str] | None:
    """The template's command, written and built in ``folder``; None without a toolchain."""
    done = subprocess.run([*KIT, "init", language, str(folder)], capture_output=True, timeout=60)
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode())
    if language == "python":
        return [sys.executable, str(folder / "stella_adapter.py")]
    if language == "typescript":
        if shutil.which("node") is None or not (TS_TOOLCHAIN / "typescript").is_dir():
            return None
        (folder / "node_modules").symlink_to(TS_TOOLCHAIN)
        tsc = ["node", str(TS_TOOLCHAIN / "typescript/bin/tsc"), "-p", "."]
        subprocess.run(tsc, cwd=folder, check=True, capture_output=True, timeout=300)
        return ["node", str(folder / "dist/stella_adapter.js")]
    sys.path.insert(0, str(REPO / "adapters" / "broken"))
    from builds import Unavailable, cargo_build, go_build

    try:
        if language == "go":
            go_build(folder, "stella-adapter")
            return [str(folder / "stella-adapter")]
        cargo_build(folder, ["stella-adapter"], folder / "target" / "release")
        return [str(folder / "target" / "release" / "stella-adapter")]
    except Unavailable:
        return None


def graded(command: list[str], mode: str, examples: int, cache: Path, cwd: Path) -> float:
    """CPU-seconds of one `run` of the reader profile in ``mode`` (the kit and its clients)."""
    before = _children_cpu()
    done = subprocess.run(
        [*KIT, "run", "--mode", mode, "--profile", "reader", "--examples", str(examples),
         "--no-database", "--case-cache", str(cache), "-j", "1", "--", *command],
        cwd=cwd, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{command} in {mode} mode: exit {done.returncode}\n{done.stdout}")
    return _children_cpu() - before


def client_cpu(command: list[str], examples: int, cache: Path, cwd: Path) -> float:
    """CPU-seconds the client's own processes used in a persistent-mode run."""
    wrapper, record = cwd / "wrapper.py", cwd / "client-cpu.txt"
    wrapper.write_text(WRAPPER)
    record.unlink(missing_ok=True)
    graded(
        [sys.executable, str(wrapper), str(record), *command], "persistent", examples, cache, cwd
    )
    return sum(float(line) for line in record.read_text().split())


def fuzz_rate(command: list[str], mode: str, duration: str, cwd: Path) -> tuple[int, float]:
    """Cases fuzzed and cases per second, as `fuzz` reports them."""
    done = subprocess.run(
        [*KIT, "fuzz", "--for", duration, "--mode", mode, "--no-database", "--", *command],
        cwd=cwd, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    found = re.search(r"fuzzed ([\d,]+) case\(s\) in (\d+) s", done.stdout)
    if found is None:
        raise SystemExit(f"fuzz in {mode} mode printed no rate:\n{done.stdout}{done.stderr}")
    cases, seconds = int(found[1].replace(",", "")), max(int(found[2]), 1)
    return cases, cases / seconds


def clients_share(report: float, persistent: float, own: float) -> float:
    """The client's side of a persistent run against its side of a report run: the kit's
    own work (``persistent - own``) is the same in both modes, so what is left of the
    report figure is the clients' processes and their pipes.  For a template whose process
    starts in a millisecond (Go, Rust) the whole-run ratio is held up by that shared floor;
    this one is what choosing the mode changes."""
    kit = max(persistent - own, 0.0)
    return own / max(report - kit, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--fuzz-for", default="30s")
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--fuzz-only", action="store_true", help="build, fuzz, grade nothing")
    args = parser.parse_args()
    print(machine(), f"load average {os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-templates-") as tmp:
        scratch = Path(tmp)
        commands = {}
        for language in args.languages.split(","):
            command = build(language, scratch / language)
            if command is None:
                print(f"{language}: no toolchain, left out")
                continue
            commands[language] = command
            if args.fuzz_only:
                continue
            cache = scratch / "cases"
            graded(command, "persistent", args.examples, cache, scratch)  # fills the cache
            cpu = {
                mode: min(
                    graded(command, mode, args.examples, cache, scratch)
                    for _ in range(args.repeats)
                )
                for mode in ("report", "persistent")
            }
            ratio = cpu["persistent"] / cpu["report"]
            own = client_cpu(command, args.examples, cache, scratch)
            side = clients_share(cpu["report"], cpu["persistent"], own)
            rows.append(
                (language, f"{cpu['report']:.1f}", f"{cpu['persistent']:.1f}", f"{own:.2f}",
                 f"{ratio:.2f}", f"{side:.2f}")
            )  # fmt: skip
            print(f"{language}: report {cpu['report']:.1f} CPU-s, persistent "
                  f"{cpu['persistent']:.1f} CPU-s ({ratio:.2f} of report; the client's own "
                  f"{own:.2f}, {side:.2f} of its side in report mode)", flush=True)  # fmt: skip
        if rows:
            print()
            print(f"reader profile, --examples {args.examples}, warm case cache, best of "
                  f"{args.repeats}:")  # fmt: skip
            header = (
                "template", "report CPU-s", "persistent CPU-s", "of which the client",
                "persistent / report", "client side, persistent / report",
            )  # fmt: skip
            print(table(rows, header))
        if "typescript" in commands and args.fuzz_for != "0":
            started = time.perf_counter()
            rates = {
                mode: fuzz_rate(commands["typescript"], mode, args.fuzz_for, scratch)
                for mode in ("report", "persistent")
            }
            (rc, rr), (pc, pr) = rates["report"], rates["persistent"]
            print(f"\nfuzz on the TypeScript template, --for {args.fuzz_for} each "
                  f"({time.perf_counter() - started:.0f} s wall in all):")  # fmt: skip
            print(f"  report mode:     {rc} cases, {rr:.1f}/s")
            print(f"  persistent mode: {pc} cases, {pr:.1f}/s ({pr / rr:.1f}x)")


if __name__ == "__main__":
    main()
