"""Shared test fixtures: paths to the repository, the shared upstream inputs, clients."""

from __future__ import annotations

import os
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
