"""Errors that end a command with one clear line and exit status 2."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any


class SetupError(Exception):
    """Bad input to the kit itself: a missing file, a malformed schema, a bad client command.

    The CLI prints ``stella-conform: <message>`` and exits 2, never a traceback.
    """


def read_json_file(path: Path, what: str) -> Any:
    """A JSON file the kit was given (a report, an expectation, a scenario), parsed.

    A missing file is "<what> not found: <path>"; unreadable bytes or JSON are
    "malformed <what> <path>: <why>": both a :class:`SetupError`, so every command
    that reads files answers bad input the same way.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetupError(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SetupError(f"malformed {what} {path}: {exc}") from None


def read_toml_file(path: Path, what: str) -> dict[str, Any]:
    """A TOML file the kit was given (a matrix config, a known-failures list), parsed.

    The same two messages as :func:`read_json_file`.
    """
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetupError(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SetupError(f"malformed {what} {path}: {exc}") from None
