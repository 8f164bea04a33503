"""Errors that end a command with one clear line and exit status 2."""

from __future__ import annotations

import json
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
