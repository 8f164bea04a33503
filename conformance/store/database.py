"""Which Hypothesis example database a ``run`` or a ``fuzz`` reads and writes.

Locally it is a directory (``.stella-conform/hypothesis``).  Two kinds of database can
be read beside it, each multiplexed with it by Hypothesis's own
:class:`~hypothesis.database.MultiplexedDatabase`, so that failures found anywhere are
replayed everywhere:

* **a shared Redis** (``--database redis://HOST:PORT/N``): Hypothesis's
  :class:`~hypothesis.extra.redis.RedisExampleDatabase`, read *and* written, so
  concurrent ``fuzz`` workers on several machines (and the ``run`` of a pull request)
  share failures and the fuzzing corpus.  The ``redis`` package is an optional extra
  (``pip install 'stella-conform[redis]'``).  Losing the server mid-run is a warning,
  not an error: :class:`SharedDatabase` keeps going with the local directory, keeps
  what it could not write, writes it when the server answers again, and says what was
  never shared.
* **a GitHub Actions artifact** (``--github-artifact OWNER/REPO[/NAME]``): a nightly
  ``fuzz`` uploads the directory; a pull-request ``run`` reads it without a download
  step of its own (:class:`~hypothesis.database.GitHubArtifactDatabase`, which
  downloads the latest artifact of that name through the GitHub API with
  ``GITHUB_TOKEN`` and caches it for a day).  It is read-only.

Whatever a database holds is input, like any file the kit reads: someone else wrote
it.  Every entry read is size-capped (a directory entry through the safe reader, a
Redis set through a bounded count) and must decode as what the kit stores there (a
Hypothesis choice sequence; a fuzzing energy record); anything else is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
    choices_from_bytes,
)

from stella_conform.safe_files import RefusedFile, open_regular, read_regular

#: The artifact name the documented CI workflow uploads.
DEFAULT_ARTIFACT = "stella-conform-db"
#: Where a downloaded artifact is cached (one zip, the latest).
ARTIFACT_CACHE = Path(".stella-conform/github-artifacts")
_SPEC = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/([A-Za-z0-9_.-]+))?")

#: The largest entry the kit reads from any database.  A case's choice sequence is a
#: few hundred bytes to a few KiB (a line over 1 MiB is drawn as a few choices too).
ENTRY_CAP = 256 * 1024
#: The most entries the kit reads under one key (the fuzzer keeps 400 inputs a check).
KEY_ENTRIES_CAP = 2048
#: Keys whose entries are not choice sequences, and how long each entry is.
#: (Hypothesis's directory database lists its keys under its meta key.)
FIXED_LENGTH_SUFFIXES: dict[bytes, int] = {}
_META_KEY = b".hypothesis-keys"
#: Keys whose entries are records of the kit's own, and what tells a good one.
RECORD_SUFFIXES: dict[bytes, Callable[[bytes], bool]] = {}


def register_fixed_length(suffix: bytes, length: int) -> None:
    """Entries under keys ending in ``suffix`` are records of exactly ``length`` bytes."""
    FIXED_LENGTH_SUFFIXES[suffix] = length


def register_record(suffix: bytes, valid: Callable[[bytes], bool]) -> None:
    """Entries under keys ending in ``suffix`` are records that ``valid`` accepts."""
    RECORD_SUFFIXES[suffix] = valid


def valid_entry(key: bytes, value: object) -> bool:
    """Whether ``value``, read under ``key``, is something the kit stored there."""
    if not isinstance(value, bytes) or len(value) > ENTRY_CAP:
        return False
    for suffix, length in FIXED_LENGTH_SUFFIXES.items():
        if key.endswith(suffix):
            return len(value) == length
    for suffix, valid in RECORD_SUFFIXES.items():
        if key.endswith(suffix):
            return valid(value)
    if key.endswith(_META_KEY):
        return True
    return choices_from_bytes(value) is not None


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


@dataclass(frozen=True)
class RedisSource:
    """A shared Redis database: ``redis://[:PASSWORD@]HOST[:PORT][/N]`` (``rediss://``: TLS)."""

    url: str

    @classmethod
    def parse(cls, url: str) -> RedisSource:
        """ValueError when ``url`` is not a Redis URL with a host, a port and a number."""
        parts = urlsplit(url.strip())
        if parts.scheme not in ("redis", "rediss"):
            raise ValueError(f"not a redis:// URL: {redact(url)!r}")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"bad port in {redact(url)!r}") from None
        if not parts.hostname:
            raise ValueError(f"no host in {redact(url)!r}")
        if port == 0:
            raise ValueError(f"bad port in {redact(url)!r}")
        number = parts.path.strip("/")
        if number and not number.isdigit():
            raise ValueError(f"the database number must be a whole number: {redact(url)!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"no query or fragment, please: {redact(url)!r}")
        return cls(url.strip())

    @property
    def shown(self) -> str:
        """The URL without its password (for messages and reports)."""
        return redact(self.url)

    def database(self, clock: Callable[[], float] = time.monotonic) -> SharedDatabase:
        """The server as a shared database (no connection is made until it is used)."""
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise ModuleNotFoundError(
                "--database redis://... needs the redis package: "
                "pip install 'stella-conform[redis]'"
            ) from None

        client = redis.Redis.from_url(
            self.url,
            socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=SOCKET_TIMEOUT,
            # one attempt: a lost server is noticed at once and retried on our schedule
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )

        class Capped(RedisExampleDatabase):
            """Hypothesis's Redis database, reading at most a bounded number of entries."""

            def fetch(self, key: bytes) -> Iterable[bytes]:
                name = self._prefix + key
                pipe = self.redis.pipeline()
                pipe.expire(name, self._expire_after)  # as Hypothesis's own fetch does
                pipe.scard(name)
                size = pipe.execute()[1]
                values: Any
                if size > KEY_ENTRIES_CAP:
                    values = self.redis.srandmember(name, KEY_ENTRIES_CAP)
                else:
                    values = self.redis.smembers(name)
                for value in values:
                    if isinstance(value, bytes):
                        yield value

            def replace(self, key: bytes, old: list[bytes], new: list[bytes]) -> None:
                """Delete ``old`` and save ``new`` under ``key`` in one round trip (the
                kit's own records: no change is published to Hypothesis's listeners)."""
                name = self._prefix + key
                pipe = self.redis.pipeline()
                if old:
                    pipe.srem(name, *old)
                if new:
                    pipe.sadd(name, *new)
                pipe.expire(name, self._expire_after)
                pipe.execute()

        errors = (redis.exceptions.RedisError, OSError)
        return SharedDatabase(Capped(client), self.shown, errors, clock=clock)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()


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


#: Seconds a Redis command may wait for the server.
SOCKET_TIMEOUT = 5.0
#: Seconds between attempts to reach a shared database that stopped answering.
RETRY_SECONDS = 15.0
#: Writes kept for a lost shared database (each at most ENTRY_CAP bytes).
PENDING_CAP = 20_000


@dataclass
class Loss:
    """When and why the shared database stopped answering."""

    since: float
    error: str
    back: bool = False


@dataclass
class SharedDatabase(ExampleDatabase):
    """A database shared between machines, that may stop answering at any time.

    Every operation that fails (a server stopped, a network gone, a timeout) marks the
    database lost and warns once; from then on the run goes on with the local
    directory alone, and the writes it could not make are kept (up to
    :data:`PENDING_CAP`).  Every :data:`RETRY_SECONDS` it tries the server again; when
    it answers, the kept writes are made and a second warning says so.  What was never
    written is :meth:`unshared`, for the report.
    """

    inner: ExampleDatabase
    shown: str
    errors: tuple[type[BaseException], ...]
    clock: Callable[[], float] = time.monotonic
    warn: Callable[[str], None] = field(default=lambda text: print(text, file=sys.stderr))
    loss: Loss | None = None
    pending: dict[bytes, set[bytes]] = field(default_factory=dict)
    dropped: int = 0
    saved: int = 0
    _next_try: float = 0.0

    def __post_init__(self) -> None:
        super().__init__()

    def __repr__(self) -> str:
        return f"SharedDatabase({self.shown})"

    def __hash__(self) -> int:
        return hash(self.shown)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SharedDatabase) and other.shown == self.shown

    @property
    def available(self) -> bool:
        """Whether the server answered last time (trying it again when it is time)."""
        if self.loss is None or self.loss.back:
            return True
        now = self.clock()
        if now < self._next_try:
            return False
        self._next_try = now + RETRY_SECONDS
        try:
            for key, values in list(self.pending.items()):
                for value in list(values):
                    self.inner.save(key, value)
                    values.discard(value)
                del self.pending[key]
        except self.errors:
            return False
        self.loss.back = True
        self.warn(f"warning: the shared database {self.shown} answers again; writes resumed")
        return True

    def _lost(self, exc: BaseException) -> None:
        if self.loss is None or self.loss.back:
            reason = f"{type(exc).__name__}: {exc}".strip()
            self.loss = Loss(self.clock(), reason[:300])
            self._next_try = self.clock() + RETRY_SECONDS
            self.warn(
                f"warning: the shared database {self.shown} does not answer ({reason[:200]}); "
                "going on with the local database, and writing what it missed when it answers"
            )

    def fetch(self, key: bytes) -> Iterable[bytes]:
        if not self.available:
            return
        try:
            values = list(self.inner.fetch(key))
        except self.errors as exc:
            self._lost(exc)
            return
        yield from values

    def save(self, key: bytes, value: bytes) -> None:
        if self.available:
            try:
                self.inner.save(key, value)
                self.saved += 1
                return
            except self.errors as exc:
                self._lost(exc)
        if sum(len(v) for v in self.pending.values()) < PENDING_CAP:
            self.pending.setdefault(key, set()).add(value)
        else:
            self.dropped += 1

    def delete(self, key: bytes, value: bytes) -> None:
        kept = self.pending.get(key)
        if kept is not None:
            kept.discard(value)
        if not self.available:
            return
        try:
            self.inner.delete(key, value)
        except self.errors as exc:
            self._lost(exc)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self.available:
            self.delete(src, value)
            self.save(dest, value)
            return
        try:
            self.inner.move(src, dest, value)
        except self.errors as exc:
            self._lost(exc)
            self.save(dest, value)

    def replace(self, key: bytes, old: list[bytes], new: list[bytes]) -> None:
        """Delete ``old`` and save ``new`` under ``key``, at once where the server allows."""
        kept = self.pending.get(key)
        if kept is not None:
            kept.difference_update(old)
        if self.available:
            try:
                batch = getattr(self.inner, "replace", None)
                if batch is not None:
                    batch(key, old, new)
                else:
                    for value in old:
                        self.inner.delete(key, value)
                    for value in new:
                        self.inner.save(key, value)
                self.saved += len(new)
                return
            except self.errors as exc:
                self._lost(exc)
        for value in new:
            self.save(key, value)  # kept for when it answers again

    def unshared(self) -> dict[bytes, int]:
        """Writes never made, by key (the ones given up on under the key ``b""``)."""
        out = {key: len(values) for key, values in self.pending.items() if values}
        if self.dropped:
            out[b""] = self.dropped
        return out

    def close(self) -> None:
        """Make what is still kept, if the server answers now; then disconnect."""
        if self.loss is not None and not self.loss.back:
            self._next_try = 0.0
            self.available  # noqa: B018 - one last attempt
        redis = getattr(self.inner, "redis", None)
        if redis is not None:
            with contextlib.suppress(Exception):
                redis.close()


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
        #: Entries skipped because they were not what the kit stores (too large, malformed).
        self.refused = 0

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._checked(key, super().fetch(key))

    def _checked(self, key: bytes, values: Iterable[bytes]) -> Iterator[bytes]:
        for count, value in enumerate(values):
            if count >= KEY_ENTRIES_CAP * 2:
                return
            if valid_entry(key, value):
                yield value
            else:
                self.refused += 1

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
