"""How to run each broken client, building the compiled ones (Go, Rust) once.

A broken client is named by its path under ``adapters/broken/`` (``targets.json``'s
keys): a ``.py`` file runs under this interpreter, a ``.js`` file under Node.js,
``go/NAME`` is the Go program in ``go/NAME/`` and ``rust/NAME`` the Rust binary of
``rust/src/bin/NAME.rs``.  The compiled ones are built into
``.ci/.toolchains/broken/`` (git-ignored), in a folder named by a digest of their
sources and the toolchain's version, under a file lock: the first test (or power
worker) that needs a language builds all of its clients, every later one in any process
reuses them, until a source changes.  Rust builds offline against Debian's serde crates
(``librust-serde-json-dev``, installed by ``.ci/run``) into the target folder the tests'
other Rust builds share, so serde is compiled once per machine.

    from builds import command
    subprocess.run(command("go/bufio_scanner_64k"), input=stream)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOOLCHAINS = REPO / ".ci" / ".toolchains"
BUILDS = Path(os.environ.get("STELLA_CONFORM_BROKEN_BUILDS", TOOLCHAINS / "broken"))
CARGO_TARGET = Path(os.environ.get("STELLA_CONFORM_CARGO_TARGET", TOOLCHAINS / "cargo-target"))
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
OFFLINE_CONFIG = f"""\
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "{DEBIAN_REGISTRY}"
[net]
offline = true
"""
BUILD_TIMEOUT = 900


class Unavailable(Exception):
    """The client's toolchain is not installed (``.ci/run`` installs it)."""


def language(client: str) -> str:
    if client.startswith("go/"):
        return "go"
    if client.startswith("rust/"):
        return "rust"
    if client.startswith("shell/"):
        return "shell"
    return "node" if client.endswith(".js") else "python"


def command(client: str) -> list[str]:
    """The argv that runs a broken client (building it first when it is compiled)."""
    kind = language(client)
    if kind == "python":
        return [sys.executable, str(HERE / client)]
    if kind == "node":
        if shutil.which("node") is None:
            raise Unavailable("no node")
        return ["node", str(HERE / client)]
    if kind == "shell":  # a POSIX sh script around jq, in exit-code mode
        if shutil.which("jq") is None:
            raise Unavailable("no jq")
        return ["sh", str(HERE / client)]
    name = client.split("/", 1)[1]
    binary = (build_go() if kind == "go" else build_rust()) / name
    if not binary.is_file():
        raise FileNotFoundError(f"{client}: no such {kind} client (built: {binary.parent})")
    return [str(binary)]


def _digest(folder: Path, *versions: str) -> str:
    digest = hashlib.sha256("\0".join(versions).encode())
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "target" not in path.relative_to(folder).parts:
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _version(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip()


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed in {cwd}:\n{done.stdout}{done.stderr}")


def _prune(kind: str, keep: Path) -> None:
    """Earlier builds of a language (their sources changed since): nothing runs them now."""
    for old in BUILDS.glob(f"{kind}-*"):
        if old != keep and not old.name.startswith(f"{kind}-building-"):
            shutil.rmtree(old, ignore_errors=True)


def go_build(folder: Path, output: str, packages: str = ".") -> None:
    """``go build -o OUTPUT PACKAGES`` in ``folder``: the one Go build of the tests and
    benchmarks (``tests/toolchains.py``'s template builds too).  Standard library only,
    so no module is fetched (``-mod=mod``: no go.sum needed)."""
    go = shutil.which("go")
    if go is None:
        raise Unavailable("no go")
    _run([go, "build", "-o", output, packages], folder, {**os.environ, "GOFLAGS": "-mod=mod"})


#: The templates ``stella-conform init`` writes: the broken Go and Rust clients read with
#: their rules (what a line must be, the known bodies, the legacy spellings), compiled in.
TEMPLATES = REPO / "adapters" / "templates"


def go_template_rules() -> str:
    """The Go template as a file of the broken clients' ``reader`` package: the same source,
    its package renamed (its ``main`` is then an ordinary function nothing calls)."""
    text = (TEMPLATES / "go" / "stella_adapter.go").read_text()
    lines = text.split("\n")
    at = lines.index("package main")
    lines[at] = "package reader"
    head = "// Code copied from adapters/templates/go/stella_adapter.go by builds.py. DO NOT EDIT."
    return head + "\n\n" + "\n".join(lines)


def rust_template_rules() -> str:
    """The Rust template as ``src/template.rs`` of the broken clients, which each
    ``include!``: the same source, its inner doc comments made plain comments (an
    included file may not hold inner attributes) and its ``main`` renamed (each client has
    its own)."""
    text = (TEMPLATES / "rust" / "stella_adapter.rs").read_text()
    lines = ["//" + line[3:] if line.startswith("//!") else line for line in text.split("\n")]
    at = lines.index("fn main() {")
    lines[at] = "fn template_main() {"
    head = (
        "// Code copied from adapters/templates/rust/stella_adapter.rs by builds.py. DO NOT EDIT."
    )
    return head + "\n\n" + "\n".join(lines)


def build_go() -> Path:
    """The folder holding every Go broken client, built (once) with ``go build`` from
    ``go/`` and the template's rules (:func:`go_template_rules`)."""
    go = shutil.which("go")
    if go is None:
        raise Unavailable("no go")
    source = HERE / "go"
    rules = go_template_rules()
    out = BUILDS / f"go-{_digest(source, _version([go, 'version']), rules)}"
    with _locked(BUILDS / "go.lock"):
        if (out / ".built").exists():
            return out
        with tempfile.TemporaryDirectory(dir=BUILDS, prefix="go-building-") as tmp:
            project, bin_dir = Path(tmp) / "project", Path(tmp) / "bin"
            shutil.copytree(source, project)
            (project / "reader" / "template.go").write_text(rules)
            go_build(project, str(bin_dir) + os.sep, "./...")
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(bin_dir, out)
        (out / ".built").touch()
        _prune("go", out)
    return out


def debian_crates() -> bool:
    """Whether Debian's serde crates are installed (then every build is offline against them)."""
    return any(DEBIAN_REGISTRY.glob("serde_json-*"))


def cargo_build(project: Path, binaries: Iterable[str], into: Path) -> None:
    """``cargo build --release --bins`` in ``project``, each of ``binaries`` copied into
    ``into``: the one Rust build of the tests and benchmarks (``tests/toolchains.py``'s
    template builds too).

    Offline against Debian's crates when they are installed (a ``.cargo/config.toml`` is
    written into ``project``, a folder the caller owns), into the target folder every
    Rust build shares, under its lock: serde is compiled once per machine, and a binary
    is copied out before another project's build of the same name replaces it.  Without
    Debian's crates cargo needs crates.io; a build that then fails is a missing toolchain.
    """
    cargo = shutil.which("cargo")
    if cargo is None:
        raise Unavailable("no cargo")
    debian = debian_crates()
    if debian:
        (project / ".cargo").mkdir(exist_ok=True)
        (project / ".cargo" / "config.toml").write_text(OFFLINE_CONFIG)
    elif os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        raise Unavailable(f"no serde crates under {DEBIAN_REGISTRY} (.ci/run installs them)")
    env = {**os.environ, "CARGO_TARGET_DIR": str(CARGO_TARGET), "CARGO_TERM_COLOR": "never"}
    with _locked(CARGO_TARGET.with_name("cargo-target.lock")):
        try:
            _run([cargo, "build", "--release", "--quiet", "--bins"], project, env)
        except RuntimeError as exc:
            if debian:
                raise
            raise Unavailable(f"cargo could not build without Debian's crates: {exc}") from exc
        into.mkdir(parents=True, exist_ok=True)
        for binary in binaries:
            shutil.copy2(CARGO_TARGET / "release" / binary, into / binary)


def build_rust() -> Path:
    """The folder holding every Rust broken client, built (once) with :func:`cargo_build`."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise Unavailable("no cargo")
    source = HERE / "rust"
    rustc = shutil.which("rustc") or "rustc"
    versions = (_version([cargo, "--version"]), _version([rustc, "--version"]))
    rules = rust_template_rules()
    out = BUILDS / f"rust-{_digest(source, *versions, str(debian_crates()), rules)}"
    with _locked(BUILDS / "rust.lock"):
        if (out / ".built").exists():
            return out
        with tempfile.TemporaryDirectory(dir=BUILDS, prefix="rust-building-") as tmp:
            project = Path(tmp) / "project"
            # a copy without a lock file: a Cargo.lock one cargo wrote another may not read
            shutil.copytree(source, project, ignore=shutil.ignore_patterns("target", "*.lock"))
            (project / "src" / "template.rs").write_text(rules)
            binaries = [rs.stem for rs in sorted((source / "src" / "bin").glob("*.rs"))]
            cargo_build(project, binaries, Path(tmp) / "bin")
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(Path(tmp) / "bin", out)
        (out / ".built").touch()
        _prune("rust", out)
    return out


__all__ = [
    "Unavailable",
    "build_go",
    "build_rust",
    "cargo_build",
    "command",
    "debian_crates",
    "go_build",
    "go_template_rules",
    "language",
    "rust_template_rules",
]
