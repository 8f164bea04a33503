"""The error taxonomy and the exit statuses every command ends with.

A command ends in one of five ways, each with its own status, so a CI step can tell a
verdict from a mistake: 0 the thing checked is right, 1 it is wrong (a failing check, a
stream a client must reject, a regression), 2 bad input to the kit (:class:`SetupError`:
one clear line, never a traceback), 3 a bug in the kit itself, 128 + N stopped by signal N.
:func:`exit_status` decides one run's status and :func:`combined_exit_status` the status of
many runs taken together (a matrix's cells, a merged report's shards), by one precedence:
stopped, then setup error, then failed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stella_conform.safe_files import DOCUMENT_CAP, RefusedFile, read_regular

#: Every required check passed (or is a listed known failure).
PASSED = 0
#: The thing checked is wrong: never used for a mistake of the user's or the kit's.
FAILED = 1
#: Bad input to the kit: a usage error, a missing file, a client that cannot be graded.
SETUP_ERROR = 2
#: A bug in the kit: never 1, which reads as a verdict, nor 2, which blames the input.
INTERNAL_ERROR = 3
#: The lowest status of a stopped run: 128 + the signal that stopped it (or that killed
#: one of its workers). A status from here up is a stop's, whatever was graded before.
STOPPED = 128
#: The output's reader left (``stella-conform … | head``): the status of a process the
#: pipe's signal ends (128 + SIGPIPE), as a shell shows it; the run did not end, it was cut.
OUTPUT_CLOSED = STOPPED + 13


def exit_status(*, error: bool = False, stopped: int | None = None, failing: bool = False) -> int:
    """One run's status: a stop first (whatever was graded before it is not a whole run,
    and a CI step must see that it was stopped), then a run that could not grade its
    client at all (what was graded proves nothing), then the verdict."""
    if stopped is not None:
        return stopped
    if error:
        return SETUP_ERROR
    return FAILED if failing else PASSED


def combined_exit_status(statuses: Iterable[int]) -> int:
    """The status of several runs taken as one, by :func:`exit_status`'s precedence: a
    stopped part (the highest signal) makes the whole stopped, a part that could not be
    graded makes it a setup error, any failing part makes it fail."""
    given = list(statuses)
    stops = [s for s in given if s >= STOPPED]
    return exit_status(
        error=SETUP_ERROR in given,
        stopped=max(stops) if stops else None,
        failing=any(s not in (PASSED, SETUP_ERROR) and s < STOPPED for s in given),
    )


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


#: The largest TOML file the kit reads (a matrix config, a known-failures list): written
#: by hand, a few kilobytes; parsed, a TOML document takes several times its size.
TOML_CAP = 1024 * 1024


def _read_document(path: Path, cap: int = DOCUMENT_CAP) -> bytes:
    """A regular file of at most ``cap`` bytes: a FIFO, ``/dev/zero`` or a file too big
    for a document is refused at once, never waited on or read whole."""
    return read_regular(path, cap)


def read_toml_file(path: Path, what: str) -> dict[str, Any]:
    """A TOML file the kit was given (a matrix config, a known-failures list), parsed.

    The same two messages as :func:`read_json_file`.
    """
    try:
        return tomllib.loads(_read_document(path, TOML_CAP).decode("utf-8"))
    except FileNotFoundError:
        raise SetupError(f"{what} not found: {path}") from None
    except RefusedFile as exc:
        raise SetupError(f"cannot read {what}: {exc}") from None
    except RecursionError:
        raise SetupError(f"malformed {what} {path}: nested too deeply") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is one
        raise SetupError(f"malformed {what} {path}: {exc}") from None
