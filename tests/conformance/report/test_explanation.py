"""The JSON report's ``explanation``: a failing check told as a test runner shows it.

The native test runners (``adapters/runners/``) read nothing but the JSON report; a
failing check's ``explanation`` is the failure text they show, so it must say what the
terminal report says of the check: its message, the case, expected against what the
client did, the stream with the deciding line marked, where it is saved, the replay line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ADAPTERS, PY_REFERENCE, kit

RUN = ("run", "--mode", "persistent", "--examples", "1", "--no-database", "--only", "R6.*")
TORN = (sys.executable, str(ADAPTERS / "broken" / "fails_on_torn_final_line.py"))


def _graded(folder: Path, client: tuple[str, ...]) -> tuple[dict, str]:
    folder.mkdir()
    out = kit(*RUN, "--color", "never", "--json", "report.json", "--", *client, cwd=folder)
    return json.loads((folder / "report.json").read_text()), out.stdout


def _terminal_block(stdout: str, check_id: str) -> list[str]:
    """The terminal report's lines under a check's own line, unindented."""
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[1:2] == [check_id])
    block = []
    for line in lines[at + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    return block


def test_a_failing_check_carries_the_terminal_report_s_failure_text(tmp_path: Path) -> None:
    doc, stdout = _graded(tmp_path / "torn", TORN)
    (check,) = [c for c in doc["checks"] if c["id"] == "R6.torn-final-line"]
    assert check["outcome"] == "fail"
    text = check["explanation"].split("\n")
    assert text[0] == "R6.torn-final-line (tolerates a cut-off final line): FAIL"
    assert text[1] == check["message"]
    block = _terminal_block(stdout, "R6.torn-final-line")
    assert block and text[3:] == block
    first = check["failures"][0]
    assert f"case: {first['case']} ({first['source']})" in text
    assert f"replay:   {first['replay']}" in text
    assert "stream:" in text and any(" ▶ " in line for line in text)  # the deciding line
    assert all("explanation" not in c for c in doc["checks"] if c["outcome"] in ("pass", "skip"))


def test_a_passing_run_has_no_explanation(tmp_path: Path) -> None:
    doc, _ = _graded(tmp_path / "reference", PY_REFERENCE)
    assert doc["exit_code"] == 0
    assert not [c["id"] for c in doc["checks"] if "explanation" in c]
