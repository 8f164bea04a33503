"""`stella-conform corpus export` writes the fixture format, reproducibly, and round-trips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import kit_inline

from stella_conform.oracle.corpus import iter_fixtures

EXE = str(Path(sys.executable).parent / "stella-conform")


def sc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=300)


def test_export_is_reproducible_and_round_trips(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert sc("corpus", "export", str(a), "--count", "30", "--seed", "5").returncode == 0
    assert sc("corpus", "export", str(b), "--count", "30", "--seed", "5").returncode == 0
    files_a = sorted(p.name for p in a.iterdir())
    assert files_a == sorted(p.name for p in b.iterdir())
    for name in files_a:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    fixtures = list(iter_fixtures(a))  # validates every expectation against its schema
    assert len(fixtures) == 30
    assert any(f.expect["mutations"] for f in fixtures)
    assert any(not f.expect["mutations"] for f in fixtures)
    check = sc("corpus", "check", str(a))
    assert check.returncode == 0, check.stdout
    # and the plain decode command agrees with the expectation files: a mutated and a
    # plain stream, a kit process each (corpus check compared all 30 in-process)
    mutated = next(f for f in fixtures if f.expect["mutations"])
    plain = next(f for f in fixtures if not f.expect["mutations"])
    for fixture in (mutated, plain):
        out = sc("decode", "--json", str(fixture.stream_path))
        summary = json.loads(out.stdout)["summary"]
        assert summary["verdict"] == fixture.expect["verdict"]
        assert summary["rejected_line"] == fixture.expect["rejected_line"]
        assert summary["final_text"] == fixture.expect["final_text"]
        assert out.returncode == (0 if fixture.expect["verdict"] == "accept" else 1)


def test_check_catches_a_wrong_expectation(tmp_path: Path) -> None:
    assert sc("corpus", "export", str(tmp_path), "-n", "3", "-s", "1").returncode == 0
    target = sorted(tmp_path.glob("*.expect.json"))[0]
    doc = json.loads(target.read_text())
    doc["verdict"] = "reject" if doc["verdict"] == "accept" else "accept"
    target.write_text(json.dumps(doc))
    out = sc("corpus", "check", str(tmp_path))
    assert out.returncode == 1 and "verdict" in out.stdout


def test_export_refuses_to_mix_corpora(tmp_path: Path) -> None:
    assert sc("corpus", "export", str(tmp_path), "-n", "2").returncode == 0
    again = kit_inline("corpus", "export", str(tmp_path), "-n", "2")
    assert again.returncode == 2 and "--force" in again.stderr
    assert sc("corpus", "export", str(tmp_path), "-n", "1", "--force").returncode == 0
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def test_malformed_expectation_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text("{}\n")
    (tmp_path / "x.expect.json").write_text('{"format": "nope"}')
    out = kit_inline("corpus", "check", str(tmp_path))
    assert out.returncode == 2 and "malformed expectation" in out.stderr
    assert "Traceback" not in out.stderr


def test_export_with_wire_schema(tmp_path: Path, wire_schema: Path) -> None:
    out = sc("corpus", "export", str(tmp_path), "-n", "10", "--wire-schema", str(wire_schema))
    assert out.returncode == 0, out.stderr
    assert (
        "wire@agentevent.schema.json"
        in json.loads((tmp_path / "corpus.json").read_text())["vocabulary"]
    )
    assert sc("corpus", "check", str(tmp_path), "--wire-schema", str(wire_schema)).returncode == 0
