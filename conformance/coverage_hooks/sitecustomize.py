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
from types import CodeType, FrameType
from typing import Any

MAP_ENV = "STELLA_CONFORM_COVERAGE_MAP"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_prefixes() -> tuple[str, ...]:
    """Code not worth tracing: the standard library and this folder."""
    paths = sysconfig.get_paths()
    found = {paths.get("stdlib"), paths.get("platstdlib"), _HERE}
    return tuple(os.path.join(p, "") for p in found if p)


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
    # the client's files named from the folder it starts in: the same code gives the same
    # edges in any checkout, so a seeded session is the same wherever it runs
    try:
        start = os.path.join(os.getcwd(), "")
    except OSError:  # started in a folder since removed: names as they are
        start = "\0"
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
                name = name[len(start) :] if name.startswith(start) else name
                ident = f"{name}:{code.co_name}:{code.co_firstlineno}".encode()
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
