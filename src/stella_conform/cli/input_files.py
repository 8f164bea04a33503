"""Reading a stream the user names: ``-`` for stdin, or a regular file, line by bounded
line."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

from stella_conform.errors import SetupError
from stella_conform.safe_files import STREAM_LINE_CAP, RefusedFile, bounded_lines, open_regular

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    """``-`` is stdin; anything else must be a readable file."""
    if path == "-":
        yield sys.stdin.buffer
        return
    p = Path(path)
    if not p.exists():
        raise SetupError(f"no such file: {path}")
    if p.is_dir():
        raise SetupError(f"is a directory, not a stream file: {path}")
    try:
        # a FIFO or a device is refused at once (use - to read a pipe on stdin)
        fh = open_regular(p)
    except RefusedFile as exc:
        raise SetupError(f"{exc} (use - to read a pipe on stdin)") from None
    except OSError as exc:
        raise SetupError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        yield fh


def stream_lines(fh: IO[bytes]) -> Iterator[bytes]:
    """A stream's lines, none longer than the cap: ``/dev/zero`` on stdin is refused, not
    read into memory whole, and a file that fails mid-read (``/proc/self/mem``: EIO) is
    bad input, not an internal error (:class:`SetupError`, exit 2)."""
    try:
        yield from bounded_lines(fh, STREAM_LINE_CAP)
    except RefusedFile as exc:
        raise SetupError(f"{exc}: the kit reads stream lines up to that size") from None
    except OSError as exc:  # the file failed mid-read (EIO): the file's failure, not the kit's
        raise SetupError(f"cannot read the stream: {exc.strerror or exc}") from None
