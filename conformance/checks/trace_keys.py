"""What the trace checks remember across a whole journal, in bounded memory.

A journal has no length limit, and some rules look back over all of it: a call id
requested twice, an effect performed again after a resume, a frame set composed again
with another digest.  Each such check keeps a :class:`KeyTable` (key: an id; value: a
short tuple such as the seq where the id was first seen).  While the tables together
hold less than ``memory`` bytes (an estimate), they are plain dicts; past that, every
table moves into one SQLite database in a private temporary folder, and the rest of the
journal is checked against it.  Memory then stays flat however long the journal, and
the answers are the same either way: the tests grade every fixture with ``memory=0``.

The folder is made with :func:`stella_conform.stopping.temp_dir` (removed when the
check ends or the kit is stopped), under ``TMPDIR``.  If it cannot be made or written
(a full disk), :class:`KeysUnavailable` says where and why.

Example::

    with Keys() as keys:
        done = keys.table()
        if done.get("effect-1") is None:
            done.put("effect-1", (7, 0))
"""

from __future__ import annotations

import heapq
import marshal
import sqlite3
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

#: Bytes of remembered keys (an estimate) held as dicts before they move to disk.
MEMORY = 8 * 1024 * 1024
#: What one dict entry costs beyond its strings (the slot, the tuple, the numbers).
ENTRY_COST = 160
#: Pages of the on-disk tables SQLite keeps in memory (``cache_size`` in KiB when negative).
CACHE_KIB = 4096
#: Keys looked up or added by one statement in :meth:`KeyTable.get_many` and
#: :meth:`KeyTable.add_many` (SQLite takes at least 999 parameters).
BATCH = 500

Value = tuple[Any, ...]


class KeysUnavailable(Exception):
    """The on-disk tables cannot be made or written (a full or read-only ``TMPDIR``):
    ``where`` is the folder the private one is made in, ``cause`` what failed."""

    def __init__(self, where: str, cause: str) -> None:
        super().__init__(f"{where}: {cause}")
        self.where = where
        self.cause = cause


def _cost(key: str, value: Value) -> int:
    return ENTRY_COST + len(key) + sum(len(v) for v in value if isinstance(v, str))


def _blob(key: str) -> bytes:
    # a journal's strings may hold lone surrogates; UTF-8 keeps code-point order
    return key.encode("utf-8", "surrogatepass")


class Keys:
    """The tables of one journal's checks; a context manager that removes the folder."""

    def __init__(self, memory: int = MEMORY) -> None:
        self.memory = memory
        self.held = 0  # bytes of the tables in memory, an estimate
        self.tables: list[KeyTable] = []
        self.db: sqlite3.Connection | None = None
        self.folder: str | None = None
        self.where = ""  # the folder ``folder`` is made in

    def __enter__(self) -> Keys:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def table(self) -> KeyTable:
        """A new, empty table (in memory)."""
        table = KeyTable(self, len(self.tables))
        self.tables.append(table)
        return table

    def over_budget(self) -> None:
        """Past the budget, move the largest tables to disk until the rest fit in it (a
        table of the calls still open, emptied at every prompt, stays in memory)."""
        in_memory = [t for t in self.tables if t.rows is not None]
        for table in sorted(in_memory, key=lambda t: t.held, reverse=True):
            if self.held <= self.memory:
                return
            table.move_to_disk()

    def sql(self, statement: str, *args: Any) -> sqlite3.Cursor:
        """Run one statement on the on-disk tables (:class:`KeysUnavailable` if it fails)."""
        db = self.db if self.db is not None else self._open()
        try:
            return db.execute(statement, args)
        except sqlite3.Error as exc:
            raise KeysUnavailable(self.where, _why(exc)) from None

    def sql_many(self, statement: str, rows: Iterable[tuple[Any, ...]]) -> None:
        """Run one statement for each of ``rows`` (:class:`KeysUnavailable` if it fails)."""
        db = self.db if self.db is not None else self._open()
        try:
            db.executemany(statement, rows)
        except sqlite3.Error as exc:
            raise KeysUnavailable(self.where, _why(exc)) from None

    def _open(self) -> sqlite3.Connection:
        from stella_conform import stopping

        self.where = tempfile.gettempdir()
        try:
            self.folder = stopping.temp_dir("stella-conform-trace-")
            db = sqlite3.connect(Path(self.folder) / "keys.sqlite", isolation_level="DEFERRED")
            # one private file, written only by this process and thrown away at the end:
            # no rollback journal, no fsync; one open transaction, so pages spill to the
            # file as the cache fills and nothing is committed
            for pragma in ("journal_mode=OFF", "synchronous=OFF", "locking_mode=EXCLUSIVE"):
                db.execute(f"PRAGMA {pragma}").fetchall()
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        except (OSError, sqlite3.Error) as exc:
            raise KeysUnavailable(self.where, _why(exc)) from None
        self.db = db
        return db

    def close(self) -> None:
        """Drop every table and remove the folder (the tables cannot be used after)."""
        from stella_conform import stopping

        db, folder = self.db, self.folder
        self.db = self.folder = None
        if db is not None:
            db.close()
        if folder is not None:
            stopping.remove_dir(folder)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


class KeyTable:
    """One map from a string key to a short tuple (of ints, strings, None), in memory or
    on disk.  The caller knows whether a key is there (it asked :meth:`get` first), so
    each change is one statement: :meth:`add` a new key, :meth:`replace` a present one."""

    def __init__(self, keys: Keys, number: int) -> None:
        self.keys = keys
        self.name = f"t{number}"
        self.count = 0
        self.held = 0  # bytes, an estimate, while in memory
        self.rows: dict[str, Value] | None = {}

    def _hold(self, cost: int) -> None:
        self.held += cost
        self.keys.held += cost

    def move_to_disk(self) -> None:
        rows, self.rows = self.rows or {}, None
        self._hold(-self.held)
        self.keys.sql(f"CREATE TABLE {self.name} (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        self._insert(rows.items())

    def _insert(self, rows: Iterable[tuple[str, Value]]) -> None:
        self.keys.sql_many(
            f"INSERT INTO {self.name} VALUES (?, ?)",
            ((_blob(k), marshal.dumps(v)) for k, v in rows),
        )

    def __len__(self) -> int:
        return self.count

    def get(self, key: str) -> Value | None:
        if self.rows is not None:
            return self.rows.get(key)
        row = self.keys.sql(f"SELECT v FROM {self.name} WHERE k = ?", _blob(key)).fetchone()
        return None if row is None else tuple(marshal.loads(row[0]))

    def get_many(self, keys: Sequence[str]) -> dict[str, Value]:
        """Those of ``keys`` (at most :data:`BATCH`) the table holds, with their values."""
        if self.rows is not None:
            rows = self.rows
            return {key: rows[key] for key in keys if key in rows}
        blobs = [_blob(key) for key in keys]
        marks = ", ".join("?" * len(blobs))
        found = self.keys.sql(f"SELECT k, v FROM {self.name} WHERE k IN ({marks})", *blobs)
        return {
            bytes(k).decode("utf-8", "surrogatepass"): tuple(marshal.loads(v)) for k, v in found
        }

    def add_many(self, rows: Sequence[tuple[str, Value]]) -> None:
        """Add each key, none of which is in the table or twice in ``rows``."""
        if self.rows is None:
            self.count += len(rows)
            self._insert(rows)
            return
        for key, value in rows:
            self.add(key, value)

    def add(self, key: str, value: Value) -> None:
        """Add ``key``, which is not in the table."""
        self.count += 1
        if self.rows is None:
            self.keys.sql(
                f"INSERT INTO {self.name} VALUES (?, ?)", _blob(key), marshal.dumps(value)
            )
            return
        self.rows[key] = value
        self._hold(_cost(key, value))
        if self.keys.held > self.keys.memory:
            self.keys.over_budget()

    def replace(self, key: str, value: Value) -> None:
        """Give ``key``, which is in the table, a new value."""
        if self.rows is not None:
            self._hold(_cost(key, value) - _cost(key, self.rows[key]))
            self.rows[key] = value
            return
        self.keys.sql(f"UPDATE {self.name} SET v = ? WHERE k = ?", marshal.dumps(value), _blob(key))

    def discard(self, key: str) -> None:
        """Remove ``key`` if it is there."""
        if self.rows is not None:
            value = self.rows.pop(key, None)
            if value is not None:
                self.count -= 1
                self._hold(-_cost(key, value))
            return
        self.count -= self.keys.sql(f"DELETE FROM {self.name} WHERE k = ?", _blob(key)).rowcount

    def clear(self) -> None:
        if self.rows is not None:
            self.rows.clear()
            self._hold(-self.held)
        elif self.count:
            self.keys.sql(f"DELETE FROM {self.name}")
        self.count = 0

    def first(self, n: int) -> list[str]:
        """The ``n`` smallest keys, in order (code-point order, as ``sorted`` gives)."""
        if self.rows is not None:
            return heapq.nsmallest(n, self.rows)
        rows = self.keys.sql(f"SELECT k FROM {self.name} ORDER BY k LIMIT ?", n)
        return [bytes(k).decode("utf-8", "surrogatepass") for (k,) in rows]
