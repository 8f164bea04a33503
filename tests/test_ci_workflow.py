"""docs/ci.md's workflow, copied as written, and the one install line every doc gives.

The workflow's grading steps run under bash, as GitHub runs them, on each template
``stella-conform init`` writes: the adapter graded in ``run``'s default mode (``auto``,
which picks persistent mode from the template's hello), then the same binary graded in
exit mode, by its exit status.  Only the client commands are put in, as the docs ask a
user to; a ``pyproject.toml`` beside the client keeps the example count small, as a
client's own ``[tool.stella-conform]`` table may.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import KIT, REPO, kit
from toolchains import build_template

from stella_conform.cli.init import TEMPLATES

#: How the kit is installed: from a clone of its repository, in the folder that holds it.
INSTALL_LINE = "python3 -m pip install ./stella-conform"
#: The client commands the docs' workflow asks a user to change.
ADAPTER, PROGRAM = "./bin/my-client --stella-adapter", "./bin/my-client"


def docs_workflow() -> dict[str, Any]:
    text = (REPO / "docs" / "ci.md").read_text()
    section = text.split("## Gate a release on conformance", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    workflow: dict[str, Any] = yaml.safe_load(block)
    return workflow


def grading_steps() -> list[str]:
    steps = docs_workflow()["jobs"]["conformance"]["steps"]
    return [s["run"] for s in steps if "stella-conform run" in s.get("run", "")]


def test_the_workflow_installs_a_clone_and_grades_adapter_and_program() -> None:
    steps = docs_workflow()["jobs"]["conformance"]["steps"]
    clone = [s for s in steps if s.get("with", {}).get("path") == "stella-conform"]
    assert len(clone) == 1 and clone[0]["uses"].startswith("actions/checkout@")
    runs = [s["run"].strip() for s in steps if "run" in s]
    assert INSTALL_LINE in runs
    assert runs.index(INSTALL_LINE) < min(
        i for i, r in enumerate(runs) if "stella-conform run" in r
    )
    adapter, program = grading_steps()
    assert "--mode" not in adapter and adapter.rstrip().endswith(ADAPTER)  # auto, run's default
    assert "--mode exit" in program and program.rstrip().endswith(PROGRAM)


def test_one_install_line_in_the_readme_the_ci_docs_the_examples_and_the_action() -> None:
    docs = [REPO / "README.md", REPO / "docs" / "ci.md", *sorted(REPO.glob("examples/*/README.md"))]
    assert len(docs) >= 4
    for doc in docs:
        text = doc.read_text()
        assert INSTALL_LINE in text, doc
        # a package index does not have the kit, and ../.. is one place's path only
        assert "pip install stella-conform" not in text, doc
        assert "pip install ../.." not in text, doc
    assert "example.invalid" not in (REPO / "README.md").read_text()
    action = yaml.safe_load((REPO / "action" / "action.yml").read_text())
    install = next(s for s in action["runs"]["steps"] if "pip install" in s.get("run", ""))
    # the action's own checkout is a clone of the repository: ACTION_PATH/.. is its root
    assert install["run"].endswith('install --quiet "$ACTION_PATH/.."'), install["run"]
    root = (REPO / "action" / "..").resolve()
    assert 'name = "stella-conform"' in (root / "pyproject.toml").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(TEMPLATES))
def test_the_docs_workflow_as_written_grades_every_template(language: str, tmp_path: Path) -> None:
    folder = tmp_path / "client"
    assert kit("init", language, str(folder)).returncode == 0
    build_template(language, folder)
    (folder / "pyproject.toml").write_text("[tool.stella-conform]\nexamples = 1\n")
    command = list(TEMPLATES[language].command)
    if command[0] == "python3":
        command[0] = sys.executable  # the venv's: a python3 shim costs 0.1 s a case
    client = shlex.join(command)
    env = dict(os.environ)
    env["PATH"] = f"{KIT.parent}{os.pathsep}{env['PATH']}"
    outputs = []
    for step, script in enumerate(grading_steps()):
        script = script.replace(ADAPTER, client).replace(PROGRAM, client)
        env["GITHUB_STEP_SUMMARY"] = str(tmp_path / f"summary-{step}.md")  # one a step
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=folder, env=env,
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        outputs.append(done.stdout)
    assert (
        "mode persistent (--mode auto: its hello lists the modes report, persistent)"
        in (outputs[0])
    )
    assert "(the client ran in exit mode)" in outputs[1]
    for report in ("stella-report.json", "stella-exit-report.json", "stella-junit.xml"):
        assert (folder / report).is_file(), report
    for step in range(2):
        assert "## stella-conform" in (tmp_path / f"summary-{step}.md").read_text()
