"""What the native test runners' example projects must list, and how the tests run them.

Each runner under ``adapters/runners/`` (npm for node:test and vitest, a Go module, a
Rust crate) has an example project that grades a client through it.  The tests copy a
runner with its example into a scratch folder (nothing is written into the checkout), run
the example's own test command there with this checkout's ``stella-conform`` first on
``PATH``, and read the listed tests back.  The oracle is never the runner itself: the
checks a broken client must fail come from ``adapters/broken/targets.json``, and the
checks listed and each failure's text from the kit's own JSON report of the same run.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import ADAPTERS, REPO

RUNNERS = REPO / "adapters" / "runners"
#: Generated cases per check in the examples: the listing is the point, not the search.
EXAMPLES = 3
#: The broken client the red runs grade, and the reference the green runs grade.
BROKEN = "fails_on_torn_final_line.py"
BROKEN_CLIENT = (sys.executable, str(ADAPTERS / "broken" / BROKEN))
REFERENCE_CLIENT = (sys.executable, str(ADAPTERS / "python" / "reference_client.py"))
#: Seconds a runner's whole test command may take (a first Rust build included).
COMMAND_TIMEOUT = 900


def copy_runner(language: str, into: Path) -> Path:
    """The runner of ``language`` copied into ``into`` where it sits in the repository
    (``adapters/runners/LANGUAGE``, beside a link to ``adapters/python``, where the
    examples find the reference client); its example project's folder."""
    target = into / "adapters" / "runners" / language
    (into / "adapters").mkdir(exist_ok=True)
    if not (into / "adapters" / "python").exists():
        (into / "adapters" / "python").symlink_to(ADAPTERS / "python")
    shutil.copytree(
        RUNNERS / language,
        target,
        ignore=shutil.ignore_patterns("node_modules", "target", "Cargo.lock", ".stella-conform"),
    )
    return target / "example"


def environment(client: tuple[str, ...] | None = None, **more: str) -> dict[str, str]:
    """The environment a user's shell would have: this checkout's kit on ``PATH`` (the
    runners' default kit), and ``STELLA_CONFORM_CLIENT`` when a client other than the
    example's own is graded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STELLA_CONFORM_CLIENT")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("STELLA_CONFORM_KIT", None)
    if client is not None:
        env["STELLA_CONFORM_CLIENT"] = " ".join(client)
    env.update(more)
    return env


#: A terminal's colour and style escapes: vitest writes them under ``CI=true`` (as on a CI
#: machine) even into a pipe.
COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A test command, its stdout and stderr together as a terminal shows them, without
    the colours a runner adds where it thinks it is on CI."""
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    done.stdout = COLOURS.sub("", done.stdout)
    return done


def must_fail(client: str = BROKEN) -> set[str]:
    """The checks a broken client must fail (``targets.json``)."""
    targets = json.loads((ADAPTERS / "broken" / "targets.json").read_text())
    return set(targets["clients"][client])


@functools.cache
def kit_report(client: tuple[str, ...]) -> dict:
    """The kit's own JSON report of ``client``, graded as the examples grade it."""
    with tempfile.TemporaryDirectory(prefix="stella-runner-oracle-") as folder:
        argv = ["stella-conform", "run", "--examples", str(EXAMPLES), "--json", "report.json"]
        out = run([*argv, "--color", "never", "--", *client], Path(folder), environment())
        assert out.returncode in (0, 1), out.stdout
        return json.loads((Path(folder) / "report.json").read_text())


def outcomes(report: dict) -> dict[str, str]:
    """Each check's outcome in a kit report."""
    return {c["id"]: c["outcome"] for c in report["checks"]}


def said_in_order(text: str, output: str) -> None:
    """Every non-blank line of ``text`` appears in ``output``, in order (a runner may
    indent the failure message or prefix its first line)."""
    at = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        found = output.find(line.strip(), at)
        assert found >= 0, f"not shown (in order): {line.strip()!r}\n--- output:\n{output}"
        at = found + len(line.strip())


__all__ = [
    "BROKEN",
    "BROKEN_CLIENT",
    "EXAMPLES",
    "REFERENCE_CLIENT",
    "RUNNERS",
    "copy_runner",
    "environment",
    "kit_report",
    "must_fail",
    "outcomes",
    "run",
    "said_in_order",
]


#: A client command that does not exist: the kit's setup error (exit 2), and what it says.
NO_CLIENT = ("./no-such-client",)
SETUP_ERROR_SAID = ("exit 2: a setup error", "client not found: ./no-such-client")
#: What a runner says when the kit itself cannot be started.
MISSING_KIT_SAID = ("the kit was not found", "STELLA_CONFORM_KIT")


def one_failing_kit_test(
    out: subprocess.CompletedProcess[str], tests: dict[str, str], said: tuple[str, ...]
) -> None:
    """A run the kit could not grade is one failing ``stella-conform`` test, never a list of
    checks, and the runner's output says why."""
    assert out.returncode != 0, out.stdout
    assert tests == {"stella-conform": "fail"}
    for words in said:
        assert words in out.stdout
