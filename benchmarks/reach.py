"""Reach: how many of a default run's cases hold each production of the JSON grammar and the
line framing, per profile, over seeds 0..N-1.

For every profile and seed, draws exactly the generated cases a default run grades (each
check's strategy, seed and 25 examples: ``conformance/reach.py``; every check of the
profile, as for a client graded in report mode) and scans their bytes for the productions
of ``generators/grammar.py``.  Results go to ``benchmarks/reach-results.json``;
``--write`` regenerates the audit table in ``docs/generators.md`` from them.

    python benchmarks/reach.py --seeds 20 [--write]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "reach-results.json"
START, END = "<!-- grammar-table:start -->", "<!-- grammar-table:end -->"

sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stella_conform.conformance.reach import measure  # noqa: E402
from stella_conform.generators.grammar import PRODUCTIONS  # noqa: E402

PROFILES = ("reader", "dashboard", "recorder", "envelope", "trace")


def run(seeds: int) -> dict[str, Any]:
    out: dict[str, Any] = {"seeds": seeds, "measured": time.strftime("%Y-%m-%d", time.gmtime())}
    per_seed = [measure(PROFILES, seeds=[s]) for s in range(seeds)]
    for profile in PROFILES:
        found: Counter[str] = Counter()
        reached: Counter[str] = Counter()
        checks: dict[str, Counter[str]] = {}
        mutations: dict[str, Counter[str]] = {}
        for reach in (r[profile] for r in per_seed):
            for production, n in reach.found.items():
                found[production] += n
                reached[production] += 1
                checks.setdefault(production, Counter()).update(reach.checks[production])
                mutations.setdefault(production, Counter()).update(reach.mutations[production])
        out[profile] = {
            "cases_per_run": per_seed[0][profile].cases,
            "found": dict(sorted(found.items())),
            "seeds_reached": dict(sorted(reached.items())),
            "checks": {p: dict(c.most_common(3)) for p, c in sorted(checks.items())},
            "mutations": {p: dict(c.most_common(3)) for p, c in sorted(mutations.items())},
        }
    return out


def _top(counts: dict[str, int], n: int = 2) -> str:
    names = [("valid runs" if k == "" else f"`{k}`") for k in list(counts)[:n]]
    return ", ".join(names)


def render(results: dict[str, Any]) -> str:
    seeds = results["seeds"]
    head = " | ".join(f"{p} ({results[p]['cases_per_run']})" for p in PROFILES)
    rows = [
        f"| production | reached by | graded by | {head} |",
        "| --- | --- | --- |" + " --- |" * len(PROFILES),
    ]
    for production in PRODUCTIONS:
        counts: Counter[str] = Counter()
        graded: Counter[str] = Counter()
        for profile in PROFILES:
            counts.update(results[profile]["mutations"].get(production.id, {}))
            graded.update(results[profile]["checks"].get(production.id, {}))
        cells = []
        for profile in PROFILES:
            total = results[profile]["found"].get(production.id, 0)
            runs = results[profile]["seeds_reached"].get(production.id, 0)
            mean = total / seeds
            if profile in production.profiles:
                cells.append(f"**{mean:.1f}** ({runs}/{seeds})")
            else:
                cells.append(f"({mean:.1f})" if total else "")
        what = production.what.replace("|", "\\|")
        rows.append(
            f"| `{production.id}`: {what} | {_top(dict(counts.most_common()))} | "
            f"{_top(dict(graded.most_common()))} | " + " | ".join(cells) + " |"
        )
    return "\n".join(rows) + "\n\n" + _summary(results)


def _summary(results: dict[str, Any]) -> str:
    """How many bold cells every measured run drew, and the others with their n/N."""
    seeds = results["seeds"]
    bold = [(p.id, profile) for p in PRODUCTIONS for profile in PROFILES if profile in p.profiles]
    fewer = sorted(
        (results[profile]["seeds_reached"].get(pid, 0), pid, profile) for pid, profile in bold
    )
    fewer = [f for f in fewer if f[0] < seeds]
    head = (
        f"{len(bold) - len(fewer)} of the {len(bold)} bold cells are drawn by every one of the "
        f"{seeds} runs"
    )
    if not fewer:
        return head + "."
    rest = ", ".join(f"`{pid}` {profile} {n}/{seeds}" for n, pid, profile in fewer)
    return f"{head}; the {len(fewer)} others by some of them: {rest}."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="default runs, seeds 0..N-1")
    parser.add_argument("--write", action="store_true", help="regenerate the docs table only")
    args = parser.parse_args()
    if not args.write:
        started = time.process_time()
        RESULTS.write_text(json.dumps(run(args.seeds), indent=1, sort_keys=True) + "\n")
        spent = time.process_time() - started
        print(f"{args.seeds} default run(s) per profile in {spent:.0f} CPU-s")
    table = render(json.loads(RESULTS.read_text()))
    if args.write:
        from power import write_doc

        write_doc(table, START, END)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
