"""The source tree is the package: the wheel maps it one to one, an editable install sees it.

``src/stella_conform/{schemas,generators,conformance,fixtures,adapters}`` are committed
links to the top-level folders the design names.  These tests hold the two promises
that arrangement makes: a wheel holds exactly the tree's files under ``stella_conform/``
(nothing lost, nothing doubled, the broken test clients left out), and an editable install
imports every subpackage from the checkout itself.  The links also make the layers
importable from the repository root under a bare name (``conformance.suite``); each layer
refuses that name, so no module is ever loaded twice with two states.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

LINKED = ("schemas", "generators", "conformance", "fixtures", "adapters")
#: Layers that are Python packages, and so could be imported under a second name.
LAYERS = ("schemas", "generators", "conformance")
#: Test data: clients that break one rule each, never shipped.
NOT_SHIPPED = "adapters/broken/"


def _pip(*args: str, cwd: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _tree_files() -> set[str]:
    """Files of the checkout that the build should ship, by the git index (plus new files)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return {name for name in listed.split("\0") if name and (REPO / name).is_file()}


def test_links_point_at_the_top_level_folders() -> None:
    for name in LINKED:
        link = REPO / "src" / "stella_conform" / name
        assert link.is_symlink(), f"{link} should be a committed link"
        assert link.resolve() == (REPO / name).resolve()


def test_wheel_holds_the_tree_mapped_one_to_one(tmp_path: Path) -> None:
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), ".", cwd=REPO)
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        shipped = [n for n in zf.namelist() if ".dist-info/" not in n]
    assert len(shipped) == len(set(shipped)), "a file is in the wheel twice"
    expected = set()
    for name in _tree_files():
        top = name.split("/", 1)[0]
        if top in LINKED and not name.startswith(NOT_SHIPPED):
            expected.add(f"stella_conform/{name}")
        elif name.startswith("src/stella_conform/"):
            expected.add(name.removeprefix("src/"))
    assert set(shipped) == expected
    assert not [n for n in shipped if "/adapters/broken/" in n], "a broken client is shipped"
    assert "stella_conform/adapters/python/reference_client.py" in shipped
    assert any(n.startswith("stella_conform/adapters/templates/") for n in shipped)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_refuses_its_bare_name(layer: str) -> None:
    """From the repository root, ``import conformance`` would find the folder itself."""
    out = subprocess.run(
        [sys.executable, "-c", f"import {layer}"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode != 0
    assert f"stella_conform.{layer}" in out.stderr, out.stderr


def test_every_module_loads_under_one_name_from_the_repository_root() -> None:
    """Everything the kit has, imported with the repository root first on ``sys.path``:
    every module loaded from the kit's folders is named ``stella_conform.…``."""
    probe = """
import importlib, json, os, pkgutil, sys
import stella_conform
for info in pkgutil.walk_packages(stella_conform.__path__, "stella_conform."):
    if ".adapters" in info.name or ".fixtures" in info.name:
        continue
    importlib.import_module(info.name)
roots = [os.path.realpath(p) for p in (*sys.argv[1:],)]
seen = {}
for name, module in list(sys.modules.items()):
    file = getattr(module, "__file__", None)
    if file and os.path.realpath(file).startswith(tuple(roots)):
        seen[name] = file
print(json.dumps(seen))
"""
    roots = [str(REPO / name) for name in (*LAYERS, "src")]
    # the checkout's package first (a wheel in site-packages would hide the checkout), and
    # the repository root on the path as well, where the bare layer names are found
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    out = subprocess.run(
        [sys.executable, "-c", probe, *roots],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    import json

    modules = json.loads(out.stdout)
    assert "stella_conform.conformance.suite" in modules
    second = sorted(name for name in modules if not name.startswith("stella_conform"))
    assert not second, f"loaded under a second name: {second}"


@pytest.mark.slow
def test_editable_install_imports_every_subpackage_from_the_checkout(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # the kit's dependencies come from this test environment, which may hold the kit as a
    # wheel too: .pth files are read in name order, so the editable install's path (from
    # "_stella_conform*.pth" / "__editable__*") goes before this one's
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _pip(
        "--python", str(python), "install", "-q", "--no-deps", "--no-build-isolation",
        "-e", ".", cwd=REPO,
    )  # fmt: skip
    probe = """
import importlib, json, pkgutil, stella_conform
seen = {}
for info in pkgutil.walk_packages(stella_conform.__path__, "stella_conform."):
    if ".adapters" in info.name or ".fixtures" in info.name:
        continue  # programs and data, not modules of the kit
    seen[info.name] = importlib.import_module(info.name).__file__
print(json.dumps(seen))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    import json

    modules = json.loads(out.stdout)
    for package in ("schemas", "generators", "conformance", "cli"):
        assert f"stella_conform.{package}" in modules
    assert "stella_conform.conformance.checks" in modules
    checkout = str(REPO / "src" / "stella_conform")
    outside = {m: f for m, f in modules.items() if not f.startswith(checkout)}
    assert not outside, f"imported from outside the checkout: {outside}"
