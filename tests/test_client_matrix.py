"""The proof that no check is a check that cannot fail.

Every reference client passes every check it can be graded on; every broken client
fails exactly the checks listed for it in adapters/broken/targets.json and passes (or
cannot be graded on) all the others.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, JQ_REFERENCE, NODE_REFERENCE, PY_REFERENCE, kit

from stella_conform.conformance.checks import CATALOGUE

TARGETS: dict[str, list[str]] = json.loads((ADAPTERS / "broken" / "targets.json").read_text())[
    "clients"
]
FAST = ("--examples", "5", "--seed", "1", "--no-database", "-j", "2", "--line-timeout", "2")


def grade(tmp_path: Path, mode: str, *command: str, extra: tuple[str, ...] = ()) -> dict:
    report = tmp_path / "report.json"
    out = kit(
        "run", "--mode", mode, *FAST, *extra, "--json", str(report), "--", *command, cwd=tmp_path
    )
    assert report.exists(), out.stdout + out.stderr
    doc = json.loads(report.read_text())
    doc["_exit"] = out.returncode
    doc["_stdout"] = out.stdout
    return doc


def outcomes(doc: dict) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in doc["checks"]}


def test_every_check_is_targeted_by_some_broken_client() -> None:
    targeted = {t for targets in TARGETS.values() for t in targets}
    assert targeted == {c.id for c in CATALOGUE}


REFERENCES = [
    pytest.param("report", PY_REFERENCE, id="python-report"),
    pytest.param("persistent", PY_REFERENCE, id="python-persistent"),
    pytest.param("exit", PY_REFERENCE, id="python-exit"),
    pytest.param(
        "report",
        NODE_REFERENCE,
        id="node-report",
        marks=pytest.mark.skipif(not shutil.which("node"), reason="no node"),
    ),
    pytest.param(
        "persistent",
        NODE_REFERENCE,
        id="node-persistent",
        marks=pytest.mark.skipif(not shutil.which("node"), reason="no node"),
    ),
    pytest.param(
        "exit",
        NODE_REFERENCE,
        id="node-exit",
        marks=pytest.mark.skipif(not shutil.which("node"), reason="no node"),
    ),
    pytest.param(
        "exit",
        JQ_REFERENCE,
        id="jq-exit",
        marks=pytest.mark.skipif(not shutil.which("jq"), reason="no jq"),
    ),
]


@pytest.mark.parametrize(("mode", "command"), REFERENCES)
def test_reference_client_is_conformant(
    tmp_path: Path, mode: str, command: tuple[str, ...]
) -> None:
    doc = grade(tmp_path, mode, *command)
    got = outcomes(doc)
    assert doc["_exit"] == 0, doc["_stdout"]
    for check in CATALOGUE:
        expected = "pass" if check.grades_in(mode) else "skip"
        assert got[check.id] == expected, (check.id, doc["_stdout"])


@pytest.mark.parametrize("client", sorted(TARGETS))
def test_broken_client_fails_exactly_its_targets(tmp_path: Path, client: str) -> None:
    targets = set(TARGETS[client])
    # lockstep (R1.line-by-line) is only observable in report mode; persistent is faster
    mode = "report" if "R1.line-by-line" in targets else "persistent"
    extra = ("--line-timeout", "0.2", "--examples", "2") if mode == "report" else ()
    doc = grade(tmp_path, mode, sys.executable, str(ADAPTERS / "broken" / client), extra=extra)
    got = outcomes(doc)
    failing = {cid for cid, outcome in got.items() if outcome in ("fail", "warn")}
    assert failing == targets, doc["_stdout"]
    assert not [cid for cid, outcome in got.items() if outcome == "error"], doc["_stdout"]
    must_fail = any(CATALOGUE_BY_ID[t].tier == "MUST" for t in targets)
    assert doc["_exit"] == (1 if must_fail else 0), doc["_stdout"]
    for check_id in targets:
        entry = next(c for c in doc["checks"] if c["id"] == check_id)
        assert entry["failures"], check_id
        failure = entry["failures"][0]
        assert failure["replay"] and "stella-conform replay" in failure["replay"]
        assert (failure["saved"] and Path(tmp_path, failure["saved"]).exists()) or Path(
            failure["saved"]
        ).exists()


CATALOGUE_BY_ID = {c.id: c for c in CATALOGUE}
