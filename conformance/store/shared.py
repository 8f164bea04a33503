"""A database shared between machines: a Redis server that any worker sharing it writes,
that may stop answering, hang, or hold anything at all under the kit's keys.

The layout is Hypothesis's own (:class:`~hypothesis.extra.redis.RedisExampleDatabase`):
one Redis set per key, named ``hypothesis-example:`` and the key, whose members are the
entries, each set kept eight days after it was last used.  The kit writes through
Hypothesis's class and reads through :class:`RedisEntries`, which bounds what the server
sends *before* it is sent: a member may be 512 MB, and reading a set whole (``SMEMBERS``)
holds every member in memory before any can be looked at.  A small Lua script run on the
server returns at most :data:`~stella_conform.conformance.store.entries.KEY_ENTRIES_CAP`
members of at most :data:`~stella_conform.conformance.store.entries.ENTRY_CAP` bytes each
and :data:`~stella_conform.conformance.store.entries.KEY_BYTES_CAP` in all, and says how
many it left out; a server that refuses scripts is asked the set's ``MEMORY USAGE`` first,
and a set over the byte bound is not read.

:class:`SharedDatabase` keeps a run going whatever the server does: lost (refused, reset),
it is tried again now and then, and what it missed is written when it answers; hung (no
answer within :data:`SOCKET_TIMEOUT`), it is given up for the rest of the command, since
every further try would cost as much again; a key holding something other than a set is
named with its type, and the others are still read and written.  Both pickle as their URL
and state, so ``-j`` workers each connect on their own.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from hypothesis.database import ExampleDatabase

from stella_conform.conformance.store.entries import ENTRY_CAP, KEY_BYTES_CAP, KEY_ENTRIES_CAP
from stella_conform.safe_text import terminal_safe

#: Seconds a Redis command may wait for the server.
SOCKET_TIMEOUT = 5.0
#: Seconds between attempts to reach a shared database that stopped answering.
RETRY_SECONDS = 15.0
#: Writes kept for a lost shared database (each at most ENTRY_CAP bytes).
PENDING_CAP = 20_000
#: Where Hypothesis's Redis database keeps a key's entries, and for how long after use.
PREFIX = b"hypothesis-example:"
EXPIRE_SECONDS = 8 * 24 * 3600
#: The most distinct warnings one shared database gives about keys it cannot use.
WARNINGS_CAP = 8

#: The bounded read, run on the server: the key's type; how many members were left out
#: (over the entry cap, or past the count or the byte budget); the members kept.  The
#: expiry is renewed first, as Hypothesis's own read does (a write before a random command
#: is allowed on every Redis that runs scripts).
_READ_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'set' then return {kind, 0, {}} end
redis.call('EXPIRE', KEYS[1], ARGV[4])
local cap, most, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local members
if redis.call('SCARD', KEYS[1]) > most then
  members = redis.call('SRANDMEMBER', KEYS[1], most)
else
  members = redis.call('SMEMBERS', KEYS[1])
end
local kept, skipped, spent = {}, 0, 0
for _, member in ipairs(members) do
  local size = string.len(member)
  if size > cap or spent + size > budget then
    skipped = skipped + 1
  else
    kept[#kept + 1] = member
    spent = spent + size
  end
end
return {kind, skipped, kept}
"""


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

    def database(
        self, clock: Callable[[], float] = time.monotonic, timeout: float = SOCKET_TIMEOUT
    ) -> SharedDatabase:
        """The server as a shared database (no connection is made until it is used)."""
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase  # noqa: F401
        except ImportError:
            raise ModuleNotFoundError(
                "--database redis://... needs the redis package: "
                "pip install 'stella-conform[redis]'"
            ) from None
        errors = (redis.exceptions.RedisError, OSError)
        hangs = (redis.exceptions.TimeoutError, TimeoutError)
        inner = RedisEntries(self.url, timeout)
        return SharedDatabase(inner, self.shown, errors, hangs=hangs, clock=clock)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()


def shown_name(name: bytes) -> str:
    """A Redis key's name as a message shows it: printable ASCII, the rest escaped (a key
    is a digest's bytes after its prefix; a server's text is not trusted either)."""
    return repr(name[:200])[2:-1]


class Refused(Exception):
    """The server answers, but a key cannot be used as the kit uses it: said once, and
    the other keys are still read and written."""


class WrongType(Refused):
    """A key holds something other than a set of entries (a string, a list, a hash...)."""

    def __init__(self, name: bytes, kind: str) -> None:
        self.name = name
        self.kind = kind
        super().__init__(
            f"holds {shown_name(name)} as a {shown_name(kind.encode()[:40])}, not as a set of "
            "entries: nothing is read or written there"
        )


class RedisEntries(ExampleDatabase):
    """Hypothesis's Redis layout, read under bounds the server applies (the module's
    docstring says how); written through Hypothesis's own class.

    It pickles as its URL: a ``-j`` worker connects on its own.  ``refused`` counts the
    entries the server was asked to leave out (too large, or past a key's bounds).
    """

    def __init__(self, url: str, timeout: float = SOCKET_TIMEOUT) -> None:
        super().__init__()
        self.url = url
        self.timeout = timeout
        self.refused = 0
        self._client: Any = None
        self._hypothesis: Any = None
        self._script: Any = None
        #: Why the server runs no script of the kit's (reads then ask MEMORY USAGE first).
        self._no_script: str | None = None
        #: Why the server tells no set's size either (nothing can be read within a bound).
        self._unbounded: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.url, self.timeout))

    def __repr__(self) -> str:
        return f"RedisEntries({redact(self.url)})"

    @property
    def redis(self) -> Any:
        """The client (connected on first use): one attempt per command, each bounded."""
        if self._client is None:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
            from redis.backoff import NoBackoff
            from redis.retry import Retry

            self._client = redis.Redis.from_url(
                self.url,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                # one attempt: a lost server is noticed at once and retried on our schedule
                retry=Retry(NoBackoff(), 0),
                health_check_interval=0,
            )
            self._hypothesis = RedisExampleDatabase(self._client, key_prefix=PREFIX)
            self._script = self._client.register_script(_READ_SCRIPT)
        return self._client

    @property
    def writer(self) -> Any:
        """Hypothesis's own Redis database on the same client (it publishes each change
        for Hypothesis's listeners, as a Hypothesis test sharing the server expects)."""
        self.redis  # noqa: B018 - connects
        return self._hypothesis

    # ------------------------------------------------------------------ reads

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return iter(self.read(key))

    def read(self, key: bytes) -> list[bytes]:
        """The entries under ``key`` that fit the bounds, at once (the server left the
        others out); :class:`Refused` when the key cannot be read within them."""
        from redis.exceptions import ResponseError

        name = PREFIX + key
        if self._no_script is None:
            try:
                client = self.redis  # (connected first: it registers the script)
                reply = self._script(keys=[name], args=self._bounds(), client=client)
            except ResponseError as exc:  # scripts refused (ACL, a renamed command...)
                self._no_script = f"{type(exc).__name__}: {exc}"[:200]
            else:
                kind, skipped, kept = _text(reply[0]), reply[1], reply[2]
                if kind not in ("set", "none"):
                    raise WrongType(name, kind)
                self.refused += int(skipped)
                return [value for value in kept if isinstance(value, bytes)]
        return self._read_by_size(name)

    def _bounds(self) -> list[int]:
        return [ENTRY_CAP, KEY_ENTRIES_CAP, KEY_BYTES_CAP, EXPIRE_SECONDS]

    def _read_by_size(self, name: bytes) -> list[bytes]:
        """Without the script: the set read whole if the server says it takes no more
        than the byte bound (a set of small integers, kept as integers, is sent as text: a
        few times that at most), else not at all."""
        from redis.exceptions import ResponseError

        if self._unbounded is not None:
            raise Refused(self._unbounded)
        client = self.redis
        kind = _text(client.type(name))
        if kind == "none":
            return []
        if kind != "set":
            raise WrongType(name, kind)
        try:
            size = client.memory_usage(name, samples=0)
        except ResponseError as exc:
            why = f"{type(exc).__name__}: {exc}"[:200]
            self._unbounded = (
                f"runs no script of the kit's ({self._no_script}) and tells no set's size "
                f"({why}): its entries cannot be read within a bound, and are not read"
            )
            raise Refused(self._unbounded) from None
        pipe = client.pipeline(transaction=False)
        pipe.expire(name, EXPIRE_SECONDS)
        pipe.scard(name)
        count = int(pipe.execute()[1])
        if size is None:
            return []
        if int(size) > KEY_BYTES_CAP:
            self.refused += count
            raise Refused(
                f"holds {shown_name(name)} in {int(size):,} bytes, over the {KEY_BYTES_CAP:,} "
                f"the kit reads under a key without its script, which the server refuses "
                f"({self._no_script}): not read"
            )
        values = client.srandmember(name, KEY_ENTRIES_CAP) if count > KEY_ENTRIES_CAP else None
        if values is None:
            values = client.smembers(name)
        kept = [v for v in values if isinstance(v, bytes) and len(v) <= ENTRY_CAP]
        self.refused += min(count, KEY_ENTRIES_CAP) - len(kept)
        return kept

    # ------------------------------------------------------------------ writes

    @contextlib.contextmanager
    def _named_types(self, *keys: bytes) -> Iterator[None]:
        """A write refused for a key's type (``WRONGTYPE``) as :class:`WrongType`."""
        from redis.exceptions import ResponseError

        try:
            yield
        except ResponseError as exc:
            if "WRONGTYPE" not in str(exc):
                raise
            for key in keys:
                kind = _text(self.redis.type(PREFIX + key))
                if kind not in ("set", "none"):
                    raise WrongType(PREFIX + key, kind) from None
            raise

    def save(self, key: bytes, value: bytes) -> None:
        with self._named_types(key):
            self.writer.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        with self._named_types(key):
            self.writer.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        with self._named_types(src, dest):
            self.writer.move(src, dest, value)

    def replace(self, key: bytes, old: list[bytes], new: list[bytes]) -> None:
        """Delete ``old`` and save ``new`` under ``key`` in one round trip (the kit's own
        records: no change is published to Hypothesis's listeners)."""
        name = PREFIX + key
        with self._named_types(key):
            pipe = self.redis.pipeline()
            if old:
                pipe.srem(name, *old)
            if new:
                pipe.sadd(name, *new)
            pipe.expire(name, EXPIRE_SECONDS)
            pipe.execute()

    def close(self) -> None:
        """Disconnect (a later command connects again)."""
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()


def _text(reply: object) -> str:
    """A status the server sent (a key's type), as text."""
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply)


@dataclass
class Loss:
    """When and why the shared database stopped answering; ``for_good``: it hung (no
    answer within the socket timeout), and is not tried again."""

    since: float
    error: str
    back: bool = False
    for_good: bool = False


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr)


@dataclass
class SharedDatabase(ExampleDatabase):
    """A database shared between machines, that may stop answering at any time.

    Every operation that fails (a server stopped, a network gone) marks the database
    lost and warns once; from then on the run goes on with the local directory alone,
    and the writes it could not make are kept (up to :data:`PENDING_CAP`).  Every
    :data:`RETRY_SECONDS` the next operation tries the server again, the kept writes
    first; when it answers, a second warning says so.  A server that does not answer in
    time (``hangs``: it accepts the connection and says nothing) is lost for good: each
    try would wait out the socket timeout again, out of the run's time.  What was never
    written is :meth:`unshared`, for the report.

    A key the server cannot use as the kit does (:class:`Refused`: another type of value
    under it, a set too large to read within the bounds) is named once, and skipped; the
    server is not lost for it.

    Pickled for a ``-j`` worker, it keeps what it knows of the server (lost, hung, the
    warnings given) and leaves the writes it keeps with the process that kept them.
    """

    inner: ExampleDatabase
    shown: str
    errors: tuple[type[BaseException], ...]
    hangs: tuple[type[BaseException], ...] = (TimeoutError,)
    clock: Callable[[], float] = time.monotonic
    warn: Callable[[str], None] = _to_stderr
    loss: Loss | None = None
    pending: dict[bytes, set[bytes]] = field(default_factory=dict)
    dropped: int = 0
    saved: int = 0
    #: Writes the server refused for their key (another type of value there), by key.
    refused_writes: dict[bytes, int] = field(default_factory=dict)
    told: set[str] = field(default_factory=set)
    _next_try: float = 0.0

    def __post_init__(self) -> None:
        super().__init__()

    def __repr__(self) -> str:
        return f"SharedDatabase({self.shown})"

    def __hash__(self) -> int:
        return hash(self.shown)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SharedDatabase) and other.shown == self.shown

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(pending={}, dropped=0, saved=0, refused_writes={})
        return state

    @property
    def refused(self) -> int:
        """Entries the server was asked to leave out (too large, past a key's bounds)."""
        return int(getattr(self.inner, "refused", 0))

    @property
    def available(self) -> bool:
        """Whether to send the next command to the server: yes while it answers; once
        lost, every :data:`RETRY_SECONDS` (the kept writes made first); never once hung."""
        if self.loss is None or self.loss.back:
            return True
        if self.loss.for_good:
            return False
        now = self.clock()
        if now < self._next_try:
            return False
        self._next_try = now + RETRY_SECONDS
        if not self.pending:
            return True  # the next command is the try
        try:
            for key, values in list(self.pending.items()):
                for value in list(values):
                    try:
                        self.inner.save(key, value)
                    except Refused as exc:
                        self._refused(exc, key, 1)
                    values.discard(value)
                del self.pending[key]
        except self.errors as exc:
            self._lost(exc)
            return False
        self._answered()
        return True

    def _answered(self) -> None:
        """The server answered: if it was lost, it is back."""
        if self.loss is not None and not self.loss.back:
            self.loss.back = True
            self.warn(f"warning: the shared database {self.shown} answers again; writes resumed")

    def _lost(self, exc: BaseException) -> None:
        reason = terminal_safe(f"{type(exc).__name__}: {exc}"[:400]).strip()
        hung = isinstance(exc, self.hangs)
        if self.loss is not None and not self.loss.back:
            self.loss.for_good = self.loss.for_good or hung  # still lost: said already
            return
        self.loss = Loss(self.clock(), reason[:300], for_good=hung)
        self._next_try = self.clock() + RETRY_SECONDS
        if hung:
            self.warn(
                f"warning: the shared database {self.shown} does not answer ({reason[:200]}); "
                "going on without it for the rest of the run (what it would have got is "
                "kept in the local database)"
            )
        else:
            self.warn(
                f"warning: the shared database {self.shown} does not answer ({reason[:200]}); "
                "going on with the local database, and writing what it missed when it answers"
            )

    def _refused(self, exc: Refused, key: bytes | None = None, writes: int = 0) -> None:
        """A key the server cannot use as the kit does: said once (a few such at most)."""
        if key is not None and writes:
            self.refused_writes[key] = self.refused_writes.get(key, 0) + writes
        text = terminal_safe(str(exc)[:600])
        if text not in self.told and len(self.told) < WARNINGS_CAP:
            self.told.add(text)
            self.warn(f"warning: the shared database {self.shown} {text}")

    def fetch(self, key: bytes) -> Iterable[bytes]:
        if not self.available:
            return
        try:
            values = list(self.inner.fetch(key))
        except Refused as exc:
            self._refused(exc)
            self._answered()
            return
        except self.errors as exc:
            self._lost(exc)
            return
        self._answered()
        yield from values

    def save(self, key: bytes, value: bytes) -> None:
        if self.available:
            try:
                self.inner.save(key, value)
                self.saved += 1
                self._answered()
                return
            except Refused as exc:
                self._refused(exc, key, 1)
                self._answered()
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
            self._answered()
        except Refused as exc:
            self._refused(exc)
        except self.errors as exc:
            self._lost(exc)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self.available:
            self.delete(src, value)
            self.save(dest, value)
            return
        try:
            self.inner.move(src, dest, value)
            self._answered()
        except Refused as exc:
            self._refused(exc, dest, 1)
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
                self._answered()
                return
            except Refused as exc:
                self._refused(exc, key, len(new))
                return
            except self.errors as exc:
                self._lost(exc)
        for value in new:
            self.save(key, value)  # kept for when it answers again

    def unshared(self) -> dict[bytes, int]:
        """Writes never made, by key (the ones given up on under the key ``b""``)."""
        out = {key: len(values) for key, values in self.pending.items() if values}
        for key, count in self.refused_writes.items():
            out[key] = out.get(key, 0) + count
        if self.dropped:
            out[b""] = self.dropped
        return out

    def close(self) -> None:
        """Make what is still kept, if the server answers now; then disconnect."""
        if self.loss is not None and not self.loss.back:
            self._next_try = 0.0
            self.available  # noqa: B018 - one last attempt
        close = getattr(self.inner, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()
