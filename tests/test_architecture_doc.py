"""docs/architecture.md names only modules and folders the repository has.

The page is a map a reader follows to a file; a path it names that a move left behind
sends them nowhere, so every path in backquotes is checked against the checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
#: A path in backquotes: a folder (``a/b/``), a file in one (``a/b.py``), or a module
#: named alone (``b.py``), which fails: a reader opens the path as written.
PATH = re.compile(r"`(\w[\w.-]*/(?:[\w.-]+/)*(?:[\w.-]+\.\w+)?|\w[\w.-]*\.py)`")


def named_paths() -> list[str]:
    return sorted(set(PATH.findall(DOC.read_text(encoding="utf-8"))))


def test_the_page_names_paths() -> None:
    names = named_paths()
    assert "conformance/clients/process.py" in names
    assert len(names) > 20


def test_every_path_the_page_names_exists() -> None:
    missing = [name for name in named_paths() if not (REPO / name).exists()]
    assert not missing, f"docs/architecture.md names paths the repository lacks: {missing}"
