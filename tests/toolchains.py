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

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

#: Where .ci/run puts what it installs outside the system (git-ignored).
TOOLCHAINS = REPO / ".ci" / ".toolchains"
#: Debian's crate sources (``librust-*-dev``): the offline registry.
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
#: The target folder every Rust build of the tests shares.
CARGO_TARGET = Path(os.environ.get("STELLA_CONFORM_CARGO_TARGET", TOOLCHAINS / "cargo-target"))

OFFLINE_CONFIG = f"""\
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "{DEBIAN_REGISTRY}"
[net]
offline = true
"""


def missing(reason: str) -> None:
    """Skip (or, under .ci/run, fail) a test whose toolchain is not installed."""
    if os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        pytest.fail(f"{reason}, and STELLA_CONFORM_REQUIRE_TOOLCHAINS is set (.ci/run)")
    pytest.skip(f"{reason} (.ci/run installs it)")


def debian_crates() -> bool:
    """Whether Debian's serde crates are installed (then every build is offline against them)."""
    return any(DEBIAN_REGISTRY.glob("serde_json-*"))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One build at a time in the shared target folder (xdist workers build side by side):
    a binary is copied out before another project's build of the same name replaces it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cargo_build(folder: Path, binary: str) -> Path:
    """``cargo build --release`` in ``folder``; the binary is left at
    ``folder/target/release/BINARY``, where the project's own build would put it."""
    cargo = shutil.which("cargo")
    if cargo is None:
        missing("no cargo")
    if debian_crates():
        (folder / ".cargo").mkdir(exist_ok=True)
        (folder / ".cargo" / "config.toml").write_text(OFFLINE_CONFIG)
    elif os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        pytest.fail(f"no serde crates under {DEBIAN_REGISTRY} (.ci/run installs them)")
    env = {**os.environ, "CARGO_TARGET_DIR": str(CARGO_TARGET), "CARGO_TERM_COLOR": "never"}
    with _locked(CARGO_TARGET.with_name("cargo-target.lock")):
        done = subprocess.run(
            [str(cargo), "build", "--release", "--quiet"],
            cwd=folder, capture_output=True, text=True, env=env, timeout=900,
        )  # fmt: skip
        if done.returncode != 0 and not debian_crates():
            missing(f"cargo could not build without Debian's crates: {done.stderr[-500:]}")
        assert done.returncode == 0, done.stdout + done.stderr
        built = folder / "target" / "release" / binary
        built.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CARGO_TARGET / "release" / binary, built)
    return built
