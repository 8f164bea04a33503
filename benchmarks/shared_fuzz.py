"""Workers sharing one database, and recordings as seeds: do they find the deep bugs sooner?

Three measurements on the clients of ``adapters/deep/`` (docs/fuzzing.md renders them):

* ``--part lockstep``: N workers (seeds S×100+i) run case by case in turn, each looking
  at the shared database every ``--sync-cases`` cases, either sharing one Redis database
  (a fresh database number per trial) or sharing nothing: N machines of one speed, on a
  machine however loaded.  The group's figure is the fewest cases any worker ran to find
  the bug itself.
* ``--part workers``: N ``fuzz`` processes started together on one deep client, each
  with its own seed and folder, either sharing one Redis database (``--database
  redis://...``, a fresh database number per trial) or sharing nothing
  (``--no-database``).  The time to the first failure is the earliest any worker found
  the bug itself (its own clock, from its start); the others are then stopped.  On one
  machine, N worker processes share its cores: they are not N machines.
* ``--part seeds``: one ``fuzz`` session per seed, bounded by cases (``--max-cases``),
  with and without ``--seed-corpus`` over the kit's fixtures and a recorded upstream
  stream (read where it lies, never copied): found or not.

Not a ``bench_*.py`` (it takes hours on a shared machine): run it on its own, niced::

    nice .venv/bin/python benchmarks/shared_fuzz.py --part lockstep --results shared.jsonl
    nice .venv/bin/python benchmarks/shared_fuzz.py --part workers --for 5m --results shared.jsonl
    nice .venv/bin/python benchmarks/shared_fuzz.py --part seeds --results shared.jsonl
    .venv/bin/python benchmarks/shared_fuzz.py --table-only --results shared.jsonl

It starts its own ``redis-server`` on a free loopback port and stops it at the end.
Each measurement is appended to the results file as it finishes (with the one-minute
load average); a second session skips what is already there.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from stella_conform import stopping

REPO = Path(__file__).resolve().parent.parent
KIT = [sys.executable, "-m", "stella_conform"]
DEEP = REPO / "adapters" / "deep"
CLIENTS: dict[str, tuple[list[str], str]] = {
    "retry_note_after_unknown.py": (
        [sys.executable, str(DEEP / "retry_note_after_unknown.py")],
        "R3.*",
    ),
    "extra_fields_on_failed_tool.py": (
        [sys.executable, str(DEEP / "extra_fields_on_failed_tool.py")],
        "R5.*",
    ),
    "legacy_text_after_failed_tool.js": (
        ["node", str(DEEP / "legacy_text_after_failed_tool.js")],
        "R4.*",
    ),
}
#: Workers, and whether they share a database.
CONFIGS = ((1, False), (2, True), (2, False), (4, True), (4, False))
UPSTREAM = REPO.parent / "shared" / "upstream" / "from_a_newer_stella.older.jsonl"


class Redis:
    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed")
        self.dir = stopping.temp_dir("stella-shared-fuzz-redis-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--databases",
                "1000",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        stopping.track_group(self.proc.pid)
        time.sleep(0.5)

    def url(self, number: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{number}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        stopping.untrack_group(self.proc.pid)
        stopping.remove_dir(self.dir)


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    split = args.index("--")
    proc = subprocess.Popen(
        [*KIT, *args[:split], "--json", "report.json", *args[split:]],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    stopping.track_group(proc.pid)  # killed with its clients if this benchmark is stopped
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    """Ctrl-C twice: the case in hand ends, its clients are stopped, no final report."""
    if proc.poll() is not None:
        return
    for _ in range(2):
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait()


def _first(cwd: Path) -> dict[str, Any] | None:
    report = cwd / "report.json"
    if not report.exists():
        return None
    doc = json.loads(report.read_text())
    # its own find: not another worker's failure it ran once the shared database had it
    failures = [f for f in doc["fuzz"]["failures"] if not f.get("from_shared_failure")]
    if not failures:
        return None
    return {**failures[0], "shared": doc["fuzz"].get("shared")}


def measure_workers(
    name: str, seed: int, workers: int, share: bool, cap: str, redis: Redis, number: int
) -> dict[str, Any]:
    client, only = CLIENTS[name]
    base = ["fuzz", "--for", cap, "--only", only, "--max-failures", "1", "--max-shrinks", "0"]
    base += ["--database", redis.url(number)] if share else ["--no-database"]
    with stopping.private_dir("stella-shared-fuzz-") as tmp:
        folders = [Path(tmp) / f"w{i}" for i in range(workers)]
        procs = [
            _start([*base, "--seed", str(seed * 100 + i), "--", *client], folder)
            for i, folder in enumerate(folders)
        ]

        # until a worker saves a failure (fuzz saves each the moment it finds it); the
        # ones that have one finish their report, the others are stopped (and report)
        def saved(folder: Path) -> bool:
            failures = folder / ".stella-conform" / "failures"
            return failures.is_dir() and any(failures.iterdir())

        while not any(saved(f) for f in folders) and any(p.poll() is None for p in procs):
            time.sleep(0.05)
        for folder, p in zip(folders, procs, strict=True):
            if not saved(folder):
                _stop(p)
        for p in procs:
            p.wait()
            stopping.untrack_group(p.pid)
        # the group's time: the first worker's own find, each on its own clock
        finds = [f for f in (_first(folder) for folder in folders) if f is not None]
        found = min(finds, key=lambda f: f["seconds"]) if finds else None
    return {
        "found": found is not None,
        "seconds": found["seconds"] if found else None,
        "cases": found["cases_before"] if found else None,
        "from_shared_input": found["from_shared_input"] if found else None,
        "received": (found.get("shared") or {}).get("received") if found else None,
    }


def measure_seeds(name: str, seed: int, seeded: bool, max_cases: int) -> dict[str, Any]:
    client, only = CLIENTS[name]
    args = ["fuzz", "--for", "20m", "--max-cases", str(max_cases), "--seed", str(seed)]
    args += ["--only", only, "--max-failures", "1", "--max-shrinks", "0", "--no-database"]
    if seeded:
        args += ["--seed-corpus", str(REPO / "fixtures"), "--seed-corpus", str(UPSTREAM)]
    with stopping.private_dir("stella-shared-fuzz-") as tmp:
        proc = _start([*args, "--", *client], Path(tmp))
        code = proc.wait()
        stopping.untrack_group(proc.pid)
        if code not in (0, 1):
            raise SystemExit(f"fuzz {' '.join(args)} exited {proc.returncode}")
        found = _first(Path(tmp))
    return {
        "found": found is not None,
        "cases": found["cases_before"] if found else None,
        "recording": found["recording"] if found else None,
    }


# ---------------------------------------------------------------------- lockstep

#: Cases between two looks at the shared database in a lockstep trial (the fuzzer looks
#: every 2 s: 50 cases at 25 cases a second).
SYNC_CASES = 50


#: A lockstep worker: ``fuzz`` itself (``python -c LOCKSTEP SYNC_CASES fuzz ARGS -- CLIENT``)
#: with its loop driven from stdin: each line read is a case count to reach (or the bug to
#: find), each line written what it has run and when it found the bug; its clock counts
#: cases, so it looks at the shared database every SYNC_CASES cases.  It is code given to
#: ``-c``, not a module, and imports what ``python -m stella_conform`` imports: Hypothesis
#: draws constants from every local module imported (this file's 3,000 and 100 changed the
#: cases drawn from a seed), so the worker's draws are those of ``fuzz`` on that seed.
LOCKSTEP = """
import json, sys
import stella_conform.__main__
from stella_conform.cli import main
from stella_conform.conformance import fuzz

every = int(sys.argv.pop(1))

def lockstep(self):
    tick = self.config.sync_seconds / every
    self.clock = lambda: self.cases * tick
    self.started = 0.0
    never = float("inf")
    def say():
        # its own find: not another worker's failure it ran once the database had it
        mine = [f.cases for f in self.found if not getattr(f, "replayed", False)]
        found = min(mine, default=None)
        shared = self.sharing.to_json() if self.sharing is not None else None
        print(json.dumps({"cases": self.cases, "found": found, "shared": shared}), flush=True)
    with fuzz.shared_sessions():
        self.begin(never)
        say()
        for line in sys.stdin:
            while self.cases < int(line) and not self.found and self.arms:
                self.step(never)
            say()
        for arm in self.arms:
            arm.runner.close()
    self.team.close(self.started)
    raise SystemExit(0)

fuzz.Fuzzer.run = lockstep
main()
"""


def measure_lockstep(
    name: str,
    seed: int,
    workers: int,
    share: bool,
    cap: int,
    redis: Redis,
    number: int,
    sync_cases: int = SYNC_CASES,
) -> dict[str, Any]:
    """N workers (seeds S×100+i) run case by case in turn: worker 0 runs its case k, then
    worker 1 its case k, and so on, until one of them has found the bug (or ``cap`` cases
    each).  Every worker has run as many cases as the others whenever one looks at the
    shared database, as on N machines of one speed, on a machine however loaded.  (Not
    the same cases each time: a Python client's coverage of the lines it runs after its
    answer lands in one case or the next as the processes are scheduled, and a seed's
    session drifts from there: 1,176 and 1,335 cases to the rule-3 bug on one seed.)  The
    group's cases: the fewest any worker had run when it found the bug (the cases it ran
    of others' included)."""
    client, only = CLIENTS[name]
    with stopping.private_dir("stella-shared-fuzz-") as tmp:
        procs = []
        for i in range(workers):
            args = ["fuzz", "--for", "24h", "--only", only, "--max-shrinks", "0"]
            args += ["--seed", str(seed * 100 + i)]
            args += ["--database", redis.url(number)] if share else ["--no-database"]
            cwd = Path(tmp) / f"w{i}"
            cwd.mkdir()
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", LOCKSTEP, str(sync_cases), *args, "--", *client],
                    cwd=cwd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    start_new_session=True,
                )
            )
            stopping.track_group(procs[-1].pid)
        try:
            for proc in procs:
                assert proc.stdout is not None
                json.loads(proc.stdout.readline())
            found: list[int] = []
            replies: list[dict[str, Any]] = []
            target = 0
            while not found and target < cap:
                target += 1
                replies = []
                for proc in procs:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{target}\n")
                    proc.stdin.flush()
                    line = proc.stdout.readline()
                    if not line:
                        raise SystemExit(f"a lockstep worker ended early (exit {proc.wait()})")
                    replies.append(json.loads(line))
                found = [r["found"] for r in replies if r["found"] is not None]
        finally:
            for proc in procs:
                if proc.stdin is not None:
                    proc.stdin.close()
            for proc in procs:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                stopping.untrack_group(proc.pid)
    shared = [r["shared"] for r in replies if r.get("shared")]
    return {
        "found": bool(found),
        "cases": min(found) if found else None,
        "received": sum(s["received"] for s in shared) if shared else None,
        "adopted": sum(s["adopted"] for s in shared) if shared else None,
    }


def _config_name(workers: int, share: bool) -> str:
    return str(workers) if workers == 1 else f"{workers}{'s' if share else 'a'}"


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _median(values: list[float | None], places: int = 1) -> str:
    """The median over every seed, one that found nothing counting as never."""
    if not values:
        return "–"
    middle = statistics.median([float("inf") if v is None else v for v in values])
    return "never" if middle == float("inf") else f"{middle:,.{places}f}"


def _cell(mine: list[dict[str, Any]], part: str) -> str:
    hit = sum(r["found"] for r in mine)
    cases = _median([r["cases"] for r in mine], 0)
    if part == "lockstep":
        return f"{cases} cases, {hit}/{len(mine)}"
    return f"{_median([r['seconds'] for r in mine])} s ({cases} cases), {hit}/{len(mine)}"


def _ratio(shared: list[dict[str, Any]], alone: list[dict[str, Any]], value: str) -> str:
    """The median with a shared database over the median without (below 1: sooner)."""
    if not shared or not alone:
        return "–"
    inf = float("inf")
    a = statistics.median([inf if r[value] is None else r[value] for r in shared])
    b = statistics.median([inf if r[value] is None else r[value] for r in alone])
    return "–" if inf in (a, b) or not b else f"{a / b:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    """Per part: the medians of each configuration, the ratios sharing/alone, and each
    seed's figure (seconds for real workers, cases in lockstep)."""
    out: list[str] = []
    for part in ("lockstep", "workers"):
        work = [r for r in rows if r["part"] == part]
        if not work:
            continue
        value = "cases" if part == "lockstep" else "seconds"
        loads = [r["load"] for r in work if "load" in r]
        out += [
            f"{part}: {len(work)} trials, one-minute load {min(loads):.1f} to {max(loads):.1f}",
            "",
            "| client | 1 worker | 2 sharing | 2 alone | 4 sharing | 4 alone |"
            " 2 sharing / 2 alone | 4 sharing / 4 alone |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        per_seed = []
        for name in CLIENTS:
            mine = {
                config: [
                    r for r in work if r["client"] == name and (r["workers"], r["share"]) == config
                ]
                for config in CONFIGS
            }
            if not any(mine.values()):
                continue
            cells = [_cell(m, part) if m else "–" for m in mine.values()]
            ratios = [_ratio(mine[(n, True)], mine[(n, False)], value) for n in (2, 4)]
            out.append(f"| `{name}` | " + " | ".join([*cells, *ratios]) + " |")
            places = 0 if part == "lockstep" else 1
            seeds = [
                ", ".join(
                    "never" if r[value] is None else f"{r[value]:,.{places}f}"
                    for r in sorted(mine[config], key=lambda r: r["seed"])
                )
                or "–"
                for config in CONFIGS[1:]
            ]
            per_seed.append(f"| `{name}` | " + " | ".join(seeds) + " |")
        out += [
            "",
            f"{value} per seed (0–{max(r['seed'] for r in work)}):",
            "",
            "| client | 2 sharing | 2 alone | 4 sharing | 4 alone |",
            "| --- | --- | --- | --- | --- |",
            *per_seed,
            "",
        ]
    seeds = [r for r in rows if r["part"] == "seeds"]
    if seeds:
        out += [
            "",
            "| client | without `--seed-corpus`: found; median cases | with: found; median cases |",
            "| --- | --- | --- |",
        ]
        for name in CLIENTS:
            cells = [f"`{name}`"]
            for seeded in (False, True):
                mine = [r for r in seeds if r["client"] == name and r["seeded"] == seeded]
                hit = sum(r["found"] for r in mine)
                cells.append(f"{hit} of {len(mine)}; {_median([r['cases'] for r in mine], 0)}")
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    """The benchmark as a kit command (:mod:`stella_conform.stopping`): stopped by Ctrl-C,
    SIGTERM or SIGHUP, it kills its workers and its redis-server and removes their
    folders (the workers' w0, w1, ... were left in the temporary folder)."""
    with stopping.command():
        stopping.install()
        _main()


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("workers", "lockstep", "seeds"))
    parser.add_argument(
        "--cap-cases", type=int, default=12_000, help="lockstep: the most cases per worker"
    )
    parser.add_argument(
        "--sync-cases", type=int, default=SYNC_CASES, help="lockstep: cases between two looks"
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--for", dest="cap", default="2m", help="workers: the time cap")
    parser.add_argument("--max-cases", type=int, default=3000, help="seeds: the case cap")
    parser.add_argument("--client", action="append", help="only these clients (file names)")
    parser.add_argument(
        "--workers",
        default="1,2s,2a,4s,4a",
        help="workers: which configurations (N workers, s: sharing, a: alone)",
    )
    parser.add_argument("--results", type=Path, default=Path("shared_fuzz.jsonl"))
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument(
        "--table-seeds", type=int, default=1_000, help="the table: only seeds below this"
    )
    args = parser.parse_args()
    done = _load(args.results)
    names = args.client or list(CLIENTS)

    def record(row: dict[str, Any]) -> None:
        row["load"] = os.getloadavg()[0]
        with args.results.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        done.append(row)
        print(json.dumps(row), flush=True)

    if args.part in ("workers", "lockstep") and not args.table_only:
        sync = args.sync_cases if args.part == "lockstep" else None
        redis = Redis()
        try:
            number = 0
            for seed, name, (workers, share) in itertools.product(
                range(args.seeds), names, CONFIGS
            ):
                if _config_name(workers, share) not in args.workers.split(","):
                    continue
                number += 1
                trial = dict(part=args.part, client=name, seed=seed, workers=workers, share=share)
                if sync is not None:
                    trial["sync_cases"] = sync
                if any(all(r.get(k) == v for k, v in trial.items()) for r in done):
                    continue
                if sync is None:
                    row = measure_workers(name, seed, workers, share, args.cap, redis, number)
                else:
                    row = measure_lockstep(
                        name, seed, workers, share, args.cap_cases, redis, number, sync
                    )
                record({**row, **trial})
        finally:
            redis.stop()
    if args.part == "seeds" and not args.table_only:
        for seed in range(args.seeds):
            for name in names:
                for seeded in (False, True):
                    key = ("seeds", name, seed, seeded)
                    if any(
                        (r["part"], r["client"], r["seed"], r.get("seeded")) == key for r in done
                    ):
                        continue
                    row = measure_seeds(name, seed, seeded, args.max_cases)
                    row.update(part="seeds", client=name, seed=seed, seeded=seeded)
                    record(row)
    print(table([r for r in done if r.get("seed", 0) < args.table_seeds]))


if __name__ == "__main__":
    main()
