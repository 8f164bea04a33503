"""Power: on how many seeds does a default ``stella-conform run`` catch each broken client?

For every client in ``adapters/broken/targets.json`` (or those matching ``--clients``) and
seeds 0..N-1, runs the kit the way a user would — default example count, the client's
profiles and mode as the client-matrix test picks them — and records whether its target
checks failed, and whether a *generated* case (not only a curated fixture) caught it.

Two shortcuts that cannot change the answer, and say so in the table's notes: only the
target checks are graded (``--only``; each check draws from its own per-check seed, so the
other checks do not influence them), and failures are not shrunk (``--max-shrinks 0``;
shrinking starts after a check has already failed).

    python benchmarks/power.py --seeds 20 -j 2 [--clients 'dashboard_*'] [--write]

Results accumulate in ``benchmarks/power-results.json`` (one entry per client, replaced
when re-measured); ``--write`` regenerates the table in ``docs/generators.md`` from it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BROKEN = REPO / "adapters" / "broken"
RESULTS = Path(__file__).resolve().parent / "power-results.json"
DOC = REPO / "docs" / "generators.md"
KIT = str(Path(sys.executable).parent / "stella-conform")
START, END = "<!-- power-table:start -->", "<!-- power-table:end -->"

sys.path.insert(0, str(REPO / "src"))
from stella_conform.conformance.checks import BY_ID  # noqa: E402


def mode_for(targets: list[str]) -> str:
    """The mode the client-matrix test grades a broken client in."""
    profiles = {BY_ID[t].profile for t in targets}
    if "recorder" in profiles:
        return "exit"
    if "wrapper" in profiles or "R1.line-by-line" in targets:
        return "report"
    return "persistent"


def command_for(client: str) -> list[str]:
    path = str(BROKEN / client)
    return ["node", path] if client.endswith(".js") else [sys.executable, path]


def one_run(client: str, targets: list[str], seed: int) -> dict[str, Any]:
    """One default run of one client on one seed: caught, and caught by a generated case."""
    profiles = sorted({BY_ID[t].profile for t in targets})
    with tempfile.TemporaryDirectory(prefix="power-") as tmp:
        report = Path(tmp) / "report.json"
        argv = [KIT, "run", "--mode", mode_for(targets), "--seed", str(seed), "--no-database"]
        argv += [a for p in profiles for a in ("--profile", p)]
        argv += [a for t in targets for a in ("--only", t)]
        argv += ["--max-shrinks", "0", "-j", "1", "--json", str(report), "--", *command_for(client)]
        if "R1.line-by-line" in targets:
            argv[2:2] = ["--line-timeout", "0.5"]
        subprocess.run(argv, cwd=tmp, capture_output=True, check=False, timeout=1800)
        if not report.exists():
            return {"seed": seed, "caught": False, "generated": False, "error": True}
        doc = json.loads(report.read_text())
    failed = [c for c in doc["checks"] if c["id"] in targets and c["outcome"] in ("fail", "warn")]
    generated = any(f.get("source") == "generated" for c in failed for f in c["failures"])
    return {"seed": seed, "caught": bool(failed), "generated": generated, "error": False}


def measure(clients: list[str], targets: dict[str, list[str]], seeds: int, jobs: int) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    work = [(c, s) for c in clients for s in range(seeds)]
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one_run, c, targets[c], s): c for c, s in work}
        for done, future in enumerate(futures, 1):
            client = futures[future]
            runs[client].append(future.result())
            print(f"[{done}/{len(work)}] {client}", file=sys.stderr)
    for client, got in runs.items():
        results[client] = {
            "seeds": seeds,
            "caught": sum(r["caught"] for r in got),
            "generated": sum(r["generated"] for r in got),
            "errors": sum(r["error"] for r in got),
            "missed_seeds": sorted(r["seed"] for r in got if not r["caught"]),
            "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        }
    RESULTS.write_text(json.dumps(dict(sorted(results.items())), indent=2) + "\n")
    print(f"{len(work)} run(s) in {time.monotonic() - started:.0f} s", file=sys.stderr)


def render(targets: dict[str, list[str]]) -> str:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    rows = [
        "| broken client | targets | caught | by a generated case |",
        "| --- | --- | --- | --- |",
    ]
    for client in targets:
        r = results.get(client)
        if r is None:
            cells = ["not measured", "not measured"]
        else:
            n = r["seeds"]
            cells = [f"{r['caught']}/{n}", f"{r['generated']}/{n}"]
        rows.append(f"| `{client}` | {', '.join(targets[client])} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def write_doc(table: str) -> None:
    text = DOC.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n{table}\n{END}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per client")
    parser.add_argument("--clients", action="append", default=[], metavar="GLOB")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="kit runs at the same time")
    parser.add_argument("--write", action="store_true", help="regenerate the docs table only")
    args = parser.parse_args()
    targets: dict[str, list[str]] = json.loads((BROKEN / "targets.json").read_text())["clients"]
    if not args.write:
        chosen = [
            c
            for c in targets
            if not args.clients or any(fnmatch.fnmatchcase(c, g) for g in args.clients)
        ]
        if any(c.endswith(".js") for c in chosen) and not shutil.which("node"):
            chosen = [c for c in chosen if not c.endswith(".js")]
        measure(chosen, targets, args.seeds, args.jobs)
    table = render(targets)
    if args.write:
        write_doc(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
