"""Power: on how many seeds does a default ``stella-conform run`` catch each broken client?

For every client in ``adapters/broken/targets.json`` (or those matching ``--clients``) and
seeds 0..N-1, in every language (Python, Node.js, and the Go and Rust programs, built once
by ``adapters/broken/builds.py``), grades the client the way a user's run would — default
example count, the client's profiles and mode as the client-matrix test picks them — and
records whether its target checks failed, and whether a *generated* case (not only a
curated fixture) caught it.  Its *reach* is how many of its target checks' generated cases
hold what its pitfall needs (``targets.json``'s ``needs``: productions of the JSON grammar
and framing, ``generators/grammar.py``, or mutation ids), per default run.

Shortcuts that cannot change the answer (the table's notes say so):

* only the target checks are graded (``--only``): every check draws from its own
  per-check seed, so the other checks do not influence them;
* failures are not shrunk (``--max-shrinks 0``): shrinking starts after a check failed;
* the grading runs in worker processes that import the kit once (``run_check``, what
  ``stella-conform run`` calls per check) instead of one kit process per run, and cases
  are shared between clients graded on the same check and seed (``share_generation``,
  as ``stella-conform matrix`` does: without a database a check's cases depend on the
  seed alone).  ``--subprocess`` grades with real ``stella-conform run`` processes
  instead; ``--compare`` runs both on the chosen clients and seeds and prints any
  disagreement.

    python benchmarks/power.py --seeds 20 -j 2 [--clients 'dashboard_*'] [--write]

Results accumulate in ``benchmarks/power-results.json`` (one entry per client, replaced
when re-measured); ``--write`` regenerates the table in ``docs/generators.md`` from it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BROKEN = REPO / "adapters" / "broken"
RESULTS = Path(__file__).resolve().parent / "power-results.json"
DOC = REPO / "docs" / "generators.md"
KIT = str(Path(sys.executable).parent / "stella-conform")
#: What each broken client's pitfall needs to see (targets.json's "needs").
NEEDS: dict[str, list[str]] = json.loads((BROKEN / "targets.json").read_text()).get("needs", {})
START, END = "<!-- power-table:start -->", "<!-- power-table:end -->"

sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(BROKEN))
from builds import Unavailable, command  # noqa: E402

from stella_conform import stopping  # noqa: E402
from stella_conform.conformance.checks import BY_ID  # noqa: E402


def mode_for(targets: list[str], client: str = "") -> str:
    """The mode the client-matrix test grades a broken client in."""
    profiles = {BY_ID[t].profile for t in targets}
    if "recorder" in profiles or client.startswith("shell/"):  # sh + jq: exit codes only
        return "exit"
    if "wrapper" in profiles or "R1.line-by-line" in targets:
        return "report"
    return "persistent"


def command_for(client: str) -> list[str]:
    """The client's argv (a Go or Rust client is built once, then reused)."""
    return command(client)


#: Seconds to acknowledge a line in report mode: a buffering client never answers before
#: the stream ends, so any timeout catches it; a short one keeps its stalls cheap.
LINE_TIMEOUT = 0.5


def one_run(client: str, targets: list[str], seed: int) -> dict[str, Any]:
    """One default run of one client on one seed: caught, and caught by a generated case."""
    profiles = sorted({BY_ID[t].profile for t in targets})
    with stopping.private_dir("power-") as tmp:  # a killed worker's is removed too
        report = Path(tmp) / "report.json"
        argv = [
            KIT,
            "run",
            "--mode",
            mode_for(targets, client),
            "--seed",
            str(seed),
            "--no-database",
        ]
        argv += [a for p in profiles for a in ("--profile", p)]
        argv += [a for t in targets for a in ("--only", t)]
        argv += ["--max-shrinks", "0", "-j", "1", "--json", str(report), "--", *command_for(client)]
        if "R1.line-by-line" in targets:
            argv[2:2] = ["--line-timeout", str(LINE_TIMEOUT)]
        subprocess.run(argv, cwd=tmp, capture_output=True, check=False, timeout=1800)
        if not report.exists():
            return {"seed": seed, "caught": False, "generated": False, "error": "no report"}
        doc = json.loads(report.read_text())
    caught = ("fail", "warn", "crash")
    failed = [c for c in doc["checks"] if c["id"] in targets and c["outcome"] in caught]
    generated = any(f.get("source") == "generated" for c in failed for f in c["failures"])
    return {"seed": seed, "caught": bool(failed), "generated": generated, "error": None}


def as_a_run_process() -> None:
    """Give this worker the local modules of a ``stella-conform run`` process.

    Hypothesis mixes constants from *local* modules (outside site-packages) into a share
    of its draws.  The kit leaves its own modules out (``generators/engine/seeded.py``), so in a
    ``stella-conform run`` process the one local module is its console script; here it is
    this file.  Without this, one seed draws other cases in-process than in a kit run
    (``--compare`` found 3 of 48 pairs caught by a generated case one way only).
    """
    import importlib.util
    from importlib.machinery import SourceFileLoader

    from hypothesis.internal.conjecture import providers

    import stella_conform.generators  # noqa: F401 - installs the kit's own exclusion first

    here = str(Path(__file__).resolve())
    original = providers.is_local_module_file

    def is_local_module_file(path: str) -> bool:
        return str(Path(path).resolve()) != here and original(path)

    providers.is_local_module_file = is_local_module_file
    name = "stella_conform_console_script"
    loader = SourceFileLoader(name, KIT)
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = KIT
    sys.modules[name] = module
    loader.exec_module(module)  # its __main__ guard keeps it from running the kit


def graded(
    argv: list[str],
    mode: str,
    profiles: list[str],
    seed: int,
    only: list[str] | None = None,
    line_timeout: float = 5.0,
) -> list[Any]:
    """One default run of a client, in this process: the ``CheckResult`` of every check of
    ``profiles`` (of ``only``, when given), as ``stella-conform run`` grades them."""
    from stella_conform.conformance.checks import select
    from stella_conform.conformance.checks.claims import from_hello, resolve_profiles
    from stella_conform.conformance.clients.runner import (
        Client,
        ensure_mode_supported,
        resolve_client,
    )
    from stella_conform.conformance.suite import run_check
    from stella_conform.options.suite import suite_config
    from stella_conform.schemas.vocabulary import Vocabulary

    with stopping.private_dir("power-") as tmp:  # a killed worker's is removed too
        runner = Client(
            argv=resolve_client(tuple(argv)),
            mode=mode,  # type: ignore[arg-type]
            line_timeout=line_timeout,
        )
        hello = ensure_mode_supported(runner)
        config = suite_config(
            runner,
            {"seed": seed, "failures_dir": Path(tmp), "max_shrinks": 0},
            claims=from_hello(hello, Vocabulary.default()),
            database_dir=None,
            share_generation=True,
        )
        checks = select(resolve_profiles(profiles, hello), only or ())
        return [run_check(c, config) for c in checks if c.profile in profiles]


def in_process(client: str, targets: list[str], seed: int) -> dict[str, Any]:
    """``one_run`` without the kit's process: the same checks, cases and judgments."""
    profiles = sorted({BY_ID[t].profile for t in targets})
    line_timeout = LINE_TIMEOUT if "R1.line-by-line" in targets else 5.0
    try:
        results = graded(
            command_for(client), mode_for(targets, client), profiles, seed, targets, line_timeout
        )
    except Exception as exc:  # an infrastructure failure is reported, not counted as a miss
        return {"seed": seed, "caught": False, "generated": False, "error": repr(exc)}
    # a crash is the client's own failure of the check (a run exits 1 on it), as a fail is
    failed = [r for r in results if r.outcome in ("fail", "warn", "crash")]
    generated = any(f.source == "generated" for r in failed for f in r.failures)
    errors = [r.message for r in results if r.outcome == "error"]
    return {
        "seed": seed,
        "caught": bool(failed),
        "generated": generated,
        "error": errors[0] if errors and not failed else None,
    }


def _grade(task: tuple[str, list[str], int, bool]) -> tuple[str, dict[str, Any]]:
    client, targets, seed, subprocess_run = task
    grade = one_run if subprocess_run else in_process
    got = grade(client, targets, seed)
    if got["error"]:  # a loaded machine can fail a start: once more before it counts
        got = grade(client, targets, seed)
    return client, got


def measure(
    clients: list[str],
    targets: dict[str, list[str]],
    seeds: int,
    jobs: int,
    subprocess_run: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    # seed-major: the clients of one check and seed meet in a worker and share its cases
    work = [(c, targets[c], s, subprocess_run) for s in range(seeds) for c in clients]
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    started = time.monotonic()
    # the kit's pool (stopping.worker_pool): a worker killed from outside is one line
    pool = (
        ThreadPoolExecutor(jobs) if subprocess_run else stopping.worker_pool(jobs, as_a_run_process)
    )
    with pool as pool:
        for done, (client, got) in enumerate(pool.map(_grade, work, chunksize=1), 1):
            runs[client].append(got)
            mark = "caught" if got["caught"] else f"MISSED {got['error'] or ''}"
            print(f"[{done}/{len(work)}] {client} seed {got['seed']}: {mark}", file=sys.stderr)
    drawn: dict[tuple[str, int], list[Any]] = {}
    for client, got in runs.items():
        results[client] = {
            "seeds": seeds,
            "caught": sum(r["caught"] for r in got),
            "generated": sum(r["generated"] for r in got),
            "errors": sum(bool(r["error"]) for r in got),
            "missed_seeds": sorted(r["seed"] for r in got if not r["caught"]),
            "measured": time.strftime("%Y-%m-%d", time.gmtime()),
            "how": "subprocess" if subprocess_run else "in-process",
            "reach": reach(targets[client], NEEDS.get(client, []), seeds, drawn),
        }
    RESULTS.write_text(json.dumps(dict(sorted(results.items())), indent=2) + "\n")
    print(f"{len(work)} run(s) in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return runs


def holds(case: Any, needs: list[str]) -> bool:
    """Whether a drawn case holds what a pitfall needs: any of ``needs``, each a grammar
    production, a mutation id, or ``a+b`` for both (no needs: every case)."""
    if not needs:
        return True
    found = set(case.productions) | set(case.mutations)
    return any(all(part in found for part in need.split("+")) for need in needs)


def reach(
    checks: list[str], needs: list[str], seeds: int, drawn: dict[tuple[str, int], list[Any]]
) -> dict[str, int]:
    """The target checks' generated cases over seeds 0..N-1, and how many hold the needs."""
    from stella_conform.conformance.reach import drawn_cases

    held = cases = 0
    for seed in range(seeds):
        for check in checks:
            key = (check, seed)
            if key not in drawn:
                drawn[key] = list(drawn_cases(BY_ID[check], seed))
            cases += len(drawn[key])
            held += sum(holds(c, needs) for c in drawn[key])
    return {"held": held, "cases": cases}


def _reach_cell(client: str, r: dict[str, Any]) -> str:
    got = r.get("reach")
    if got is None:
        return "not measured"
    if not got["cases"]:
        return "fixtures only"
    n = r["seeds"]
    needs = ", ".join(f"`{need}`" for need in NEEDS.get(client, [])) or "every case"
    return f"{got['held'] / n:.1f} of {got['cases'] / n:.0f} ({needs})"


def render(targets: dict[str, list[str]]) -> str:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    rows = [
        "| broken client | targets | caught | by a generated case | reach: cases per run holding |",
        "| --- | --- | --- | --- | --- |",
    ]
    for client in targets:
        r = results.get(client)
        if r is None:
            cells = ["not measured", "not measured", "not measured"]
        else:
            n = r["seeds"]
            cells = [f"{r['caught']}/{n}", f"{r['generated']}/{n}", _reach_cell(client, r)]
        rows.append(f"| `{client}` | {', '.join(targets[client])} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def write_doc(table: str, start: str = START, end: str = END) -> None:
    """The table between its markers in docs/generators.md (this one's, or another's)."""
    text = DOC.read_text()
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(f"{head}{start}\n{table}\n{end}{tail}")


def compare(clients: list[str], targets: dict[str, list[str]], seeds: int, jobs: int) -> int:
    """Grade the same clients and seeds both ways; 1 when any (client, seed) differs."""
    work = [(c, targets[c], s) for s in range(seeds) for c in clients]
    with stopping.worker_pool(jobs, as_a_run_process) as pool:
        inside = list(pool.map(_grade, [(*w, False) for w in work], chunksize=1))
    with ThreadPoolExecutor(jobs) as threads:
        outside = list(threads.map(_grade, [(*w, True) for w in work]))
    differ = 0
    for (client, a), (_, b) in zip(inside, outside, strict=True):
        same = (a["caught"], a["generated"]) == (b["caught"], b["generated"])
        differ += not same
        print(
            f"{'same' if same else 'DIFFERENT'}  {client} seed {a['seed']}: in-process "
            f"{a['caught']}/{a['generated']}, subprocess {b['caught']}/{b['generated']}"
        )
    print(f"{len(work)} (client, seed) pair(s), {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per client")
    parser.add_argument("--clients", action="append", default=[], metavar="GLOB")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="kit runs at the same time")
    parser.add_argument("--write", action="store_true", help="regenerate the docs table only")
    parser.add_argument("--subprocess", action="store_true", help="one kit process per run")
    parser.add_argument(
        "--compare", action="store_true", help="in-process against subprocess: print disagreements"
    )
    args = parser.parse_args()
    targets: dict[str, list[str]] = json.loads((BROKEN / "targets.json").read_text())["clients"]
    if not args.write:
        chosen = []
        for c in targets:
            if args.clients and not any(fnmatch.fnmatchcase(c, g) for g in args.clients):
                continue
            try:
                command_for(c)  # a compiled client is built here, once, before any worker
            except Unavailable as exc:
                print(f"skipping {c}: {exc}", file=sys.stderr)
                continue
            chosen.append(c)
        if args.compare:
            return compare(chosen, targets, args.seeds, args.jobs)
        measure(chosen, targets, args.seeds, args.jobs, args.subprocess)
    table = render(targets)
    if args.write:
        write_doc(table)
    print(table)
    return 0


if __name__ == "__main__":
    with stopping.command():  # stopped, or a worker killed: its clients too, 128 + N
        sys.exit(main())
