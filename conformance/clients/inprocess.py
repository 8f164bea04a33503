"""Grade a Python parser in-process: no subprocess, same checks, same shrinking.

The client author hands over a callable::

    def read(lines, report):           # report is optional: read(lines) also works
        for number, raw in enumerate(lines, 1):
            ...                          # parse one physical line (bytes, with its newline)
            report.line(number, "known", type=event["type"])
        return {"unrecognized_events": n, "final_text": text}   # or None

Returning means the stream was accepted.  Raising one of the exception types the
author names as rejections (:class:`Parser`'s ``rejects``; ``ValueError`` unless
told otherwise, which covers ``json.JSONDecodeError``) means it was rejected: give
the exception a ``line`` attribute to name the line.  Any other exception — a
``KeyError`` or ``TypeError`` from the parser's own bug — is a crash, graded
``error`` with the exception and the parser's frames of its traceback, never a
correct rejection.  The callable sees the lines one at a time, in lockstep: line
*k+1* is produced only after line *k* was reported (when ``report`` is used), so
a parser that buffers the whole stream is caught by ``R1.line-by-line`` exactly
as a subprocess would be.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stella_conform.conformance.clients.runner import Observation, split_lines
from stella_conform.errors import SetupError

OUTCOMES = ("known", "unknown", "blank", "torn", "reject")
#: The exception types that mean "rejected" when the author names none.
DEFAULT_REJECTS: tuple[type[BaseException], ...] = (ValueError,)


def reject_kinds(
    rejects: type[BaseException] | Sequence[type[BaseException]] | None,
) -> tuple[type[BaseException], ...]:
    """An author's ``rejects=``: one exception type, several, or none (the default)."""
    if rejects is None:
        return DEFAULT_REJECTS
    if isinstance(rejects, type):
        return (rejects,)
    return tuple(rejects)


#: The most of a crash's traceback kept (its last characters), like a process's stderr tail.
TRACEBACK_KEEP = 2000


@dataclass(frozen=True)
class Parser:
    """An in-process parser and the exception types by which it rejects a stream."""

    read: Callable[..., Any]
    rejects: tuple[type[BaseException], ...] = DEFAULT_REJECTS

    def __post_init__(self) -> None:
        for kind in self.rejects:
            if not (isinstance(kind, type) and issubclass(kind, BaseException)):
                raise TypeError(f"rejects must be exception types, not {kind!r}")

    def __call__(self, *args: Any) -> Any:
        return self.read(*args)


def as_parser(fn: Callable[..., Any] | Parser) -> Parser:
    return fn if isinstance(fn, Parser) else Parser(fn)


def type_name(kind: type[BaseException]) -> str:
    """``ValueError`` for a builtin, ``module.QualName`` for anything else."""
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def _parser_frames(exc: BaseException) -> str:
    """The traceback without this module's own frames: what the parser did."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text[-TRACEBACK_KEEP:]


class Report:
    """What the parser tells the kit, line by line."""

    def __init__(self) -> None:
        self.lines: dict[int, dict[str, Any]] = {}
        self.pending: set[int] = set()

    def line(
        self,
        number: int,
        outcome: str,
        type: str | None = None,
        reason: str | None = None,
    ) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
        self.lines[number] = {
            "kind": "line",
            "line": number,
            "outcome": outcome,
            "type": type,
            "reason": reason,
        }
        self.pending.discard(number)

    def defer(self, number: int) -> None:
        """The line may be a torn last line; it will be reported once more is known."""
        self.pending.add(number)


def wants_report(fn: Callable[..., Any] | Parser) -> bool:
    fn = fn.read if isinstance(fn, Parser) else fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in params.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in positional)


def run_inprocess(fn: Callable[..., Any] | Parser, stream: bytes) -> Observation:
    parser = as_parser(fn)
    obs = Observation()
    started = time.monotonic()
    report = Report()
    lines = split_lines(stream)
    lockstep = wants_report(parser)

    def feed() -> Iterator[bytes]:
        for index, line in enumerate(lines, 1):
            if lockstep and index > 1 and obs.stalled_at is None:
                previous = index - 1
                if previous not in report.lines and previous not in report.pending:
                    obs.stalled_at = previous  # asked for more before reporting the last one
            yield line

    try:
        result = parser.read(feed(), report) if lockstep else parser.read(feed())
    except parser.rejects as exc:  # the parser rejecting, as its author declared
        obs.verdict = "reject"
        line = getattr(exc, "line", None) or getattr(exc, "lineno", None)
        obs.summary = {
            "kind": "summary",
            "verdict": "reject",
            "rejected_line": line if isinstance(line, int) else None,
        }
        obs.detail = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # anything else is the parser's own bug
        named = ", ".join(type_name(k) for k in parser.rejects)
        obs.status = "crash"
        obs.detail = (
            f"{type(exc).__name__}: {exc} (a crash, not a rejection: the rejection "
            f"types are {named})"
        )
        obs.stderr_tail = _parser_frames(exc)
        obs.stderr_lines = obs.stderr_tail.count("\n")
    else:
        obs.verdict = "accept"
        summary = dict(result) if isinstance(result, dict) else {}
        summary.update({"kind": "summary", "verdict": "accept"})
        obs.summary = summary
    obs.lines = report.lines
    obs.seconds = time.monotonic() - started
    return obs


# ---------------------------------------------------------------------- replaying


def import_spec(obj: Any, cwd: Path | None = None) -> tuple[str, Path | None] | None:
    """How ``stella-conform replay --parser`` finds ``obj`` again, from ``cwd``.

    A top-level module is named by its file (``mini_stella.py:read``), which imports
    from any directory; a module inside a package by its dotted name, with the folder
    that must be on ``PYTHONPATH`` when it is not ``cwd``.  ``None`` when ``obj`` cannot
    be imported at all (a lambda, a function defined inside a test).
    """
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", "")
    if not module_name or not qualname or "<" in qualname:
        return None
    if module_name == "builtins":
        return qualname, None
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if module is None or file is None or module_name == "__main__":
        return None
    here = (cwd or Path.cwd()).resolve()
    path = Path(file).resolve()
    if "." not in module_name:
        shown = os.path.relpath(path, here) if path.is_relative_to(here) else str(path)
        return f"{shown}:{qualname}", None
    root = path.parents[module_name.count(".")]
    if path.name == "__init__.py":
        root = root.parent
    return f"{module_name}:{qualname}", None if root == here else root


def replay_args(fn: Callable[..., Any] | Parser) -> tuple[list[str], Path | None] | None:
    """``--parser``/``--reject`` arguments that rebuild the parser, and a PYTHONPATH entry."""
    parser = as_parser(fn)
    spec = import_spec(parser.read)
    if spec is None:
        return None
    args, roots = ["--parser", spec[0]], {spec[1]}
    for kind in parser.rejects:
        reject = import_spec(kind)
        if reject is None:
            return None
        args += ["--reject", reject[0]]
        roots.add(reject[1])
    roots.discard(None)
    return args, (roots.pop() if len(roots) == 1 else None)


def load_spec(spec: str) -> Any:
    """The object a ``--parser`` or ``--reject`` spec names; :class:`SetupError` if none."""
    import builtins
    import importlib
    import importlib.util

    where, _, name = spec.rpartition(":")
    if not where:
        found = getattr(builtins, spec, None)
        if found is None:
            raise SetupError(f"{spec!r}: expected MODULE:NAME or FILE.py:NAME")
        return found
    try:
        if where.endswith(".py"):
            path = Path(where).resolve()
            if not path.is_file():
                raise SetupError(f"{spec!r}: no such file: {where}")
            module_name = path.stem
            module = sys.modules.get(module_name)
            if module is None or Path(getattr(module, "__file__", "")).resolve() != path:
                sys.path.insert(0, str(path.parent))
                module = importlib.import_module(module_name)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except SetupError:
        raise
    except Exception as exc:  # the user's module failing to import is a set-up problem
        raise SetupError(f"{spec!r}: cannot import {where}: {type(exc).__name__}: {exc}") from None
    found = module
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise SetupError(f"{spec!r}: {where} has no {name!r}")
    return found
