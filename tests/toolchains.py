"""Building clients in other languages for the tests: toolchains found, or the test skipped.

A missing toolchain skips its test here and fails under ``.ci/run``, which installs them
all from Debian or npm (``STELLA_CONFORM_REQUIRE_TOOLCHAINS``).

Rust builds offline: ``.ci/run`` installs cargo and Debian's serde crates
(``librust-serde-derive-dev``, ``librust-serde-json-dev``), whose sources sit under
``/usr/share/cargo/registry``; a project is pointed at them by a ``.cargo/config.toml``
beside its ``Cargo.toml`` (a directory source in place of crates.io).  Every Rust project
of a test session builds into one shared target folder, so serde and serde_json are
compiled once per machine, not once per project (a first build of them is about a minute
of CPU here, a rebuild of a project on top of them a second or two).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "adapters" / "broken"))
# the one Go and Rust build (for Rust: the offline config, the shared target folder and its
# lock), the broken clients' own
from builds import CARGO_TARGET, DEBIAN_REGISTRY, Unavailable, debian_crates
from builds import cargo_build as _cargo_build
from builds import go_build as _go_build

#: Where .ci/run puts what it installs outside the system (git-ignored).
TOOLCHAINS = REPO / ".ci" / ".toolchains"


def missing(reason: str) -> None:
    """Skip (or, under .ci/run, fail) a test whose toolchain is not installed."""
    if os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        pytest.fail(f"{reason}, and STELLA_CONFORM_REQUIRE_TOOLCHAINS is set (.ci/run)")
    pytest.skip(f"{reason} (.ci/run installs it)")


def cargo_build(folder: Path, binary: str) -> Path:
    """``cargo build --release`` in ``folder`` (adapters/broken/builds.py's build); the
    binary is left at ``folder/target/release/BINARY``, where the project's own build
    would put it.  A missing toolchain skips the test (fails it under .ci/run)."""
    built = folder / "target" / "release"
    try:
        _cargo_build(folder, [binary], built)
    except Unavailable as exc:
        missing(str(exc))
    return built / binary


def go_build(folder: Path, output: str) -> None:
    """``go build -o OUTPUT .`` in ``folder`` (adapters/broken/builds.py's build)."""
    try:
        _go_build(folder, output)
    except Unavailable as exc:
        missing(str(exc))


__all__ = [
    "CARGO_TARGET",
    "DEBIAN_REGISTRY",
    "TOOLCHAINS",
    "cargo_build",
    "debian_crates",
    "go_build",
    "missing",
]
