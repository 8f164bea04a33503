"""Deep bugs: does a default ``run`` miss them, and how soon does ``fuzz`` find them?

For each client in ``adapters/deep/`` (a bug that needs several conditions at once):

* ``run --mode persistent --seed S`` (the default 25 examples per check) for each
  seed: did any check fail?
* ``fuzz --for 5m --seed S --max-failures 1``, with coverage feedback and without
  (``--no-feedback``): seconds and cases until the first failure, or none.

Not a ``bench_*.py`` (``benchmarks/run`` would take an hour): run it on its own,
niced, and render the table in docs/fuzzing.md::

    nice .venv/bin/python benchmarks/deep_bugs.py --seeds 5 --for 5m --results deep_bugs.jsonl
    .venv/bin/python benchmarks/deep_bugs.py --table-only --results deep_bugs.jsonl

Each measurement is appended to the results file as it finishes, so an interrupted
session keeps what it measured, and a second session skips what is already there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: The kit of this checkout (``python -m``), so a copy of the tree can be measured as it is.
KIT = [sys.executable, "-m", "stella_conform"]
DEEP = REPO / "adapters" / "deep"
CLIENTS: dict[str, list[str]] = {
    "retry_note_after_unknown.py": [sys.executable, str(DEEP / "retry_note_after_unknown.py")],
    "extra_fields_on_failed_tool.py": [
        sys.executable,
        str(DEEP / "extra_fields_on_failed_tool.py"),
    ],
    "legacy_text_after_failed_tool.js": ["node", str(DEEP / "legacy_text_after_failed_tool.js")],
}


def _kit(args: list[str], cwd: str) -> dict[str, Any]:
    report = Path(cwd) / "report.json"
    started = time.monotonic()
    split = args.index("--")
    done = subprocess.run(
        [*KIT, *args[:split], "--json", str(report), *args[split:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"stella-conform {' '.join(args)} failed: {done.stderr[-2000:]}")
    doc: dict[str, Any] = json.loads(report.read_text())
    doc["wall_seconds"] = time.monotonic() - started
    return doc


def measure_run(client: list[str], seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cwd:
        doc = _kit(
            ["run", "--mode", "persistent", "--seed", str(seed), "--no-database", "--", *client],
            cwd,
        )
    failed = [c["id"] for c in doc["checks"] if c["outcome"] in ("fail", "error")]
    return {"found": bool(failed), "checks": failed, "seconds": round(doc["wall_seconds"], 1)}


#: The checks of the rule each deep bug breaks (``--scope rule``): what a nightly job
#: fuzzing one rule family runs; ``--scope profile`` fuzzes the whole reader profile.
RULE: dict[str, str] = {
    "retry_note_after_unknown.py": "R3.*",
    "extra_fields_on_failed_tool.py": "R5.*",
    "legacy_text_after_failed_tool.js": "R4.*",
}


def measure_fuzz(
    client: list[str], seed: int, duration: str, feedback: bool, only: str | None
) -> dict[str, Any]:
    args = ["fuzz", "--for", duration, "--seed", str(seed), "--max-failures", "1", "--no-database"]
    if only is not None:
        args += ["--only", only]
    args += ["--max-shrinks", "0"]  # the report's shrinking is not what is measured
    if not feedback:
        args.append("--no-feedback")
    with tempfile.TemporaryDirectory() as cwd:
        doc = _kit([*args, "--", *client], cwd)
    fuzz = doc["fuzz"]
    first = fuzz["failures"][0] if fuzz["failures"] else None
    return {
        "found": first is not None,
        "seconds": first["seconds"] if first else None,
        "cases": first["cases_before"] if first else None,
        "check": first["check"] if first else None,
        "total_cases": fuzz["cases"],
        "cases_per_second": fuzz["cases_per_second"],
        "feedback": fuzz["feedback"],
    }


def _key(row: dict[str, Any]) -> tuple[str, str, int, str | None]:
    scope = None if row["kind"] == "run" else row.get("scope", "profile")
    return row["client"], row["kind"], row["seed"], scope


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _median(values: list[float | None], cap: str) -> str:
    """The median over every seed, a seed that found nothing counting as never."""
    if not values:
        return "–"
    middle = statistics.median_high([float("inf") if v is None else v for v in values])
    return f"> {cap}" if middle == float("inf") else f"{middle:.0f}"


def table(rows: list[dict[str, Any]], duration: str) -> str:
    out = [
        "| client | default `run` found it | `fuzz` with feedback: found; median s (cases) "
        "| `fuzz` blind: found; median s (cases) |",
        "| --- | --- | --- | --- |",
    ]
    for name in CLIENTS:
        mine = [r for r in rows if r["client"] == name]
        runs = [r for r in mine if r["kind"] == "run"]
        cells = [f"`{name}`", f"{sum(r['found'] for r in runs)} of {len(runs)} seeds"]
        for kind in ("fuzz-feedback", "fuzz-blind"):
            fz = [r for r in mine if r["kind"] == kind]
            if not fz:
                cells.append("not measured")
                continue
            hit = sum(r["found"] for r in fz)
            seconds = _median([r["seconds"] for r in fz], duration)
            if seconds.startswith(">"):
                cells.append(f"{hit} of {len(fz)} seeds; {seconds}")
            else:
                cases = _median([r["cases"] for r in fz], "")
                cells.append(f"{hit} of {len(fz)} seeds; {seconds} s ({cases} cases)")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--for", dest="duration", default="5m")
    parser.add_argument("--results", type=Path, default=Path("deep_bugs.jsonl"))
    parser.add_argument("--client", action="append", help="only these clients (file names)")
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument(
        "--scope",
        choices=("rule", "profile"),
        default="rule",
        help="fuzz the checks of the broken rule (default) or the whole reader profile",
    )
    parser.add_argument(
        "--kinds",
        default="run,fuzz-feedback,fuzz-blind",
        help="which measurements (comma separated; run two sessions side by side to share cores)",
    )
    args = parser.parse_args()
    done = _load(args.results)
    if not args.table_only:
        names = args.client or list(CLIENTS)
        plan = [(n, "run", s) for n in names for s in range(args.seeds)]
        plan += [
            (n, k, s)
            for s in range(args.seeds)
            for n in names
            for k in ("fuzz-feedback", "fuzz-blind")
        ]
        kinds = set(args.kinds.split(","))
        for name, kind, seed in plan:
            if kind not in kinds:
                continue
            scope = None if kind == "run" else args.scope
            if any(_key(r) == (name, kind, seed, scope) for r in done):
                continue
            client = CLIENTS[name]
            if kind == "run":
                row = measure_run(client, seed)
            else:
                only = RULE[name] if args.scope == "rule" else None
                row = measure_fuzz(
                    client, seed, args.duration, feedback=kind == "fuzz-feedback", only=only
                )
                row["scope"] = args.scope
            row.update(client=name, kind=kind, seed=seed, load=os.getloadavg()[0])
            with args.results.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            done.append(row)
            print(json.dumps(row), flush=True)
    print(table([r for r in done if _key(r)[3] in (None, args.scope)], args.duration))


if __name__ == "__main__":
    main()
