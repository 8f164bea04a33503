"""The shared Redis database read as input: bounded on the server before anything is sent,
a key of another type named as such, a server that hangs given up once, and the database
carried to ``-j`` workers.

Against a real ``redis-server`` (:mod:`redis_server`).  What other workers' members are is
whatever anyone who can write the server makes them: the large ones here are built on the
server itself (``string.rep`` in a script), so this process holds none of them unless
the kit reads them.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis.database import choices_to_bytes
from redis_server import HungPeer, RedisServer, need_redis_package, running_server

from stella_conform.conformance.store.database import (
    ENTRY_CAP,
    KEY_BYTES_CAP,
    KitDatabase,
    RedisSource,
    SafeDirectoryDatabase,
    SharedDatabase,
)
from stella_conform.conformance.store.shared import PREFIX, RedisEntries

MIB = 1024 * 1024
GOOD = choices_to_bytes((1, "x", b"y"))
OTHER = choices_to_bytes((2, "z"))


@pytest.fixture(autouse=True)
def _redis_package() -> None:
    need_redis_package()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with running_server(tmp_path) as srv:
        yield srv


def add_large(server: RedisServer, name: bytes, size: int, fill: str) -> None:
    """A member of ``size`` bytes under ``name``, made on the server (none sent from here)."""
    script = "return redis.call('SADD', KEYS[1], string.rep(ARGV[1], tonumber(ARGV[2])))"
    server.client().eval(script, 1, name, fill, size)


def shared_db(url: str, said: list[str], **kw: Any) -> SharedDatabase:
    db = RedisSource.parse(url).database(**kw)
    db.warn = said.append
    return db


# ---------------------------------------------------------------------- bounded reads


def test_a_member_over_the_entry_cap_is_never_sent(server: RedisServer) -> None:
    """Two 40 MiB members beside an entry of the usual size: the read returns the usual
    one, counts the others as refused, and the reading process's peak memory does not
    grow by their size (read whole, a set's members are all held before any is looked
    at)."""
    raw = server.client()
    raw.sadd(PREFIX + b"key", GOOD)
    add_large(server, PREFIX + b"key", 40 * MIB, "a")
    add_large(server, PREFIX + b"key", 40 * MIB, "b")
    code = textwrap.dedent(f"""
        import re
        from stella_conform.conformance.store.database import KitDatabase, RedisSource
        def peak():
            status = open("/proc/self/status").read()
            return int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024
        db = KitDatabase(None, RedisSource.parse({server.url!r}).database())
        list(db.fetch(b"warm up: connected, the script loaded"))
        before = peak()
        print(list(db.fetch(b"key")), db.refused, peak() - before)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    entries, refused, grown = out.stdout.rsplit(" ", 2)
    assert entries == f"[{GOOD!r}]" and refused == "2"
    assert int(grown) < 16, f"the read grew the process by {grown} MiB"


def test_a_key_is_read_within_its_byte_budget(server: RedisServer) -> None:
    """Entries of the largest size, more of them than the byte budget holds: as many as
    fit are read, the others counted as refused (none is cut short)."""
    raw = server.client()
    size = ENTRY_CAP - 100
    count = KEY_BYTES_CAP // size + 5
    for i in range(count):
        raw.sadd(PREFIX + b"key", bytes([i]) * size)
    said: list[str] = []
    db = KitDatabase(None, shared_db(server.url, said))
    read = list(db.shared.fetch(b"key"))  # type: ignore[union-attr]
    assert len(read) == KEY_BYTES_CAP // size and all(len(v) == size for v in read)
    assert db.refused == count - len(read)
    assert said == [] and db.shared is not None and db.shared.loss is None


def test_a_server_that_runs_no_scripts_is_read_by_size(server: RedisServer) -> None:
    """A user the server lets run no script (its ACL) reads a set whose size, as the
    server tells it (MEMORY USAGE), is within the byte budget, and not one over it (said
    once, with the key; the other keys still read); a user that may not ask the size
    either reads nothing, and is told why once."""
    raw = server.client()
    every = ("on", ">pw", "~*", "&*", "+@all", "-@scripting")
    raw.execute_command("ACL", "SETUSER", "noscript", *every)
    raw.execute_command("ACL", "SETUSER", "blind", *every, "-memory")
    raw.sadd(PREFIX + b"small", GOOD, OTHER)
    raw.sadd(PREFIX + b"large", GOOD)
    add_large(server, PREFIX + b"large", 40 * MIB, "a")
    said: list[str] = []
    db = KitDatabase(None, shared_db(server.url_as("noscript", "pw"), said))
    assert sorted(db.fetch(b"small")) == sorted([GOOD, OTHER])
    assert list(db.fetch(b"large")) == [] and db.refused == 2
    assert list(db.fetch(b"large")) == []
    assert len(said) == 1 and "hypothesis-example:large" in said[0], said
    assert "without its script" in said[0]
    assert sorted(db.fetch(b"small")) == sorted([GOOD, OTHER])
    assert db.shared is not None and db.shared.loss is None
    blind: list[str] = []
    db = KitDatabase(None, shared_db(server.url_as("blind", "pw"), blind))
    assert list(db.fetch(b"small")) == [] and list(db.fetch(b"small")) == []
    assert len(blind) == 1 and "cannot be read within a bound" in blind[0], blind
    db.save(b"small", choices_to_bytes((3,)))  # writes still go
    assert raw.scard(PREFIX + b"small") == 3


# ---------------------------------------------------------------------- wrong types


def test_a_key_of_another_type_is_named_with_its_type(server: RedisServer) -> None:
    """A string, a list and a hash where the kit keeps sets: each read and write there
    says so once (the key, its type), the server is not taken for lost, and the other
    keys are read and written as before; the writes refused are reported as not shared."""
    raw = server.client()
    raw.set(PREFIX + b"string", b"anything")
    raw.rpush(PREFIX + b"list", b"anything")
    raw.hset(PREFIX + b"hash", b"field", b"anything")
    raw.sadd(PREFIX + b"good", GOOD)
    said: list[str] = []
    shared = shared_db(server.url, said)
    db = KitDatabase(None, shared)
    for key in (b"string", b"list", b"hash"):
        assert list(db.fetch(key)) == []
    db.save(b"string", OTHER)
    shared.replace(b"list", [], [OTHER, GOOD])
    db.delete(b"hash", OTHER)
    assert list(db.fetch(b"good")) == [GOOD]
    db.save(b"good", OTHER)
    assert raw.scard(PREFIX + b"good") == 2
    assert shared.loss is None
    assert not any("does not answer" in line for line in said), said
    assert len(said) == 3, said
    for key, kind in ((b"string", "string"), (b"list", "list"), (b"hash", "hash")):
        (line,) = [line for line in said if f"hypothesis-example:{key.decode()} " in line]
        assert f"as a {kind}, not as a set of entries" in line
    assert shared.unshared() == {b"string": 1, b"list": 2}


# ---------------------------------------------------------------------- a hung server


def test_a_hung_server_is_given_up_once_and_not_waited_on_again() -> None:
    """A server that accepts the connection and never answers: the first command waits
    out the socket timeout, the database is lost for good with one warning, and no later
    read, write, retry or closing waits on it again (each would cost the run a socket
    timeout); what it would have got is reported as not shared."""
    now = [0.0]
    said: list[str] = []
    with HungPeer() as peer:
        shared = shared_db(peer.url, said, clock=lambda: now[0], timeout=0.5)
        db = KitDatabase(None, shared)
        assert list(db.fetch(b"key")) == []
        assert len(peer.accepted) == 1
        for _ in range(3):
            now[0] += 60.0  # past every retry time
            db.save(b"key", GOOD)
            assert list(db.fetch(b"key")) == []
            shared.replace(b"other", [], [OTHER])
        shared.close()
        assert len(peer.accepted) == 1
    assert len(said) == 1 and "does not answer" in said[0], said
    assert "for the rest of the run" in said[0]
    assert shared.loss is not None and shared.loss.for_good and not shared.loss.back
    assert shared.unshared() == {b"key": 1, b"other": 1}


def test_a_server_lost_and_back_is_not_said_to_answer_until_it_does(
    tmp_path: Path,
) -> None:
    """Stopped, the server is retried now and then; a retry with nothing to write is
    the next command itself, and only its answer says the server is back."""
    now = [0.0]
    said: list[str] = []
    srv = RedisServer(tmp_path)
    srv.start()
    shared = shared_db(srv.url, said, clock=lambda: now[0])
    shared.save(b"key", GOOD)
    srv.stop()
    assert list(shared.fetch(b"key")) == []
    now[0] += 60.0
    assert list(shared.fetch(b"key")) == []  # retried: still refused, nothing more said
    assert len(said) == 1 and "does not answer" in said[0], said
    assert shared.loss is not None and not shared.loss.for_good


# ---------------------------------------------------------------------- -j workers


def test_the_database_pickles_for_a_worker_with_what_it_knows(
    server: RedisServer, tmp_path: Path
) -> None:
    """A ``-j`` worker receives the database pickled: it connects on its own and reads
    and writes the same server; a server given up in the parent stays given up (no
    worker waits on it again, nor says so again); the parent's kept writes stay with it."""
    db = KitDatabase(SafeDirectoryDatabase(str(tmp_path / "local")), shared_db(server.url, []))
    db.save(b"key", GOOD)
    worker = pickle.loads(pickle.dumps(db))
    assert isinstance(worker, KitDatabase) and worker.shared is not None
    assert isinstance(worker.shared.inner, RedisEntries)
    assert worker.fetch_local(b"key") == worker.fetch_shared(b"key") == [GOOD]
    worker.shared.save(b"key", OTHER)
    assert sorted(db.fetch_shared(b"key")) == sorted([GOOD, OTHER])
    said: list[str] = []
    with HungPeer() as peer:
        hung = shared_db(peer.url, said, timeout=0.5)
        hung.save(b"key", GOOD)
        assert len(said) == 1 and len(peer.accepted) == 1
        again = pickle.loads(pickle.dumps(hung))
        again.warn = said.append
        again.save(b"key", OTHER)
        assert list(again.fetch(b"key")) == []
        assert len(peer.accepted) == 1 and len(said) == 1
        assert again.unshared() == {b"key": 1} and hung.unshared() == {b"key": 1}
