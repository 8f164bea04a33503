"""The ``[tool.stella-conform]`` table of a client's ``pyproject.toml``: option defaults
kept with the client, for ``run``, ``fuzz`` and ``replay``.

The file is the first ``pyproject.toml`` found from the current folder upward; a key is an
option's long flag without its dashes (``max-shrinks``), and its value is checked by the
options model, as the command line's would be. What the command line gives wins::

    [tool.stella-conform]
    mode = "persistent"
    profile = ["reader", "dashboard"]
    examples = 50
    known-failures = "stella-known-failures.toml"

A relative path is relative to the folder of the ``pyproject.toml``, so a command run from
a sub-folder finds the same files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stella_conform.errors import SetupError, read_toml_file
from stella_conform.options.kinds import Problem, Text, Words, from_toml
from stella_conform.options.model import BY_PYPROJECT, OPTIONS, Unset
from stella_conform.safe_files import DOCUMENT_CAP, RefusedFile, read_regular

#: Where the table lives in ``pyproject.toml``.
TABLE = ("tool", "stella-conform")


def find(start: Path) -> Path | None:
    """The first ``pyproject.toml`` in ``start`` or a folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read(start: Path | None = None) -> tuple[Path | None, dict[str, Any]]:
    """The nearest ``pyproject.toml`` and its ``[tool.stella-conform]`` values by the model's
    option names, checked; ``(None, {})`` when there is none (or it has no such table)."""
    path = find(Path.cwd() if start is None else start)
    if path is None:
        return None, {}
    try:
        doc = read_toml_file(path, "pyproject.toml")
    except SetupError:
        if not _mentions_the_table(path):
            return None, {}  # a project file that does not configure the kit is not its business
        raise
    table: Any = doc
    for key in TABLE:
        table = table.get(key, {}) if isinstance(table, dict) else None
    if not isinstance(table, dict):
        raise SetupError(f"{path}: [tool.stella-conform] must be a table")
    return path, values(table, path)


def _mentions_the_table(path: Path) -> bool:
    """Whether an unreadable ``pyproject.toml`` names the kit's table: only then is its
    damage the kit's to report (the user meant to configure the kit there)."""
    try:
        return b"stella-conform" in read_regular(path, DOCUMENT_CAP)
    except (OSError, RefusedFile):
        return False


def values(table: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The table's values by the model's option names; :class:`SetupError` naming the first
    key that is unknown, not settable here, or of a value its option refuses."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        option = BY_PYPROJECT.get(key)
        if option is None:
            raise SetupError(f"{path}: [tool.stella-conform] {_unknown(key)}")
        kind = option.kind
        if isinstance(kind, Text) and isinstance(value, list):
            value = ",".join(str(v) for v in value)  # knows = ["text", "error"]
        try:
            parsed = from_toml(kind, value)
        except Problem as problem:
            raise SetupError(f"{path}: [tool.stella-conform] {key}: {problem}") from None
        out[option.name] = _relative_to(parsed, kind, path.parent)
    return out


def _unknown(key: str) -> str:
    for option in OPTIONS:
        if key in (option.name, option.name.replace("_", "-")) and isinstance(
            option.pyproject, Unset
        ):
            return f"{key} cannot be set here: {option.pyproject.reason}"
    dashed = key.replace("_", "-")
    hint = f" (did you mean {dashed!r}?)" if dashed in BY_PYPROJECT else ""
    return f"unknown key {key!r}{hint}"


def _relative_to(value: Any, kind: Any, base: Path) -> Any:
    """A path the table names, from the table's folder: a folder or an output always, a
    file when there is one there (else the text may be a name: a bundled vocabulary, a
    claim's types), never a URL."""
    want = getattr(kind, "want", None)
    if want is None:
        return value

    def placed(text: str) -> str:
        if "://" in text or Path(text).is_absolute():
            return text
        if want == "file" and not (base / text).exists():
            return text
        return str(base / text)

    if isinstance(kind, Words):
        return tuple(placed(v) for v in value)
    return placed(value)
