"""No false fails: every conforming client of ``adapters/`` through default runs of every seed.

The other side of ``power.py``: each reference client is graded on every check of the
profiles it claims, in the mode the client-matrix test grades it, with the default example
count, on seeds 0..N-1, the same way ``power.py`` grades (in worker processes that import
the kit once; ``run_check`` per check).  Any outcome other than pass or skip is printed
(a reading client's expected failures, ``adapters/python/readings.json``, excepted), and
the script exits 1.

    python benchmarks/conforming.py --seeds 20 -j 2 [--clients 'python/*']
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import power  # noqa: E402  (the grading workers, built the way power.py builds them)

from stella_conform import stopping  # noqa: E402

ADAPTERS = power.REPO / "adapters"
#: (client under adapters/, mode, profiles): the conforming clients and how the client-matrix
#: test grades each with the full example count.
CONFORMING: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("python/reference_client.py", "persistent", ("reader", "dashboard")),
    ("python/reference_client.py", "report", ("reader",)),
    ("node/reference_client.js", "persistent", ("reader",)),
    ("shell/jq_client.sh", "exit", ("reader",)),
    ("python/dashboard.py", "persistent", ("reader", "dashboard")),
    ("python/recorder.py", "exit", ("reader", "recorder")),
    ("python/envelope_client.py", "persistent", ("envelope",)),
    ("python/journal_reader.py", "persistent", ("trace",)),
    ("python/wrapper_client.py", "report", ("wrapper",)),
    ("python/reading_b_client.py", "persistent", ("reader", "dashboard")),
)
READINGS: dict[str, dict[str, list[str]]] = json.loads(
    (ADAPTERS / "python" / "readings.json").read_text()
)["clients"]


def argv_for(client: str) -> list[str]:
    path = str(ADAPTERS / client)
    if client.endswith(".js"):
        return ["node", path]
    if client.endswith(".sh"):
        return ["sh", path]
    return [sys.executable, path]


def grade(task: tuple[str, str, tuple[str, ...], int]) -> dict[str, Any]:
    """Every check of the profiles, one default run: what did not pass (or skip)."""
    client, mode, profiles, seed = task
    expected = set(READINGS.get(Path(client).name, {}).get(mode, []))
    started = time.process_time()
    results = power.graded(argv_for(client), mode, list(profiles), seed)
    bad = [
        f"{r.outcome} {r.id}: {r.message[:300]}"
        for r in results
        if r.outcome not in ("pass", "skip") and r.id not in expected
    ]
    return {
        "client": client,
        "mode": mode,
        "seed": seed,
        "checks": len(results),
        "cases": sum(r.cases for r in results),
        "bad": bad,
        "cpu": time.process_time() - started,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per client")
    parser.add_argument("--clients", action="append", default=[], metavar="GLOB")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    args = parser.parse_args()
    chosen = [
        c
        for c in CONFORMING
        if not args.clients or any(fnmatch.fnmatchcase(c[0], g) for g in args.clients)
    ]
    work = [(*c, s) for s in range(args.seeds) for c in chosen]
    started = time.monotonic()
    bad = 0
    with stopping.worker_pool(args.jobs, power.as_a_run_process) as pool:  # the kit's pool
        for done, got in enumerate(pool.map(grade, work, chunksize=1), 1):
            mark = "ok" if not got["bad"] else f"{len(got['bad'])} NOT PASSED"
            print(
                f"[{done}/{len(work)}] {got['client']} {got['mode']} seed {got['seed']}: "
                f"{got['checks']} checks, {got['cases']} cases: {mark}",
                file=sys.stderr,
            )
            for line in got["bad"]:
                print(f"    {line}")
            bad += bool(got["bad"])
    spent = time.monotonic() - started
    print(f"{len(work)} run(s) in {spent:.0f} s; {bad} with a check not passed")
    return 1 if bad else 0


if __name__ == "__main__":
    with stopping.command():  # stopped, or a worker killed: its clients too, 128 + N
        sys.exit(main())
