"""Replay commands that work where they are pasted: another folder, a CI artifact, a laptop.

A replay line is copied out of a report (a terminal, ``matrix.md``, a JUnit file) and run
somewhere else.  So it names nothing that only holds on the machine that wrote it:

* a bundled fixture by its name, ``fixture:missing_type`` (the kit that replays it finds it
  in its own installation), not by a ``site-packages/...`` path;
* every other path relative to the working folder the run was started from, when it is
  inside that folder (a failure saved under ``matrix-report/failures/``, a matrix's
  ``--cwd``, a wire schema); paths outside it stay absolute;
* the kit as ``stella-conform`` only when that script is on ``PATH``; otherwise as
  ``python3 -m stella_conform`` (or the interpreter's own path, when the ``python3`` on
  ``PATH`` is another one).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from stella_conform.conformance.kinds import KINDS
from stella_conform.errors import SetupError
from stella_conform.oracle.corpus import bundled_fixtures_dir

FIXTURE_PREFIX = "fixture:"


def _suffixes() -> list[str]:
    """What a bundled fixture's file name ends in, by kind, the longest first (its name is
    the rest)."""
    return sorted(dict.fromkeys(k.suffix for k in KINDS.values()), key=len, reverse=True)


def _folders() -> tuple[str, ...]:
    """The folders of the bundled corpus a fixture name may start with (the kinds')."""
    return tuple(dict.fromkeys(k.fixture_folder for k in KINDS.values() if k.fixture_folder))


def fixture_name(path: Path | str) -> str | None:
    """``fixture:NAME`` for a file of the bundled corpus, else None."""
    try:
        relative = Path(path).resolve().relative_to(bundled_fixtures_dir().resolve())
    except ValueError:
        return None
    text = relative.as_posix()
    for suffix in _suffixes():
        if text.endswith(suffix):
            return FIXTURE_PREFIX + text[: -len(suffix)]
    return None


def resolve_fixture(spec: str) -> Path:
    """The bundled file ``fixture:NAME`` names; :class:`~stella_conform.errors.SetupError`
    when there is none."""
    name = spec.removeprefix(FIXTURE_PREFIX)
    parts = name.split("/")
    folders = _folders()
    if (
        not name
        or any(p in ("", ".", "..") for p in parts)
        or (len(parts) > 1 and (len(parts) > 2 or parts[0] not in folders))
    ):
        raise SetupError(
            f"{spec!r}: a bundled fixture is fixture:NAME or fixture:FOLDER/NAME "
            f"(FOLDER one of {', '.join(folders)})"
        )
    root = bundled_fixtures_dir()
    for suffix in ("", *_suffixes()):
        candidate = root / (name + suffix)
        if candidate.is_file() and not candidate.name.endswith(".expect.json"):
            return candidate
    raise SetupError(f"no bundled fixture named {name!r} (they are in {root})")


def case_argument(text: str) -> Path:
    """A replay's CASE argument: a file, or a bundled fixture's ``fixture:NAME``."""
    return resolve_fixture(text) if text.startswith(FIXTURE_PREFIX) else Path(text)


def portable_path(path: Path | str, base: Path | None = None) -> str:
    """A path as a replay line writes it: ``fixture:NAME`` for the bundled corpus, relative
    to ``base`` (the working folder) when inside it, absolute otherwise."""
    if str(path).startswith(FIXTURE_PREFIX):
        return str(path)
    named = fixture_name(path)
    if named is not None:
        return named
    here = (base or Path.cwd()).resolve()
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(here).as_posix() or "."
    except ValueError:
        pass
    try:
        return Path(path).resolve().relative_to(here).as_posix() or "."
    except ValueError:
        return str(path)


def program_inside(program: str, folder: str) -> str:
    """A command's program as seen from the folder the client starts in: an absolute path
    inside that folder becomes ``./relative`` (a bare name would be looked up on PATH)."""
    if not os.path.isabs(program):
        return program
    try:
        relative = Path(program).relative_to(Path(folder).resolve()).as_posix()
    except ValueError:
        try:
            relative = Path(program).relative_to(folder).as_posix()
        except ValueError:
            return program
    return relative if "/" in relative else f"./{relative}"


def kit_command() -> list[str]:
    """How a replay line starts the kit: the script on PATH, else the module."""
    if shutil.which("stella-conform"):
        return ["stella-conform"]
    here = os.path.abspath(sys.executable)
    for name in ("python3", "python"):
        found = shutil.which(name)
        if found and _same_interpreter(os.path.abspath(found), here):
            return [name, "-m", "stella_conform"]
    return [portable_path(sys.executable), "-m", "stella_conform"]


def _same_interpreter(a: str, b: str) -> bool:
    """The same program in the same folder: a venv's ``python`` and ``python3`` are one
    interpreter; the system's ``python3`` is another, though both link to one binary."""
    try:
        return os.path.dirname(a) == os.path.dirname(b) and os.path.samefile(a, b)
    except OSError:
        return False
