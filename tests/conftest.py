"""Shared test fixtures: paths to the repository, the shared upstream inputs, clients."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _upstream_dir() -> Path:
    env = os.environ.get("STELLA_CONFORM_UPSTREAM")
    return Path(env) if env else REPO.parent / "shared" / "upstream"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def upstream_dir() -> Path:
    path = _upstream_dir()
    if not (path / "agentevent.schema.json").is_file():
        pytest.skip(f"upstream reference inputs not present at {path}")
    return path


@pytest.fixture(scope="session")
def wire_schema(upstream_dir: Path) -> Path:
    return upstream_dir / "agentevent.schema.json"


KIT = Path(sys.executable).parent / "stella-conform"
ADAPTERS = REPO / "adapters"
PY_REFERENCE = (sys.executable, str(ADAPTERS / "python" / "reference_client.py"))
NODE_REFERENCE = ("node", str(ADAPTERS / "node" / "reference_client.js"))
JQ_REFERENCE = ("sh", str(ADAPTERS / "shell" / "jq_client.sh"))


def kit(
    *args: str, cwd: Path | None = None, timeout: float = 600, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed stella-conform console script."""
    return subprocess.run(
        [str(KIT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        input=stdin.decode() if stdin is not None else None,
    )
