"""`stella-conform run`, `replay`, `smoke` and `checks` from the command line."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE, kit, kit_inline, replay_args

BROKEN_TORN = (sys.executable, str(ADAPTERS / "broken" / "fails_on_torn_final_line.py"))
QUICK = ("--examples", "3", "--no-database", "-j", "2")


def test_reference_client_passes_with_all_report_formats(tmp_path: Path) -> None:
    paths = {name: tmp_path / name for name in ("r.json", "r.xml", "r.md")}
    out = kit(
        "run",
        "--mode",
        "persistent",
        *QUICK,
        "--json",
        str(paths["r.json"]),
        "--junit-xml",
        str(paths["r.xml"]),
        "--markdown",
        str(paths["r.md"]),
        "--",
        *PY_REFERENCE,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(paths["r.json"].read_text())
    assert doc["kit"]["name"] == "stella-conform" and doc["kit"]["version"]
    assert doc["corpus_version"] and doc["seed"] == 0 and doc["vocabulary"]
    assert all({"id", "outcome"} <= set(c) for c in doc["checks"])
    suite = ET.parse(paths["r.xml"]).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests", "0")) == len(doc["checks"])
    assert {c.get("name") for c in suite.iter("testcase")} == {c["id"] for c in doc["checks"]}
    md = paths["r.md"].read_text()
    assert "| check | outcome | details |" in md and "`R3.unknown-type-inert`" in md


def test_broken_client_exit_1_with_saved_case_and_replay(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    out = kit(
        "run",
        "--mode",
        "persistent",
        *QUICK,
        "--only",
        "R6.*",
        "--json",
        str(report),
        "--",
        *BROKEN_TORN,
        cwd=tmp_path,
    )
    assert out.returncode == 1
    doc = json.loads(report.read_text())
    torn = next(c for c in doc["checks"] if c["id"] == "R6.torn-final-line")
    assert torn["outcome"] == "fail"
    generated = [f for f in torn["failures"] if f["source"] == "generated"]
    assert generated, torn
    saved = tmp_path / generated[0]["saved"]
    assert saved.exists() and saved.with_name(saved.name.replace(".jsonl", ".expect.json")).exists()
    assert replay_args(generated[0]["replay"])[:2] == ["replay", generated[0]["saved"]]
    # the shrunk counterexample is small
    assert saved.read_bytes().count(b"\n") <= 3
    # replay shows expected vs observed and fails for the broken client...
    replay = kit("replay", str(saved), "--mode", "report", "--", *BROKEN_TORN, cwd=tmp_path)
    assert replay.returncode == 1 and "expected: accept" in replay.stdout
    assert "∅ (no final newline)" in replay.stdout
    # ...and passes for the reference client
    ok = kit("replay", str(saved), "--mode", "report", "--", *PY_REFERENCE, cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout


def test_known_failures_are_honoured_and_shrinking_lists_reported(tmp_path: Path) -> None:
    known = tmp_path / "known.toml"
    known.write_text(
        '[known-failures]\n"R6.torn-final-line" = "tracked in #12"\n'
        '"R6.corrupt-line-not-last" = "fixed last week"\n'
    )
    out = kit(
        "run",
        "--mode",
        "persistent",
        *QUICK,
        "--only",
        "R6.*",
        "--known-failures",
        str(known),
        "--",
        *BROKEN_TORN,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout
    assert "FAIL (known)" in out.stdout
    assert "known failure now passes, remove it from the list: R6.corrupt-line-not-last" in (
        out.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--", "/no/such/client"], "client not found"),
        (["--"], "no client command"),
        (["--mode", "telepathy", "--", "true"], "Invalid value for '--mode'"),
        (["--profile", "oracle", "--", "true"], "unknown profile 'oracle'"),
        (["--only", "R9.*", "--", "true"], "matches no check id"),
        (["--json", "/no/such/dir/r.json", "--", "true"], "output directory does not exist"),
        (["--known-failures", "/no/such.toml", "--", "true"], "known-failures file not found"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = kit_inline("run", *args, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "content",
    [
        "not toml [",
        '[known-failures]\n"R6.torn-final-line" = ""\n',
        '[known-failures]\n"R9.nope" = "x"\n',
        "[other]\nx = 1\n",
    ],
)
def test_malformed_known_failures_file(tmp_path: Path, content: str) -> None:
    known = tmp_path / "known.toml"
    known.write_text(content)
    out = kit_inline("run", "--known-failures", str(known), "--", *PY_REFERENCE, cwd=tmp_path)
    assert out.returncode == 2 and "known-failures" in out.stderr
    assert "Traceback" not in out.stderr


def test_non_executable_client_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "client"
    path.write_text("#!/bin/sh\nexit 0\n")
    out = kit_inline("run", "--", str(path), cwd=tmp_path)
    assert out.returncode == 2 and "not executable" in out.stderr


def test_crashing_client_is_crash_not_fail_or_error(tmp_path: Path) -> None:
    crash = tmp_path / "crash.sh"
    # answers the trivially valid stream run before any check, crashes on everything else
    crash.write_text("#!/bin/sh\nif grep -q '\"Hello.\"'; then exit 0; fi\nexit 3\n")
    crash.chmod(0o755)
    report = tmp_path / "r.json"
    out = kit("run", *QUICK, "--json", str(report), "--", str(crash), cwd=tmp_path)
    assert out.returncode == 1
    outcomes = {c["outcome"] for c in json.loads(report.read_text())["checks"]}
    assert outcomes <= {"crash", "skip"} and "crash" in outcomes  # the client's, not the kit's


def test_checks_listing() -> None:
    out = kit("checks", "--json")
    ids = [c["id"] for c in json.loads(out.stdout)]
    assert "R3.unknown-type-inert" in ids and len(ids) == len(set(ids))
