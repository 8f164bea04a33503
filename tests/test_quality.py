"""ruff and mypy stay clean: CI runs them as part of the suite, not only in tox."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = BIN / name
    if not found.exists():
        found_on_path = shutil.which(name)
        if not found_on_path:
            pytest.skip(f"{name} not installed")
        return found_on_path
    return str(found)


def test_ruff_clean() -> None:
    out = subprocess.run(
        [tool("ruff"), "check", "--no-cache", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_mypy_clean() -> None:
    out = subprocess.run(
        ["bash", "scripts/typecheck"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={"MYPY": tool("mypy"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
