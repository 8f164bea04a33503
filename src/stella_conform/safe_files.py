"""Files where someone else may have put something: read without blocking, write whole.

The kit reads files a client wrote (a ``{record}`` file, the fake stella's invocation
log) and files a user named (a stream, a report, a journal).  Any of them can be a
FIFO that never delivers, ``/dev/zero`` that never ends, or a link to either.  So a read
opens with ``O_NONBLOCK`` (opening a FIFO does not wait for a writer), checks with
``fstat`` on the opened descriptor (no race between a check and the open) that it is a
regular file, and never takes more than a cap.

The kit writes reports and saved counterexamples into folders a client or a shard may
share.  A write goes to a fresh temporary file beside the target (created with
``O_EXCL | O_NOFOLLOW``) and is renamed over it: a planted symlink is replaced, never
followed, and a reader sees the old file or the whole new one, never half of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from stella_conform import stopping

#: The most of a JSON document the kit reads (a report, an expectation, a matrix shard).
DOCUMENT_CAP = 64 * 1024 * 1024
#: The longest stream line ``decode``, ``validate`` and ``corpus check`` hold at once.
STREAM_LINE_CAP = 16 * 1024 * 1024
#: The largest case file (a stream, an envelope, a journal) the kit plays to a client: a
#: case is held whole, decoded and kept for its report, several times its size in memory.
CASE_CAP = 16 * 1024 * 1024


class RefusedFile(OSError):
    """A file the kit will not read: not a regular file, or larger than the cap."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(f"{os.fspath(path)} {why}")
        self.path = os.fspath(path)
        self.why = why

    def __str__(self) -> str:
        return f"{self.path} {self.why}"


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (``a FIFO``)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


#: What a path the user names may be (:func:`named_path_problem`), and the words for it.
WANTED = {
    "folder": "not a folder",
    "file": "not a regular file",
    "output": "not a regular file",
    "folder or file": "neither a folder nor a regular file",
}


def named_path_problem(path: str | os.PathLike[str], want: str) -> str | None:
    """What is wrong with a path a user named on the command line (``want``: a key of
    :data:`WANTED`), or ``None``: ``"is a FIFO, not a folder"``.

    Found with ``stat`` alone, which never opens the file, so a FIFO nobody writes cannot
    make it wait (nor a device answer). A path that does not exist yet is fine (a folder
    or a report made later; a file to read is found missing where it is read) if the
    nearest part of it that exists is a folder. This is the check before anything runs,
    for a clear usage error; a file swapped afterwards is still read without blocking and
    refused (:func:`open_regular`), and written by rename, never opened (:func:`write_atomic`).
    """
    if want in ("output", "folder") and _a_descriptor(path):
        # /dev/stdout to a file: the report was renamed over the link, in /dev (as root)
        return (
            "names a file descriptor (/dev/stdout, /dev/fd/N): the kit writes a whole "
            "new file and renames it into place; name a file"
        )
    try:
        mode = os.stat(path).st_mode  # a link is what it points to: /dev/stdin, say
    except FileNotFoundError:
        return _parent_problem(path)
    except NotADirectoryError:
        return _parent_problem(path)
    except OSError:
        return None  # (unreadable: the command's own read or write says why)
    if stat.S_ISDIR(mode):
        return None if want in ("folder", "folder or file") else f"is a directory, {WANTED[want]}"
    if stat.S_ISREG(mode):
        return None if want != "folder" else f"is a regular file, {WANTED[want]}"
    return f"is {file_kind(mode)}, {WANTED[want]}"


def _a_descriptor(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file descriptor's name: in ``/proc`` (``/dev/fd/1`` is
    ``/proc/self/fd/1``), or a link into it (``/dev/stdout``)."""
    absolute = os.path.abspath(path)
    parent = os.path.realpath(os.path.dirname(absolute))
    try:
        target = os.readlink(absolute) if os.path.islink(absolute) else ""
    except OSError:
        target = ""
    return any(p == "/proc" or p.startswith("/proc/") for p in (parent, target))


def _parent_problem(path: str | os.PathLike[str]) -> str | None:
    """For a path that does not exist: its nearest part that does, when that is no folder."""
    here = os.path.abspath(path)
    while True:
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
        try:
            mode = os.stat(here).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if stat.S_ISDIR(mode):
            return None
        return f"cannot be made: {here} is {file_kind(mode)}, not a folder"


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> IO[bytes]:
    """Open ``path`` for reading only if it is a regular file, without ever blocking.

    ``follow=False`` refuses a symlink as the last component too (files a client wrote).
    Raises :class:`RefusedFile` (a non-regular file) or :class:`OSError` (cannot open).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and os.path.islink(path):
            raise RefusedFile(path, "is a symbolic link, not a regular file") from None
        raise exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RefusedFile(path, f"is {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], cap: int, *, follow: bool = True) -> bytes:
    """The whole of a regular file of at most ``cap`` bytes; :class:`RefusedFile` otherwise."""
    with open_regular(path, follow=follow) as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise RefusedFile(path, f"is larger than {cap} bytes")
    return data


def read_capped(fh: IO[bytes], cap: int, what: str) -> bytes:
    """At most ``cap`` bytes from an open stream (stdin); :class:`RefusedFile` beyond."""
    data = fh.read(cap + 1)
    if len(data) > cap:
        raise RefusedFile(what, f"is larger than {cap} bytes")
    return data


def bounded_lines(fh: IO[bytes], cap: int = STREAM_LINE_CAP) -> Iterator[bytes]:
    """Physical lines (each with its LF) of at most ``cap`` bytes; :class:`RefusedFile` beyond.

    Iterating a file object reads a whole line however long; ``/dev/zero`` on stdin is one
    endless line.
    """
    number = 0
    while True:
        line = fh.readline(cap + 1)
        if not line:
            return
        number += 1
        if len(line) > cap and not (len(line) == cap + 1 and line.endswith(b"\n")):
            raise RefusedFile(f"line {number}", f"is longer than {cap} bytes")
        yield line


# ---------------------------------------------------------------------- writing


def write_atomic(path: Path, data: bytes | str, *, mode: int | None = None) -> None:
    """Write ``path`` whole or not at all, replacing (never following) a link at ``path``.

    Below a pinned folder (:func:`pin_dir`) the folders on the way are made and entered
    without following a link, so a client cannot redirect the write elsewhere by
    swapping one of them; :class:`RefusedFile` if it tried.  The temporary file gets the
    usual permissions (``0o666`` less the umask), or ``mode`` when given (set on the new
    file itself, before it is in place).
    """
    # a lone surrogate (valid in a JSON escape, not in UTF-8) is written as its escape
    payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    directory = path.parent if str(path.parent) else Path(".")
    temp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    # a stop signal waits until the file is in place or gone: a second Ctrl-C (which exits
    # at once) cannot leave half a report or its temporary file behind
    with stopping.signals_held(), _folder(directory) as dir_fd:
        at = {"dir_fd": dir_fd} if dir_fd is not None else {}
        temp_path = temp if dir_fd is not None else os.fspath(directory / temp)
        target = path.name if dir_fd is not None else os.fspath(path)
        fd = os.open(temp_path, flags | getattr(os, "O_CLOEXEC", 0), 0o666, **at)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                if mode is not None:
                    os.fchmod(fh.fileno(), mode)
            os.replace(temp_path, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_path, **at)
            raise


def remove_written(path: Path) -> None:
    """Remove a file the kit wrote with :func:`write_atomic`, by the same way there: below a
    pinned folder through the folders' descriptors (a folder swapped for a link on the way
    is refused, never followed); a link at ``path`` itself is removed, not what it names."""
    directory = path.parent if str(path.parent) else Path(".")
    with stopping.signals_held(), _folder(directory) as dir_fd:
        if dir_fd is None:
            os.unlink(path)
        else:
            os.unlink(path.name, dir_fd=dir_fd)


def make_dirs(directory: Path) -> None:
    """``mkdir -p``; below a pinned folder, without following a link on the way."""
    if _pinned(directory) is None:
        directory.mkdir(parents=True, exist_ok=True)
        return
    with _folder(directory):
        pass


#: Folders the kit will write below, pinned before any client ran: the folder as given
#: (absolute) -> its nearest folder that existed then (absolute), and that one's identity.
_PINNED: dict[str, tuple[str, tuple[int, int]]] = {}


def pin_dir(path: Path) -> None:
    """Remember, before any client runs, where ``path`` is: what the kit writes below it
    later goes there or nowhere.

    Nothing is made now.  The nearest folder of ``path`` that exists is pinned by its
    identity (device and inode); the folders from it down are made when first written,
    each entered without following a link.  A client that swaps the failures folder
    (or any folder on the way) for a link mid-run no longer has the kit's saved cases
    written wherever the link points (it did).
    """
    absolute = os.path.abspath(path)
    existing = absolute
    while not os.path.isdir(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            return
        existing = parent
    st = os.stat(existing)
    _PINNED[absolute] = (existing, (st.st_dev, st.st_ino))


def _pinned(directory: Path) -> tuple[str, tuple[int, int], list[str]] | None:
    absolute = os.path.abspath(directory)
    for pinned, (existing, identity) in _PINNED.items():
        if absolute == pinned or absolute.startswith(pinned.rstrip(os.sep) + os.sep):
            rest = os.path.relpath(absolute, existing)
            parts = [] if rest == "." else rest.split(os.sep)
            return existing, identity, parts
    return None


@contextlib.contextmanager
def _folder(directory: Path) -> Iterator[int | None]:
    """A descriptor of ``directory`` made from its pinned folder without following a link
    on the way; ``None`` when it is not below a pinned folder."""
    found = _pinned(directory)
    if found is None:
        yield None
        return
    existing, identity, parts = found
    fd = os.open(existing, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            raise RefusedFile(
                existing, "is no longer the folder it was when the run started: nothing written"
            )
        nofollow = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
        for depth, part in enumerate(parts, 1):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            try:
                inner = os.open(part, nofollow | getattr(os, "O_CLOEXEC", 0), dir_fd=fd)
            except OSError:
                where = os.path.join(existing, *parts[:depth])
                raise RefusedFile(
                    where, "is a link or not a folder: nothing written there"
                ) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]")


def path_component(name: str) -> str:
    """``name`` as one safe file-name component: no separator, no ``..``, no control bytes.

    A name that had to change gets a short digest of the original, so two names that
    sanitise alike (``a/b`` and ``a_b``) still land in different folders.
    """
    safe = _UNSAFE.sub("_", name).lstrip(".")[:80] or "_"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe


def inside(directory: Path, *parts: str) -> Path:
    """``directory / parts``, each part made a safe component: never outside ``directory``."""
    out = directory
    for part in parts:
        out = out / path_component(part)
    return out
