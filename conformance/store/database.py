"""Which Hypothesis example database a ``run`` or a ``fuzz`` reads and writes.

Locally it is a directory (``.stella-conform/hypothesis``).  Two kinds of database can
be read beside it, each multiplexed with it by Hypothesis's own
:class:`~hypothesis.database.MultiplexedDatabase`, so that failures found anywhere are
replayed everywhere:

* **a shared Redis** (``--database redis://HOST:PORT/N``): Hypothesis's Redis layout,
  read *and* written, so concurrent ``fuzz`` workers on several machines (and the ``run``
  of a pull request) share failures and the fuzzing corpus
  (:mod:`~stella_conform.conformance.store.shared`).  The ``redis`` package is an
  optional extra (``pip install 'stella-conform[redis]'``).  Losing the server mid-run
  is a warning, not an error: :class:`SharedDatabase` keeps going with the local
  directory, keeps what it could not write, writes it when the server answers again,
  and says what was never shared.
* **a GitHub Actions artifact** (``--github-artifact OWNER/REPO[/NAME]``): a nightly
  ``fuzz`` uploads the directory; a pull-request ``run`` reads it without a download
  step of its own (:class:`~hypothesis.database.GitHubArtifactDatabase`, which
  downloads the latest artifact of that name through the GitHub API with
  ``GITHUB_TOKEN`` and caches it for a day).  It is read-only.

Whatever a database holds is input, like any file the kit reads: someone else wrote
it.  Every read is bounded before anything is held
(:mod:`~stella_conform.conformance.store.entries`: a directory entry through the safe
reader, a Redis set on the server's side) and every entry must decode as what the kit
stores there (a Hypothesis choice sequence; a fuzzing energy record); anything else is
skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

from stella_conform.conformance.store.entries import ENTRY_CAP as ENTRY_CAP
from stella_conform.conformance.store.entries import KEY_BYTES_CAP as KEY_BYTES_CAP
from stella_conform.conformance.store.entries import KEY_ENTRIES_CAP as KEY_ENTRIES_CAP
from stella_conform.conformance.store.entries import register_fixed_length as register_fixed_length
from stella_conform.conformance.store.entries import register_record as register_record
from stella_conform.conformance.store.entries import valid_entry as valid_entry
from stella_conform.conformance.store.shared import SOCKET_TIMEOUT as SOCKET_TIMEOUT
from stella_conform.conformance.store.shared import Loss as Loss
from stella_conform.conformance.store.shared import RedisSource as RedisSource
from stella_conform.conformance.store.shared import SharedDatabase as SharedDatabase
from stella_conform.conformance.store.shared import redact as redact
from stella_conform.safe_files import RefusedFile, open_regular, read_regular

#: The artifact name the documented CI workflow uploads.
DEFAULT_ARTIFACT = "stella-conform-db"
#: Where a downloaded artifact is cached (one zip, the latest).
ARTIFACT_CACHE = Path(".stella-conform/github-artifacts")
_SPEC = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/([A-Za-z0-9_.-]+))?")

# ---------------------------------------------------------------------- sources


@dataclass(frozen=True)
class ArtifactSource:
    """A GitHub repository's example-database artifact: ``OWNER/REPO[/NAME]``."""

    owner: str
    repo: str
    name: str = DEFAULT_ARTIFACT

    @classmethod
    def parse(cls, spec: str) -> ArtifactSource:
        """ValueError when ``spec`` is not ``OWNER/REPO`` or ``OWNER/REPO/ARTIFACT``."""
        match = _SPEC.fullmatch(spec.strip())
        if match is None:
            raise ValueError(f"not OWNER/REPO or OWNER/REPO/ARTIFACT: {spec!r}")
        owner, repo, name = match.groups()
        return cls(owner, repo, name or DEFAULT_ARTIFACT)

    def database(self, cache: Path = ARTIFACT_CACHE) -> ExampleDatabase:
        """The artifact as a read-only database (downloaded on first read, then cached),
        its cache and its members checked before use (:class:`CheckedArtifactDatabase`)."""
        artifact = CheckedArtifactDatabase(
            self.owner, self.repo, artifact_name=self.name, path=cache / self.name
        )
        return ReadOnlyDatabase(artifact)


#: The largest artifact zip the kit opens.
ARTIFACT_ZIP_CAP = 128 * 1024 * 1024
#: The most members, and the most bytes they may unpack to altogether.
ARTIFACT_MEMBERS_CAP = 200_000
ARTIFACT_UNPACKED_CAP = 512 * 1024 * 1024
#: The most a member may unpack to per byte it takes in the zip (deflate reaches ~1000
#: on zeros; a database entry does not compress a tenth as well).
ARTIFACT_RATIO_CAP = 100
#: A member's name: a key folder, and an entry in it (Hypothesis names both by hashes).
_MEMBER = re.compile(r"[A-Za-z0-9_.-]{1,128}(/[A-Za-z0-9_.-]{1,128})?/?")


def artifact_problem(path: Path) -> str | None:
    """Why the zip at ``path`` is not an example-database artifact the kit will read, or
    ``None``: it must be a regular file (no link) of at most :data:`ARTIFACT_ZIP_CAP`
    bytes whose members are stored or deflated, named as a database's files are, each at
    most :data:`ENTRY_CAP` bytes unpacked, :data:`ARTIFACT_RATIO_CAP` times their packed
    size at most, :data:`ARTIFACT_UNPACKED_CAP` bytes in all.  Only the zip's directory
    is read: nothing is unpacked to decide (a zip bomb of a few megabytes unpacks to
    gigabytes)."""
    import zipfile

    try:
        with open_regular(path, follow=False) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > ARTIFACT_ZIP_CAP:
                return f"it is {size} bytes, over the cap of {ARTIFACT_ZIP_CAP}"
            with zipfile.ZipFile(fh) as zf:
                members = zf.infolist()
    except RefusedFile as exc:
        return exc.why
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        return f"it is not a readable zip ({type(exc).__name__}: {exc})"
    if len(members) > ARTIFACT_MEMBERS_CAP:
        return f"it has {len(members)} members, over the cap of {ARTIFACT_MEMBERS_CAP}"
    total = 0
    for member in members:
        name = member.filename
        if not _MEMBER.fullmatch(name) or ".." in name.split("/"):
            return f"a member is named {name[:200]!r}, not as a database's files are"
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            return f"{name} is packed with method {member.compress_type} (only stored and deflated)"
        if member.file_size > ENTRY_CAP:
            return f"{name} unpacks to {member.file_size} bytes, over the cap of {ENTRY_CAP}"
        if member.file_size > 1024 and member.file_size > ARTIFACT_RATIO_CAP * max(
            member.compress_size, 1
        ):
            return (
                f"{name} unpacks to {member.file_size} bytes from {member.compress_size}, over "
                f"{ARTIFACT_RATIO_CAP} times its size"
            )
        total += member.file_size
    if total > ARTIFACT_UNPACKED_CAP:
        return f"it unpacks to {total} bytes, over the cap of {ARTIFACT_UNPACKED_CAP}"
    return None


class CheckedArtifactDatabase(GitHubArtifactDatabase):
    """Hypothesis's GitHub-artifact database, with its cache and its zip checked first.

    The cache is a folder in the working tree, so anything can be there: Hypothesis used
    a zip stamped 9999-12-31 for ever, crashed (exit 3) on a badly named zip, a folder
    or a FIFO named like one (a FIFO hung it, a link to ``/dev/zero`` filled the memory),
    and unpacked whatever the zip held.  Here only regular files (no link) named by a
    download's time stamp, not in the future, are cached artifacts; anything else there
    is ignored with a warning and left alone.  The latest one younger than a day is
    used if :func:`artifact_problem` finds nothing wrong with it; otherwise the artifact
    is downloaded again (and checked the same way), and if that fails an older cached
    one is used with a warning, as Hypothesis does, or none.
    """

    #: Where warnings go (stderr; a test may collect them).
    warn: Callable[[str], None] = staticmethod(
        lambda text: print(f"stella-conform: warning: {text}", file=sys.stderr)
    )

    def _initialize_db(self) -> None:
        self._initialized = True
        self._disabled = True  # until an artifact passes
        folder = self.path
        try:
            kind = folder.lstat().st_mode
        except FileNotFoundError:
            kind = None
        except OSError as exc:
            self.warn(f"the artifact cache {folder} cannot be read ({exc}): no artifact read")
            return
        if kind is not None and not stat.S_ISDIR(kind):
            self.warn(
                f"the artifact cache {folder} is not a folder (a link, a file or a FIFO): "
                "no artifact read"
            )
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            names = sorted(os.listdir(folder))
        except OSError as exc:
            self.warn(f"the artifact cache {folder} cannot be used ({exc}): no artifact read")
            return
        now = datetime.now(UTC)
        cached: list[tuple[datetime, Path]] = []
        for name in names:
            path = folder / name
            stamp, why = _cached_stamp(path, now)
            if stamp is None:
                self.warn(f"ignored {path} in the artifact cache: {why}")
            else:
                cached.append((stamp, path))
        cached.sort()
        for _, old in cached[:-1]:  # as Hypothesis does: only the latest is kept
            with contextlib.suppress(OSError):
                old.unlink()
        latest = cached[-1] if cached else None
        if latest is not None and now - latest[0] < self.cache_timeout:
            problem = artifact_problem(latest[1])
            if problem is None:
                self._use(latest[1])
                return
            self.warn(f"the cached artifact {latest[1]} is not used: {problem}; fetching it again")
            with contextlib.suppress(OSError):
                latest[1].unlink()
            latest = None
        fetched = self._fetch_artifact()
        if fetched is not None:
            problem = artifact_problem(fetched)
            if problem is None:
                if latest is not None:
                    with contextlib.suppress(OSError):
                        latest[1].unlink()
                self._use(fetched)
                return
            self.warn(f"the downloaded artifact is not used: {problem}")
            with contextlib.suppress(OSError):
                fetched.unlink()
        if latest is not None and artifact_problem(latest[1]) is None:
            self.warn(f"using an expired artifact: {latest[1]}")
            self._use(latest[1])
            return
        self.warn(f"no usable artifact {self.artifact_name!r}: the run reads none")

    def _use(self, path: Path) -> None:
        self._artifact = path
        self._disabled = False
        self._initialized = False  # Hypothesis's own preparation (its index of the zip)
        self._prepare_for_io()


def _cached_stamp(path: Path, now: datetime) -> tuple[datetime | None, str]:
    """A cached artifact's download time, or ``(None, why it is not one)``."""
    if not path.name.endswith(".zip"):
        return None, "not a .zip"
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        return None, f"cannot be read ({exc})"
    if not stat.S_ISREG(mode):
        return None, "not a regular file (a link, a folder, a FIFO or a device)"
    try:
        stamp = datetime.fromisoformat(path.name[: -len(".zip")].replace("_", ":"))
    except ValueError:
        return None, "not named by a download's time stamp"
    if stamp.tzinfo is None:
        return None, "its time stamp has no time zone"
    if stamp > now:
        return None, f"dated {stamp.isoformat()}, in the future"
    return stamp, ""


# ---------------------------------------------------------------------- databases


class SafeDirectoryDatabase(DirectoryBasedExampleDatabase):
    """Hypothesis's directory database, reading each entry through the kit's safe reader.

    Hypothesis reads an entry with ``Path.read_bytes()``: a FIFO planted in the
    directory (a shared checkout, an unpacked artifact) would block the run for ever,
    a link to ``/dev/zero`` would fill the memory.  Here an entry is read only if it is
    a regular file (links not followed) of at most :data:`ENTRY_CAP` bytes.
    """

    def fetch(self, key: bytes) -> Iterable[bytes]:
        kp = self._key_path(key)
        if not kp.is_dir():
            return
        try:
            names = sorted(os.listdir(kp))[:KEY_ENTRIES_CAP]
        except OSError:  # the directory was deleted in the meantime
            return
        for name in names:
            try:
                yield read_regular(kp / name, ENTRY_CAP, follow=False)
            except (RefusedFile, OSError):
                continue


class KitDatabase(MultiplexedDatabase):
    """The local directory and the databases read beside it, every entry read checked.

    A shared database is written as well as read; an artifact is read only.  The parts
    stay reachable: the fuzzer reads the shared one apart to see other workers' inputs.
    """

    def __init__(
        self,
        local: ExampleDatabase | None,
        shared: SharedDatabase | None = None,
        artifact: ExampleDatabase | None = None,
    ) -> None:
        super().__init__(*(db for db in (local, shared, artifact) if db is not None))
        self.local = local
        self.shared = shared
        self.artifact = artifact
        self._refused = 0

    @property
    def refused(self) -> int:
        """Entries skipped because they were not what the kit stores (too large, malformed),
        those the shared server left out included."""
        return self._refused + (self.shared.refused if self.shared is not None else 0)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._checked(key, super().fetch(key))

    def _checked(self, key: bytes, values: Iterable[bytes]) -> Iterator[bytes]:
        for count, value in enumerate(values):
            if count >= KEY_ENTRIES_CAP * 2:
                return
            if valid_entry(key, value):
                yield value
            else:
                self._refused += 1

    def fetch_shared(self, key: bytes) -> list[bytes]:
        """The shared database's entries under ``key`` alone (none without one), in an
        order of their own, not the server's.

        Redis returns a set's members in the order of its hash table, whose hash is seeded
        at random as the server starts.  Taken in that order, the others' inputs reach a
        fuzz worker in another order on each server; it keeps other ones of them (what one
        input finds is seen when the next is looked at) and goes another way, so one seed
        with the same records is not one trial.  Sorted by a digest of each entry, the same
        entries are the same list wherever they are.
        """
        if self.shared is None:
            return []
        entries = self._checked(key, self.shared.fetch(key))
        return sorted(entries, key=lambda entry: hashlib.blake2b(entry, digest_size=8).digest())

    def fetch_local(self, key: bytes) -> list[bytes]:
        """The local directory's entries under ``key`` alone."""
        if self.local is None:
            return []
        return list(self._checked(key, self.local.fetch(key)))

    def close(self) -> None:
        if self.shared is not None:
            self.shared.close()


def example_database(
    directory: Path | None,
    artifact: ArtifactSource | None = None,
    shared: RedisSource | None = None,
    *,
    local: ExampleDatabase | None = None,
) -> KitDatabase | None:
    """The local directory (or ``local``), with the shared and artifact databases beside it."""
    if local is None and directory is not None:
        local = SafeDirectoryDatabase(str(directory))
    remote = shared.database() if shared is not None else None
    read_only = artifact.database() if artifact is not None else None
    if local is None and remote is None and read_only is None:
        return None
    return KitDatabase(local, remote, read_only)


def parse_sources(values: Iterable[str]) -> tuple[Path | None, RedisSource | None]:
    """``--database`` values: at most one directory and at most one ``redis://`` URL.

    ValueError for a second of either, or a malformed URL.
    """
    directory: Path | None = None
    shared: RedisSource | None = None
    for value in values:
        if "://" in value:
            if shared is not None:
                raise ValueError("give one shared database (redis://...) at most")
            shared = RedisSource.parse(value)
        else:
            if directory is not None:
                raise ValueError("give one database directory at most")
            directory = Path(value)
    return directory, shared


#: Seconds any one network read of the artifact download may wait (Hypothesis sets none).
DOWNLOAD_TIMEOUT = 60.0


def warm(database: ExampleDatabase | None) -> None:
    """Read the database once now, so the artifact is downloaded (or found in its cache)
    before any worker is forked: each would otherwise fetch it on its own.

    Hypothesis downloads without a timeout; on a network that drops packets the run
    would wait for ever before grading anything, so the download's sockets get one.
    Unreachable or refused, Hypothesis warns and reads no artifact: the run goes on with
    the local directory.  A shared database that does not answer is a warning too.
    """
    if database is None:
        return
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT)
    try:
        for _ in database.fetch(b"stella-conform: warm the cache"):
            break
    finally:
        socket.setdefaulttimeout(previous)
