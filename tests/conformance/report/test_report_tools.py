"""--shard, `report merge` and `report diff`: the pieces a release-gating CI job needs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE, kit, kit_inline

#: Shards, merges and diffs are mechanics: one generated case per check (with every fixture)
#: gives each check its outcome, and the torn-line client fails its rule on the fixtures.
RUN = ("run", "--mode", "persistent", "--examples", "1", "--no-database", "--seed", "9")
#: One rule's checks, for the tests about two different runs (they compare outcomes).
R6 = ("--only", "R6.*")
TORN = (sys.executable, str(ADAPTERS / "broken" / "fails_on_torn_final_line.py"))


def graded(tmp_path: Path, name: str, *args: str) -> tuple[int, dict]:
    path = tmp_path / name
    split = args.index("--")  # options before the client command, the command after
    out = kit(*RUN, *args[:split], "--json", str(path), *args[split:], cwd=tmp_path)
    assert path.exists(), out.stdout + out.stderr
    return out.returncode, json.loads(path.read_text())


def essentials(doc: dict) -> list[tuple[str, str]]:
    return [(c["id"], c["outcome"]) for c in doc["checks"]]


def test_shards_merge_into_the_unsharded_report(tmp_path: Path) -> None:
    _, whole = graded(tmp_path, "whole.json", "--", *TORN)
    shards = []
    for i in (1, 2, 3):
        _, doc = graded(tmp_path, f"s{i}.json", "--shard", f"{i}/3", "--", *TORN)
        assert doc["shard"] == f"{i}/3"
        shards.append(tmp_path / f"s{i}.json")
    ids = [set(c["id"] for c in json.loads(p.read_text())["checks"]) for p in shards]
    assert not (ids[0] & ids[1]) and not (ids[1] & ids[2]) and not (ids[0] & ids[2])
    out = kit_inline(
        "report", "merge", str(tmp_path / "merged.json"), *map(str, shards), cwd=tmp_path
    )
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert essentials(merged) == essentials(whole)
    assert merged["summary"] == whole["summary"] and merged["exit_code"] == whole["exit_code"]
    assert out.returncode == whole["exit_code"] == 1


@pytest.mark.parametrize("stopped", [1, 2])
def test_a_stopped_shard_leaves_the_merged_run_incomplete(tmp_path: Path, stopped: int) -> None:
    """A shard a stop signal cut short (its report as a stopped run writes it: the checks
    graded before the stop, ``incomplete``, exit status 143) makes the merged report
    incomplete with that status, whichever shard it was: keeping the first shard's fields
    only, a stopped second shard would merge into a whole run that passed, exit 0."""
    shards = []
    for i in (1, 2):
        code, doc = graded(tmp_path, f"s{i}.json", *R6, "--shard", f"{i}/2", "--", *PY_REFERENCE)
        assert code == 0 and doc["exit_code"] == 0
        if i == stopped:
            doc["checks"] = doc["checks"][:1]
            doc["summary"] = {o: 0 for o in doc["summary"]} | {"pass": 1}
            doc["incomplete"] = "stopped by SIGTERM after 1 of 2 check(s)"
            doc["exit_code"] = 143
            (tmp_path / f"s{i}.json").write_text(json.dumps(doc))
        shards.append(str(tmp_path / f"s{i}.json"))
    out = kit_inline("report", "merge", str(tmp_path / "m.json"), *shards, cwd=tmp_path)
    merged = json.loads((tmp_path / "m.json").read_text())
    assert merged["incomplete"] == "stopped by SIGTERM after 1 of 2 check(s)", merged
    assert merged["exit_code"] == out.returncode == 143, (merged["exit_code"], out.stderr)


def test_merge_refuses_reports_of_different_runs(tmp_path: Path) -> None:
    _, _a = graded(tmp_path, "a.json", *R6, "--shard", "1/2", "--", *TORN)
    _, _b = graded(tmp_path, "b.json", *R6, "--shard", "2/2", "--", *PY_REFERENCE)
    out = kit_inline(
        "report",
        "merge",
        str(tmp_path / "m.json"),
        str(tmp_path / "a.json"),
        str(tmp_path / "b.json"),
    )
    assert out.returncode == 2 and "not shards of one run" in out.stderr


def test_diff_names_the_regressed_checks(tmp_path: Path) -> None:
    code_good, _ = graded(tmp_path, "good.json", *R6, "--", *PY_REFERENCE)
    code_bad, _ = graded(tmp_path, "bad.json", *R6, "--", *TORN)
    assert (code_good, code_bad) == (0, 1)
    regression = kit_inline(
        "report", "diff", str(tmp_path / "good.json"), str(tmp_path / "bad.json")
    )
    assert regression.returncode == 1
    assert "Newly failing" in regression.stdout and "`R6.torn-final-line`" in regression.stdout
    as_json = json.loads(
        kit_inline(
            "report", "diff", "--json", str(tmp_path / "good.json"), str(tmp_path / "bad.json")
        ).stdout
    )
    assert [e["id"] for e in as_json["newly_failing"]] == ["R6.torn-final-line"]
    fixed = kit_inline("report", "diff", str(tmp_path / "bad.json"), str(tmp_path / "good.json"))
    assert fixed.returncode == 0 and "Newly passing" in fixed.stdout
    same = kit_inline("report", "diff", str(tmp_path / "good.json"), str(tmp_path / "good.json"))
    assert same.returncode == 0 and "No check changed outcome" in same.stdout


@pytest.mark.parametrize("spec", ["0/3", "4/3", "x", "1/0"])
def test_bad_shard_spec_is_exit_2(spec: str) -> None:
    out = kit_inline("run", "--shard", spec, "--", *PY_REFERENCE)
    assert out.returncode == 2 and "--shard" in out.stderr


def test_diff_of_a_non_report_is_exit_2(tmp_path: Path) -> None:
    bogus = tmp_path / "x.json"
    bogus.write_text('{"hello": 1}')
    out = kit_inline("report", "diff", str(bogus), str(bogus))
    assert out.returncode == 2 and "not a stella-conform report" in out.stderr


def test_merged_fuzz_workers_count_every_worker_s_failing_cases() -> None:
    """Two workers' reports of one check: the merged check's failing cases are both
    workers' (a case both list, found by one and run by the other, counted once), so the
    reports' "N more failing cases" is true of the merged report too."""
    from stella_conform.conformance.report.compare import merge_workers

    def failure(n: int) -> dict:
        return {"case": f"generated-{n}", "message": "expected accept; client: reject"}

    def worker(seed: int, failed: int, failures: list[dict]) -> dict:
        check = {
            "id": "R5.unknown-fields-ignored", "outcome": "fail", "message": "m",
            "cases": 10, "failures": failures, "failed_cases": failed,
        }  # fmt: skip
        return {"seed": seed, "checks": [check], "fuzz": {"cases": 10, "failures": []}}

    merged = merge_workers(
        [worker(1, 7, [failure(1), failure(2)]), worker(2, 4, [failure(2), failure(3)])]
    )
    (check,) = merged["checks"]
    assert len(check["failures"]) == 3
    assert check["failed_cases"] == 7 + 4 - 1, check
