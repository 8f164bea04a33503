"""``generators/engine/`` is the one layer of the kit that reaches Hypothesis's internals.

Hypothesis's internals move between releases; with one layer touching them, a release that
moves one breaks one package, whose tests say where.  Every module of the kit is parsed:
an import of ``hypothesis.internal…``, or an attribute Hypothesis keeps on a test
(``_hypothesis_internal…``), anywhere else names its module here.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import stella_conform

ENGINE = "generators/engine/"
KIT = Path(stella_conform.__file__).parent


def _internal(name: str) -> bool:
    return name == "hypothesis.internal" or name.startswith("hypothesis.internal.")


def reaches(tree: ast.AST) -> list[str]:
    """What a module reaches of Hypothesis's internals, as written in it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _internal(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [node.module] if _internal(node.module) else filter(_internal, names)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_hypothesis_internal"):
            found.append(node.attr)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("_hypothesis_internal")
        ):
            found.append(node.value)  # getattr(test, "_hypothesis_internal_…")
    return found


def reaching(root: Path) -> dict[str, list[str]]:
    """Each module under ``root`` (the kit's layers are links: followed) that reaches
    Hypothesis's internals, by its path under ``root``, and what it reaches."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(folder, name)
            module = path.relative_to(root).as_posix()
            got = reaches(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
            if got:
                found[module] = got
    return found


def test_only_the_engine_reaches_hypothesis_internals() -> None:
    outside = {m: got for m, got in reaching(KIT).items() if not m.startswith(ENGINE)}
    assert not outside, (
        "only generators/engine/ may reach Hypothesis's internals; give the engine a "
        f"function for what these modules need: {outside}"
    )


def test_the_engine_s_own_reach_is_seen() -> None:
    """The walk follows the layers' links and sees the engine's imports and attributes
    (so the test above is not passing on an empty tree)."""
    reached = reaching(KIT)
    assert "hypothesis.internal.conjecture.data" in reached[ENGINE + "choices.py"]
    assert "_hypothesis_internal_use_settings" in reached[ENGINE + "internals.py"]


def test_a_module_outside_the_engine_that_reaches_in_is_named(tmp_path: Path) -> None:
    (tmp_path / "generators" / "engine").mkdir(parents=True)
    (tmp_path / "generators" / "engine" / "fine.py").write_text(
        "from hypothesis.internal.conjecture.data import ConjectureData\n"
    )
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "imports.py").write_text(
        "import hypothesis.internal.reflection as r\nfrom hypothesis import internal\n"
    )
    (tmp_path / "conformance" / "imports_from.py").write_text(
        "from hypothesis.internal.conjecture.choice import choice_from_index\n"
    )
    (tmp_path / "conformance" / "attribute.py").write_text(
        "def f(prop):\n    return prop._hypothesis_internal_use_settings\n"
    )
    (tmp_path / "conformance" / "public.py").write_text(
        "from hypothesis import strategies, internals_are_elsewhere\n"
        "import hypothesis.database\n"
        '"""hypothesis.internal is named in prose only."""\n'
    )
    assert reaching(tmp_path) == {
        "conformance/attribute.py": ["_hypothesis_internal_use_settings"],
        "conformance/imports.py": ["hypothesis.internal.reflection", "hypothesis.internal"],
        "conformance/imports_from.py": ["hypothesis.internal.conjecture.choice"],
        "generators/engine/fine.py": ["hypothesis.internal.conjecture.data"],
    }
