"""A replay line carries the client's own claims, and replays the failure with its reason.

A client that computes a field without knowing the event type it is read from fails the
check about that type whatever the cases say (``Claims.unmet``), and the check is graded as
if the client knew the type. The replay line must still name the claims the client made,
not the ones the kit assumed, and replaying it must fail for the same reason.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from conftest import ADAPTERS, kit, replay_args

PY = sys.executable
ENDS_ON_COMPLETE = (PY, str(ADAPTERS / "broken" / "dashboard_ends_on_complete.py"))
REASON = "the client computes terminator but does not know run_complete"


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_a_replay_line_names_the_claims_the_client_made_and_fails_for_their_reason(
    tmp_path: Path,
) -> None:
    out = kit(
        "run", "--mode", "persistent", "--only", "D.run-terminator", "--examples", "0",
        "--no-database", "-j", "1", "--json", "r.json", "--", *ENDS_ON_COMPLETE,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    (check,) = doc["checks"]
    assert check["outcome"] == "fail" and check["message"].startswith(REASON)
    claimed = doc["claims"]["knows"]
    assert "run_complete" not in claimed
    for failure in check["failures"]:
        argv = replay_args(failure["replay"])
        knows = _option(argv, "--knows")
        assert knows is not None and sorted(knows.split(",")) == sorted(claimed), argv
        assert _option(argv, "--check") == "D.run-terminator"
    again = kit(*replay_args(check["failures"][0]["replay"]), cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    judged = [line for line in again.stdout.splitlines() if line.startswith("judgment:")]
    assert judged and REASON in judged[0], again.stdout


def test_a_replay_of_a_passing_case_still_fails_for_an_unmet_claim(tmp_path: Path) -> None:
    """The reason holds whatever the case: replayed on a case the client gets right (a
    failed run, which ends on ``error``, a type it knows), the check still fails, saying
    why, as ``run`` fails it."""
    args = [
        "replay", "fixture:failed_run_ends_on_error", "--check", "D.run-terminator",
        "--mode", "persistent", "--", *ENDS_ON_COMPLETE,
    ]  # fmt: skip
    again = kit(*args, cwd=tmp_path)
    assert again.returncode == 1, shlex.join(args) + "\n" + again.stdout + again.stderr
    assert REASON in again.stdout
