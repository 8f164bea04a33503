"""A lasting case cache: a check's generated cases, stored once, replayed by later runs.

Under a fixed seed the kit draws the same cases for every client that passes them all:
the kit's generation (about half of a run's CPU: Hypothesis's engine and draws, the runs'
expansion, the mutations, the careful decode) is the same work every time.  So a check's
cases are written here once, in the order they were graded, and a later run (another
client, the next CI run after a cache restore) grades them straight from the file.  At a
case the client fails, Hypothesis runs as usual: it draws the same cases again up to the
failure and shrinks it, so the report is the one a run without the cache gives.  The
entries an example database holds for the check are never in the file: a run replays
them after the check's strata (the index says how many of the cases those are), whether
its cases are drawn or read from here.

The key is everything that decides which cases are drawn: the kit's version and a digest
of the code that draws them and of the oracle that reads them (so an edited generator
never replays stale cases), Hypothesis's version, the vocabulary as the client sees it,
the claims, the check's definition, the seed and the example count.  Any change is
another key, so another file; files not used for a while go first when the folder is
over its size (:data:`FOLDER_LIMIT`).

A cache file is input: another process, another machine (a restored CI cache) or a
person may have written it.  It is trusted only when its index's HMAC verifies under this
run's secret (:mod:`.cachekey`), which the folder does not hold: the index lists the
SHA-256 of every case, so no case can be added, dropped or changed by whoever lacks the
secret.  It is read through :mod:`safe_files` (a regular file, never a link, never past a
cap), its index is validated before any case is graded (types, sizes, known mutation and
reading names, no more cases than the run asks for), and every case's bytes are checked
against their SHA-256 when read.  It holds no verdicts: what a correct client does with a stream
is worked out again from the stream's bytes (the reference decoder's plain pass); only
the registered points the careful decode found are kept, and at worst a wrong list costs
a client that takes another reading a failure (the replayed case, decoded afresh, says
so), never a pass.  A file that fails any test is removed and the check is generated
afresh.

File layout: the cases' bytes one after another, then the index (JSON), then a footer of
:data:`MAGIC`, the index's offset and length, and the index's HMAC: written front to back
as cases are graded and renamed into place at the end, read case by case, so memory holds
one case.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import struct
import sys
import weakref
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Any

from stella_conform import stopping
from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.kinds import KINDS
from stella_conform.conformance.store.cachekey import KEY_SIZE, sign, verifies
from stella_conform.generators.engine.seeded import local_constants_digest
from stella_conform.safe_files import RefusedFile, open_regular
from stella_conform.schemas.vocabulary import Vocabulary

#: The file format; a new one is another key (old files are simply never read again).
#: 2: the index says how many of the cases are the check's strata (``strata``);
#: 3: the footer holds the index's HMAC.
FORMAT = 3
MAGIC = b"stella-conform-cases-2\n"
_FOOTER = struct.Struct(f"<{len(MAGIC)}sQQ{KEY_SIZE}s")
SUFFIX = ".cases"
#: The largest index the kit reads (a few hundred bytes per case).
INDEX_CAP = 16 * 1024 * 1024
#: The largest case (the generators' megabyte texts are far below it).
CASE_CAP = 64 * 1024 * 1024
#: The most cases one file may list.
CASES_CAP = 100_000
#: The size the folder is kept under: the least recently used files go first.
FOLDER_LIMIT = 1024 * 1024 * 1024

#: What decides the cases a check draws and the oracle's reading of them, relative to
#: the package: a change to any of these files is a new key.
_CODE = ("generators", "schemas", "oracle", "conformance/checks", "conformance/suite",
         "conformance/kinds", "conformance/store/casecache.py")  # fmt: skip


class CacheDamaged(Exception):
    """A cache file that fails validation (it is removed; the check is generated afresh)."""


class NotAuthenticated(CacheDamaged):
    """A cache file whose index's HMAC does not verify under this run's secret: written
    under another secret (another machine, a fork's job) or changed since."""


@cache
def code_digest() -> str:
    """SHA-256 over the code and data that decide which cases are drawn and how they read
    (the same for a wheel and an editable checkout of the same tree)."""
    import hypothesis

    import stella_conform

    package = Path(stella_conform.__file__).parent
    h = hashlib.sha256()
    h.update(f"hypothesis {hypothesis.__version__}; python {sys.version}".encode())
    for name in _CODE:
        root = (package / name).resolve()  # the package's folders are links in a checkout
        files = sorted(root.rglob("*")) if root.is_dir() else [root]
        for path in files:
            if path.suffix in (".py", ".json") and path.is_file():
                where = f"{name}/{path.relative_to(root)}" if root.is_dir() else name
                h.update(where.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


#: The digest of each vocabulary's schema document, worked out once a vocabulary.
_DOCUMENTS: weakref.WeakKeyDictionary[Vocabulary, str] = weakref.WeakKeyDictionary()


def _document_digest(vocab: Vocabulary) -> str:
    """A digest of the schema document the vocabulary was built from, as it was parsed.

    Not of the file it came from: that was read once, through the safe reader, when the
    vocabulary was made; reading it again here would be a second, unchecked reader of a
    file the user names, and could key the cases on a file edited since."""
    found = _DOCUMENTS.get(vocab)
    if found is None:
        text = json.dumps(vocab.root, sort_keys=True, default=str)
        found = _DOCUMENTS[vocab] = hashlib.sha256(text.encode()).hexdigest()
    return found


def cache_key(
    check: Check,
    vocab: Vocabulary,
    *,
    seed: int,
    examples: int,
    claims: Mapping[str, Any],
) -> str:
    """The key of a check's generated cases (see the module)."""
    from stella_conform import __version__

    parts = {
        "format": FORMAT,
        "kit": __version__,
        "code": code_digest(),
        "constants": local_constants_digest(),
        "check": [check.id, check.input, list(check.mutations), check.valid_runs],
        "vocabulary": [vocab.ident, sorted(vocab.known), _document_digest(vocab)],
        "claims": claims,
        "seed": seed,
        "examples": examples,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


# ---------------------------------------------------------------------- writing


class CacheWriter:
    """Collects a check's cases as they are graded; :meth:`commit` puts the file in place."""

    def __init__(self, folder: Path, key: str, secret: bytes) -> None:
        self.folder = folder
        self.path = folder / f"{key}{SUFFIX}"
        self.key = key
        self.secret = secret
        self.entries: list[dict[str, Any]] = []
        self.offset = 0
        self.temp: Path | None = None
        self.fh: IO[bytes] | None = None
        self.failed = False

    def add(self, case: GradedCase) -> None:
        """One graded case, in grading order (a kind not kept spoils the file: no commit)."""
        if self.failed:
            return
        kind = KINDS.get(case.kind)
        if kind is None or not kind.cached or len(case.stream) > CASE_CAP:
            self.failed = True
            return
        try:
            fh = self._open()
            fh.write(case.stream)
        except OSError:
            self.failed = True
            return
        entry: dict[str, Any] = {
            "kind": case.kind,
            "name": case.name,
            "size": len(case.stream),
            "sha256": hashlib.sha256(case.stream).hexdigest(),
            "mutations": list(case.mutations),
            **kind.cache_fields(case),
        }
        self.entries.append(entry)
        self.offset += len(case.stream)

    def _open(self) -> IO[bytes]:
        if self.fh is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.temp = self.folder / f".{self.key}{SUFFIX}.{secrets.token_hex(6)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            # a stop signal (in a -j worker: clean_up, then exit at once) removes it
            with stopping.signals_held():  # tracked first: a SIGKILL cannot fall between
                stopping.track_file(self.temp)
                try:
                    fd = os.open(self.temp, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
                except OSError:
                    stopping.untrack_file(self.temp)
                    raise
            self.fh = os.fdopen(fd, "wb")
        return self.fh

    def commit(self, strata: int = 0) -> None:
        """Write the index and the footer, and rename the file into place (or drop it).
        ``strata``: how many of the cases, the first ones, are the check's strata (a run
        replays the example database's entries for the check after them)."""
        if self.failed or not self.entries or not 0 <= strata <= len(self.entries):
            self.abort()
            return
        index = json.dumps(
            {"format": FORMAT, "key": self.key, "strata": strata, "cases": self.entries},
            separators=(",", ":"),
        ).encode()
        try:
            fh = self._open()
            fh.write(index)
            mac = sign(self.secret, self.key, index)
            fh.write(_FOOTER.pack(MAGIC, self.offset, len(index), mac))
            fh.close()
            self.fh = None
            assert self.temp is not None
            os.replace(self.temp, self.path)
            stopping.untrack_file(self.temp)
            self.temp = None
        except OSError:
            self.abort()
            return
        _keep_under(self.folder, FOLDER_LIMIT)

    def abort(self) -> None:
        if self.fh is not None:
            with contextlib.suppress(OSError):
                self.fh.close()
            self.fh = None
        if self.temp is not None:
            with contextlib.suppress(OSError):
                self.temp.unlink()
            stopping.untrack_file(self.temp)
            self.temp = None


#: A temporary file older than this was left by a kit that was killed while writing it.
STALE_TEMP = 3600.0


def _keep_under(folder: Path, limit: int) -> None:
    """Remove the least recently used cache files until the folder is under ``limit``
    (and the temporary files of kits killed while writing)."""
    import time

    try:
        files = [(p.lstat(), p) for p in folder.glob(f"*{SUFFIX}") if p.is_file()]
        temps = [(p.lstat(), p) for p in folder.glob(f".*{SUFFIX}.*.tmp")]
    except OSError:
        return
    for st, path in temps:
        if st.st_mtime < time.time() - STALE_TEMP:
            with contextlib.suppress(OSError):
                path.unlink()
    total = sum(s.st_size for s, _ in files)
    for st, path in sorted(files, key=lambda f: f[0].st_mtime):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= st.st_size


# ---------------------------------------------------------------------- reading


@dataclass
class CachedCases:
    """A cache file whose index passed validation: its cases, read and checked one by one."""

    path: Path
    key: str
    secret: bytes
    entries: list[dict[str, Any]]
    #: How many of the cases, the first ones, are the check's strata.
    strata: int
    vocab: Vocabulary
    reads: frozenset[str] | None
    check: Check
    _fh: IO[bytes] | None = field(default=None, repr=False)

    def cases(self) -> Generator[GradedCase, None, None]:
        """Each case, its bytes checked against their digest (:class:`CacheDamaged` if not)."""
        with open_regular(self.path, follow=False) as fh:
            for entry in self.entries:
                data = fh.read(entry["size"])
                digest = hashlib.sha256(data).hexdigest()
                if len(data) != entry["size"] or digest != entry["sha256"]:
                    raise CacheDamaged(f"{self.path.name}: a case's bytes do not match its digest")
                yield KINDS[entry["kind"]].from_cache(entry, data, self.vocab, self.reads)

    def touch(self) -> None:
        """Mark the file used (the folder's size limit removes the least recently used)."""
        with contextlib.suppress(OSError):
            os.utime(self.path)


def open_cached(
    folder: Path,
    key: str,
    check: Check,
    vocab: Vocabulary,
    reads: frozenset[str] | None,
    *,
    secret: bytes,
    examples: int,
) -> tuple[CachedCases | None, str | None]:
    """The check's cached cases, if a file this run's secret authenticates holds them, and
    otherwise why a file there was refused (it is removed).  ``examples``: the random
    examples the run asks for; a file listing more is refused."""
    path = folder / f"{key}{SUFFIX}"
    try:
        strata, entries = _read_index(path, key, check, secret, examples)
    except FileNotFoundError:
        return None, None
    except NotAuthenticated as exc:
        discard(path)
        return None, str(exc)
    except (OSError, CacheDamaged, ValueError, KeyError, TypeError) as exc:
        discard(path)
        return None, f"damaged ({exc})"
    return CachedCases(path, key, secret, entries, strata, vocab, reads, check), None


def discard(path: Path) -> None:
    """Remove a cache file that failed validation (never what a link points to)."""
    with contextlib.suppress(OSError):
        if path.is_symlink() or path.is_file():
            path.unlink()


def _read_index(
    path: Path, key: str, check: Check, secret: bytes, examples: int
) -> tuple[int, list[dict[str, Any]]]:
    with open_regular(path, follow=False) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < _FOOTER.size:
            raise CacheDamaged("shorter than its footer")
        fh.seek(size - _FOOTER.size)
        magic, offset, length, mac = _FOOTER.unpack(fh.read(_FOOTER.size))
        if magic != MAGIC or length > INDEX_CAP or offset + length + _FOOTER.size != size:
            raise CacheDamaged("not a case cache file of this format")
        fh.seek(offset)
        raw = fh.read(length)
    if not verifies(secret, key, raw, mac):  # before a byte of it is parsed
        raise NotAuthenticated("not authenticated by this run's cache key")
    index = json.loads(raw)
    if not isinstance(index, dict) or index.get("format") != FORMAT or index.get("key") != key:
        raise CacheDamaged("another key's or format's index")
    entries = index.get("cases")
    if not isinstance(entries, list) or not 0 < len(entries) <= CASES_CAP:
        raise CacheDamaged("no list of cases")
    strata = index.get("strata")
    if type(strata) is not int or not 0 <= strata <= len(entries):
        raise CacheDamaged("no count of the strata among the cases")
    if len(entries) - strata > examples:
        raise CacheDamaged(f"more random examples than the {examples} the run asks for")
    total = 0
    for entry in entries:
        _validate(entry, check)
        total += entry["size"]
    if total != offset:
        raise CacheDamaged("the cases' sizes do not add up to their bytes")
    return strata, entries


def _validate(entry: Any, check: Check) -> None:
    """One index entry: the right fields, of the right types, with names the kit knows."""
    if not isinstance(entry, dict) or entry.get("kind") != check.input:
        raise CacheDamaged("a case of another kind than the check's")
    kind = KINDS[check.input]
    size, digest, name = entry.get("size"), entry.get("sha256"), entry.get("name")
    if type(size) is not int or not 0 <= size <= CASE_CAP:
        raise CacheDamaged("a case's size")
    if not (isinstance(digest, str) and len(digest) == 64 and _hex(digest)):
        raise CacheDamaged("a case's digest")
    if not (isinstance(name, str) and len(name) <= 200):
        raise CacheDamaged("a case's name")
    mutations = _strings(entry.get("mutations"))
    known = kind.known_mutations(check)
    if any(m not in known for m in mutations) or len(mutations) > 16:
        raise CacheDamaged("a mutation the kit does not know")
    try:
        kind.check_cache_fields(entry)
    except ValueError as exc:
        raise CacheDamaged(str(exc)) from None


def _hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


def _strings(value: Any) -> Sequence[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and len(v) <= 200 for v in value):
        raise CacheDamaged("a list of names")
    return value


__all__ = [
    "CacheDamaged",
    "CacheWriter",
    "CachedCases",
    "NotAuthenticated",
    "RefusedFile",
    "cache_key",
    "code_digest",
    "open_cached",
]
