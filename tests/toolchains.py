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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "adapters" / "broken"))
# the one Go and Rust build (for Rust: the offline config, the shared target folder and its
# lock), the broken clients' own
from builds import CARGO_TARGET, DEBIAN_REGISTRY, OFFLINE_CONFIG, Unavailable, debian_crates
from builds import cargo_build as _cargo_build
from builds import go_build as _go_build

#: Where .ci/run puts what it installs outside the system (git-ignored).
TOOLCHAINS = REPO / ".ci" / ".toolchains"


#: Where .ci/run installs TypeScript and the Node.js types (a folder holding node_modules).
TS_TOOLCHAIN = Path(os.environ.get("STELLA_CONFORM_TS_TOOLCHAIN", TOOLCHAINS / "ts"))


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


def build_template(language: str, folder: Path) -> None:
    """Build a template ``stella-conform init`` wrote into ``folder`` the way its ``next:``
    steps say, with the local toolchain (Python: nothing; TypeScript: tsc and @types/node
    from :data:`TS_TOOLCHAIN`, linked in where ``npm install`` would put them; Go: go build;
    Rust: cargo with Debian's serde crates, offline)."""
    if language == "go":
        go_build(folder, "stella-adapter")
    elif language == "rust":
        cargo_build(folder, "stella-adapter")
    elif language == "typescript":
        modules = TS_TOOLCHAIN / "node_modules"
        if shutil.which("node") is None or not (modules / "typescript").is_dir():
            missing(f"no node or no TypeScript toolchain at {TS_TOOLCHAIN}")
        (folder / "node_modules").symlink_to(modules)  # what `npm install` would bring
        tsc = [shutil.which("node") or "node", str(modules / "typescript" / "bin" / "tsc")]
        done = subprocess.run(
            [*tsc, "-p", "."], cwd=folder, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr


__all__ = [
    "CARGO_TARGET",
    "DEBIAN_REGISTRY",
    "OFFLINE_CONFIG",
    "TOOLCHAINS",
    "TS_TOOLCHAIN",
    "build_template",
    "cargo_build",
    "debian_crates",
    "go_build",
    "missing",
]
