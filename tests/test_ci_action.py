"""The composite action and the project's workflow: parsed, and the grading step run.

GitHub runs the action's steps; here the one step with logic in it (building the
stella-conform command line from the inputs, writing the step summary and the exit code
output) runs under bash with the environment GitHub would give it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ADAPTERS, KIT, REPO, kit

ACTION = yaml.safe_load((REPO / "action" / "action.yml").read_text())


def test_workflows_and_action_parse() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    assert set(workflow["jobs"]) >= {"test", "lint-and-types", "selftest-matrix"}
    assert ACTION["runs"]["using"] == "composite"
    assert {"client", "mode", "profiles", "known-failures"} <= set(ACTION["inputs"])


def grade_step(tmp_path: Path, client: str, **inputs: str) -> tuple[str, str]:
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "grade")
    env = dict(os.environ)
    env["PATH"] = f"{KIT.parent}{os.pathsep}{env['PATH']}"
    for name, spec in ACTION["inputs"].items():
        env_name = {"known-failures": "KNOWN"}.get(name, name.upper())
        env[env_name] = inputs.get(name.replace("-", "_"), spec.get("default", ""))
    env.update({"CLIENT": client, "EXAMPLES": "3"})
    env["GITHUB_OUTPUT"] = str(tmp_path / "output")
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary")
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return (tmp_path / "output").read_text(), (tmp_path / "summary").read_text()


def github_outputs(text: str) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` read as the runner does: ``name=value`` or ``name<<DELIMITER``."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for more in lines:
                if more == delimiter:
                    break
                value.append(more)
            else:
                raise AssertionError(f"no closing delimiter for {name}")
            out[name] = "\n".join(value)
        elif line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


@pytest.mark.parametrize(
    ("client", "profiles", "code"),
    [
        ("reference_client.py", "reader dashboard", "0"),
        ("../broken/dashboard_waits_for_complete.py", "reader dashboard", "1"),
    ],
)
def test_the_grade_step_reports_the_exit_code_and_writes_the_summary(
    tmp_path: Path, client: str, profiles: str, code: str
) -> None:
    command = shlex.join([sys.executable, str(ADAPTERS / "python" / client)])
    output, summary = grade_step(tmp_path, command, profiles=profiles)
    assert github_outputs(output) == {"exit-code": code}
    assert "D.run-terminator" in summary and "## stella-conform" in summary
    assert (tmp_path / "stella-report.json").is_file()
    assert (tmp_path / "stella-junit.xml").is_file()


def test_the_action_s_mode_is_auto_unless_given_as_run_s_is() -> None:
    mode = ACTION["inputs"]["mode"]
    assert mode["default"] == "auto"
    assert all(name in mode["description"] for name in ("auto", "exit", "report", "persistent"))


def test_the_grade_step_grades_a_template_in_the_mode_its_hello_lists(tmp_path: Path) -> None:
    """The action's default, auto, grades a template in persistent mode (one process for
    every case)."""
    folder = tmp_path / "adapter"
    assert kit("init", "python", str(folder)).returncode == 0
    command = shlex.join([sys.executable, str(folder / "stella_adapter.py")])
    output, _ = grade_step(tmp_path, command)
    assert github_outputs(output) == {"exit-code": "0"}
    report = json.loads((tmp_path / "stella-report.json").read_text())
    assert report["client"]["mode_chosen"] == "its hello lists the modes report, persistent"
