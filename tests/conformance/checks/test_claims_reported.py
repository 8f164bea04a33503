"""What a client's claims leave ungraded is reported, both ways: the fields it does not
compute that the checks ask for, and the fields it computes that no check of the selected
profiles grades (a reader-only run of a client claiming ``preview`` and ``usage`` says it
never graded them, not ``"not_graded": []``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ADAPTERS, kit

from stella_conform.conformance.checks import CATALOGUE
from stella_conform.conformance.checks.claims import Claims
from stella_conform.schemas.vocabulary import Vocabulary

READER = [c for c in CATALOGUE if c.profile == "reader"]
DASHBOARD = [c for c in CATALOGUE if c.profile in ("reader", "dashboard")]
UNGRADED = "summary fields the client computes that no selected profile grades"


def test_computed_fields_no_selected_check_grades_are_named() -> None:
    vocab = Vocabulary.default()
    claims = Claims(computes=frozenset({"final_text", "preview", "usage", "rejected_line"}))
    said = claims.not_graded(vocab, READER)
    ungraded = [line for line in said if line.startswith(UNGRADED)]
    assert ungraded == [f"{UNGRADED}: preview, usage"], said
    # graded by the dashboard profile: nothing left to say about them
    assert not [line for line in claims.not_graded(vocab, DASHBOARD) if UNGRADED in line]
    # without a selection (any check may grade them), nothing is said either
    assert not [line for line in claims.not_graded(vocab) if UNGRADED in line]


def test_a_reader_run_reports_the_claimed_fields_it_never_graded(tmp_path: Path) -> None:
    client = (sys.executable, str(ADAPTERS / "python" / "reference_client.py"))
    out = kit(
        "run", "--mode", "report", "--only", "R1.valid-runs-accepted", "--examples", "0",
        "--no-database", "-j", "1", "--computes", "final_text,preview,usage",
        "--json", "r.json", "--", *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    claims = json.loads((tmp_path / "r.json").read_text())["claims"]
    assert f"{UNGRADED}: preview, usage" in claims["not_graded"], claims
    assert f"claims not graded: {UNGRADED}: preview, usage" in out.stdout
