"""The failing case a check shows first is one the client cannot dispute from its claims,
and its ``expected:`` names what the client computes.

A check's cases are listed smallest first, but the one shown in full leads the report:
a case of another stella's vocabulary (``archived_complete``: ``complete``, stages
without a scope), or one whose deciding line is of a type the client reads for no field it
computes, is one the client would dispute, and the case that shows the real bug (a run of
today's stella whose end it never sees) came second. The headline is now the smallest
case the client's claims cannot dispute, and ``expected:`` lists only the verdict and the
fields the client computes (the check's own among them).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import ADAPTERS, kit

PY = sys.executable
WAITS = (PY, str(ADAPTERS / "broken" / "dashboard_waits_for_complete.py"))
OLDER = (PY, str(ADAPTERS / "python" / "older_client.py"))


def _graded(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = kit(
        "run", "--mode", "persistent", "--no-database", "-j", "1", "--json", "r.json", *args,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    doc: dict[str, Any] = json.loads((tmp_path / "r.json").read_text())
    doc["_stdout"] = out.stdout
    return doc


def _check(doc: dict[str, Any], check_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in doc["checks"] if c["id"] == check_id)
    return found


def test_the_headline_is_a_case_of_todays_stella_and_expected_is_what_it_computes(
    tmp_path: Path,
) -> None:
    doc = _graded(
        tmp_path, "--only", "D.run-terminator", "--examples", "0",
        "--computes", "terminator,texts", "--", *WAITS,
    )  # fmt: skip
    check = _check(doc, "D.run-terminator")
    cases = [f["case"] for f in check["failures"]]
    assert "archived_complete" in cases, cases  # still listed
    head = check["failures"][0]
    assert head["case"] == "minimal_run", cases
    assert (
        check["message"] == head["message"] == ('terminator: expected "run_complete", client null')
    )
    # the rest stay smallest first
    sizes = [f["size"] for f in check["failures"][1:]]
    assert sizes == sorted(sizes)
    for failure in check["failures"]:
        expected = failure["expected"]
        assert "terminator" in expected, expected
        assert set(expected) <= {"verdict", "terminator", "texts", "also_conforming"}, expected
        for other in expected.get("also_conforming", []):
            assert set(other) <= {"reading", "verdict", "rejected_line", "terminator", "texts"}
    assert '    expected: {"verdict": "accept", "terminator": "run_complete"' in doc["_stdout"]


def test_an_older_clients_real_bug_comes_before_the_archived_case(tmp_path: Path) -> None:
    """A client built for the older stella, graded against today's: it counts ``complete``
    as a turn's end and scope-less stages as known (the older stella's reading of
    ``archived_complete``, which it would dispute), and it does not know today's
    ``turn_complete`` (its real bug, shown first)."""
    doc = _graded(
        tmp_path, "--only", "R3.unknown-counted", "--only", "D.turns-counted",
        "--examples", "5", "--", *OLDER,
    )  # fmt: skip
    for check_id in ("R3.unknown-counted", "D.turns-counted"):
        check = _check(doc, check_id)
        cases = [f["case"] for f in check["failures"]]
        assert "archived_complete" in cases, (check_id, cases)
        assert cases[0] != "archived_complete", (check_id, cases)
    counted = _check(doc, "R3.unknown-counted")["failures"][0]["message"]
    assert "'turn_complete'" in counted, counted


def test_a_bad_body_on_a_type_the_client_reads_comes_before_a_stage_scope_it_never_reads(
    tmp_path: Path,
) -> None:
    """A reader computing the texts checks only the ``text`` bodies, and those only for a
    missing ``text``: the smallest cases it fails end on a ``run_complete`` it reads for no
    field it computes, or have a ``stage`` whose scope it never reads (``bad_body_enum``);
    the headline is the smallest on a type it reads (a ``text`` whose text is null, its
    real bug)."""
    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.checks.claims import Claims
    from stella_conform.conformance.clients.inprocess import Parser
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.conformance.suite import SuiteConfig, run_check

    def read(lines: Any) -> dict[str, Any]:
        texts = []
        for raw in lines:
            event = json.loads(raw) if raw.strip() else {}
            if event.get("type") == "text":
                if "text" not in event:
                    raise ValueError("a text without its text")
                texts.append(str(event["text"]))
        return {"final_text": texts[-1] if texts else None, "texts": texts}

    client = Client(argv=(), mode="exit", function=Parser(read))
    claims = Claims(computes=frozenset({"final_text", "texts"}))
    config = SuiteConfig(
        client, examples=0, database_dir=None, failures_dir=tmp_path, claims=claims
    )
    result = run_check(BY_ID["R4.bad-body-rejected"], config)
    cases = [f.case for f in result.failures]
    assert result.outcome == "fail" and "bad_body_enum" in cases, cases
    by_size = sorted(result.failures, key=lambda f: f.size)
    assert by_size[0].case != "bad_body_null", cases
    assert cases[0] == "bad_body_null", cases
    assert result.message == result.failures[0].message
    assert set(result.failures[0].expected) <= {"verdict", "rejected_line", "final_text"}
