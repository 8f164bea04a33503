"""The kit's click types: seconds that are finite, and paths checked as the command line is
read (a FIFO, a socket or a device where a file or a folder goes is a usage error)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


class Seconds(click.FloatRange):
    """A number of seconds of at least ``min``: finite (click's FloatRange takes ``nan``,
    under which a hanging client would be waited for forever, and ``inf``)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def option_name(param: click.Parameter | None) -> str:
    """``--case-cache``, or an argument's ``CONFIG.toml``: how a message names ``param``."""
    if param is None:
        return "a path"
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def refuse_named_path(
    path: str | os.PathLike[str], want: str, what: str, hint: str | None = None
) -> None:
    """A path the user named for ``what`` (an option) that is not what it must be — a FIFO,
    a socket, a device, a file for a folder — is a usage error now, one line naming the
    option (and ``hint``, what to do instead), before anything runs (it would be silently
    unused, or waited on): :func:`stella_conform.safe_files.named_path_problem`, which
    never opens it."""
    from stella_conform.safe_files import named_path_problem

    if os.fspath(path) == "-":
        return
    problem = named_path_problem(path, want)
    if problem is not None:
        if hint and not os.path.isdir(path):
            problem += f" ({hint})"
        raise SetupError(f"{what} {os.fspath(path)}: {problem}")


class KitPath(click.Path):
    """A path option or argument of the kit: ``want`` says what it must be ("folder",
    "file", "output", "folder or file"; see :data:`stella_conform.safe_files.WANTED`),
    checked as the command line is read (:func:`refuse_named_path`). Every path the kit's
    commands take is one, or a :class:`PathIn` (a value that may hold a path), so none can
    forget the check (``test_every_path_option_is_checked``)."""

    def __init__(self, want: str, *, hint: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)
        self.want, self.hint = want, hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        refuse_named_path(os.fsdecode(path), self.want, option_name(param), self.hint)
        return path


class PathIn(click.types.StringParamType):
    """An option whose value may be, or hold, a path among other things: ``--knows
    TYPE,...|FILE|NAME``, ``--parser FILE.py:FUNCTION``, ``--database DIR|URL``.
    ``path_of`` finds the path in a value (``None``: it names none), which is checked as a
    :class:`KitPath` is; the value itself is passed on as given, so a FIFO given to
    ``--knows`` is not read as an event type's name, nor one behind ``--parser``'s file
    reported as "no such file"."""

    name = "text"

    def __init__(self, want: str, path_of: Callable[[str], str | None]) -> None:
        self.want, self.path_of = want, path_of

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        path = self.path_of(value)
        if path is not None:
            refuse_named_path(path, self.want, option_name(param))
        return value


def _unless_url(value: str) -> str | None:
    """A ``--database`` value's folder: any value but a URL (``redis://...``)."""
    return None if "://" in value else value


def _module_file(spec: str) -> str | None:
    """The file of ``FILE.py:NAME`` (``--parser``, ``--reject``); a module's name is none."""
    where = spec.rpartition(":")[0]
    return where if where.endswith(".py") else None


def _knows_file(value: str) -> str | None:
    """The file ``--knows`` names: a value without a comma that is a path (there is
    something there, or it reads as a path), not a type's or a vocabulary's name."""
    from stella_conform.conformance.checks.claims import knows_file

    return knows_file(value)


#: ``--parser`` and ``--reject``: a module or a Python file, then a name in it.
MODULE_SPEC = PathIn("file", _module_file)
