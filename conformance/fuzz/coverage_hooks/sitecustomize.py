"""Edge coverage of a Python client, measured in the client's own process.

``stella-conform fuzz`` puts this folder first on the client's ``PYTHONPATH`` and
names a shared map file in ``STELLA_CONFORM_COVERAGE_MAP``; Python imports this
module at start-up, before the client's own code.  From then on every line the
client runs outside the standard library bumps one byte of the map, indexed by the
(previous line, this line) edge, as AFL does.  The kit zeroes the map before a case
and reads it after the client's answer, so it sees which code that one case reached
without the client changing a line.  No dependency: ``sys.settrace`` is enough for
a small reader, and it keeps the client's environment free of a coverage package it
may pin differently.

Without ``STELLA_CONFORM_COVERAGE_MAP`` this does nothing but hand over to any
``sitecustomize`` this one shadows.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import mmap
import os
import sys
import sysconfig
import threading
import zlib
from collections.abc import Callable, Sequence
from types import CodeType, FrameType
from typing import Any

MAP_ENV = "STELLA_CONFORM_COVERAGE_MAP"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_prefixes() -> tuple[str, ...]:
    """Code not worth tracing: the standard library and this folder."""
    paths = sysconfig.get_paths()
    found = {paths.get("stdlib"), paths.get("platstdlib"), _HERE}
    return tuple(os.path.join(p, "") for p in found if p)


def _within(path: str, folders: Sequence[str]) -> str | None:
    """``path`` relative to the longest of ``folders`` that holds it; None if none does."""
    best = ""
    for folder in folders:
        if len(folder) > len(best) and path.startswith(os.path.join(folder, "")):
            best = folder
    return path[len(os.path.join(best, "")) :] if best else None


def portable_name(filename: str, folders: Sequence[str], script: str, start: str) -> str:
    """A code file's name that is the same wherever the client's checkout and venv lie.

    The file relative to the longest folder of ``folders`` (``sys.path``) that holds it:
    the client's own files (its script's folder is ``sys.path[0]``, and a folder it puts
    on ``sys.path`` itself is there too) and its site-packages then get one name in any
    checkout, venv and working folder.  Relative paths (a relative ``sys.path`` entry)
    are taken from ``start``, the folder the client started in; a file under a folder
    only once links are resolved (a script run through a link: ``sys.path[0]`` is its
    target's folder) is matched resolved.

    A file under no ``sys.path`` folder (code the client loads by its path, a script
    run with ``-P``) is named relative to ``script``, the client script's folder: where
    such code lies from the script is part of the client's own tree (a helper beside
    it, a sibling folder of its checkout), the same in any checkout and from any working
    folder.  The working folder is not (one checkout run from its root and from a
    subfolder gave each file two names, and two sessions of one seed keyed different
    coverage), nor is the full path (it names the checkout).  Only a file at a fixed
    place outside the client's tree changes name with the checkout's depth
    (``../../opt/x.py``)."""
    path = os.path.normpath(os.path.join(start, filename))
    plain = [os.path.normpath(os.path.join(start, f)) for f in folders]
    name = _within(path, plain)
    if name is None:
        real = os.path.realpath(path)
        name = _within(real, [os.path.realpath(f) for f in plain])
        if name is None:
            name = os.path.relpath(real, os.path.realpath(os.path.join(start, script)))
    return name


def _namer() -> Callable[[str], str]:
    """:func:`portable_name` of each file the client runs, found once and kept (one file,
    one name, however ``sys.path`` changes later), from the ``sys.path`` of the file's
    first run and the folder the client started in."""
    try:
        start = os.getcwd()
    except OSError:  # started in a folder since removed: names from the root
        start = os.sep
    names: dict[str, str] = {}

    def script() -> str:
        """The folder of the client's script (its ``__main__``), links resolved as Python
        resolves ``sys.path[0]`` (a script started through a link: its target's folder),
        else the working one."""
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        if not isinstance(main, str) or not main:
            return start
        return os.path.dirname(os.path.realpath(os.path.join(start, main)))

    def name(filename: str) -> str:
        known = names.get(filename)
        if known is None:
            folders = [p for p in sys.path if isinstance(p, str)]
            known = names[filename] = portable_name(filename, folders, script(), start)
        return known

    return name


def _install(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return
    try:
        shared = mmap.mmap(fd, 0)
    except (OSError, ValueError):
        return
    finally:
        os.close(fd)
    mask = len(shared) - 1
    skip = _library_prefixes()
    portable = _namer()
    tracers: dict[CodeType, Any] = {}
    previous = [0]

    def tracer_for(code_key: int) -> Any:
        def local(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line":
                here = (code_key + frame.f_lineno * 0x9E3779B1) & 0xFFFFFFFF
                index = (here ^ previous[0]) & mask
                hits = shared[index]
                if hits < 255:
                    shared[index] = hits + 1
                previous[0] = here >> 1
            return local

        return local

    def on_call(frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        tracer = tracers.get(code)
        if tracer is None:
            name = code.co_filename
            if name.startswith(skip) or name.startswith("<"):
                tracer = False
            else:
                ident = f"{portable(name)}:{code.co_name}:{code.co_firstlineno}".encode()
                tracer = tracer_for(zlib.crc32(ident))
            tracers[code] = tracer
        return tracer or None

    sys.settrace(on_call)
    threading.settrace(on_call)


def _chain() -> None:
    """Run the ``sitecustomize`` this module shadows, if there is one."""
    others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None or spec.origin == __file__:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_chain()
_map = os.environ.get(MAP_ENV)
if _map:
    _install(_map)
