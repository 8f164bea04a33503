"""Errors that end a command with one clear line and exit status 2."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from stella_conform.safe_files import DOCUMENT_CAP, RefusedFile, read_regular


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
        data = _read_document(path)
    except FileNotFoundError:
        raise SetupError(f"{what} not found: {path}") from None
    except RefusedFile as exc:
        raise SetupError(f"cannot read {what}: {exc}") from None
    except OSError as exc:
        raise SetupError(f"malformed {what} {path}: {exc}") from None
    return parse_json_file(data, path, what)


def parse_json_file(data: bytes, path: Path, what: str) -> Any:
    """The bytes of a JSON file the kit was given, already read, parsed: bad JSON is
    "malformed <what> <path>: <why>" (:class:`SetupError`), as :func:`read_json_file` says."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise SetupError(f"malformed {what} {path}: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: a huge integer
        raise SetupError(f"malformed {what} {path}: {exc}") from None


def _read_document(path: Path) -> bytes:
    """A regular file of at most :data:`DOCUMENT_CAP` bytes: a FIFO, ``/dev/zero`` or a
    file too big for a document is refused at once, never waited on or read whole."""
    return read_regular(path, DOCUMENT_CAP)


def read_toml_file(path: Path, what: str) -> dict[str, Any]:
    """A TOML file the kit was given (a matrix config, a known-failures list), parsed.

    The same two messages as :func:`read_json_file`.
    """
    try:
        return tomllib.loads(_read_document(path).decode("utf-8"))
    except FileNotFoundError:
        raise SetupError(f"{what} not found: {path}") from None
    except RefusedFile as exc:
        raise SetupError(f"cannot read {what}: {exc}") from None
    except RecursionError:
        raise SetupError(f"malformed {what} {path}: nested too deeply") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is one
        raise SetupError(f"malformed {what} {path}: {exc}") from None
