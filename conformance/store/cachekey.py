"""The key that authenticates the case cache.

A case-cache file decides which cases a run grades, and its folder is easy to write for
others than the kit that made it: a CI cache restored from another branch or from a fork's
job, a shared runner's disk.  So each file carries an HMAC of its index (which holds the
SHA-256 of every case, and the key of the cases) under a secret kept outside the folder; a
file whose HMAC does not verify under this run's secret is never read, and its cases are
generated afresh.  Whoever lacks the secret can delete the cache, never choose its cases.

The secret is, in order:

* ``STELLA_CONFORM_CACHE_KEY`` in the environment (a CI secret: a fork's pull-request job
  is not given it, so its cache files are never trusted by the jobs that are); the kit
  removes it from every client's environment;
* else a random key in the user's configuration folder
  (``$XDG_CONFIG_HOME/stella-conform/cache.key``, by default under ``~/.config``), made on
  first use, readable by its owner only.

Without either (no writable configuration folder, a key file others could write), the
run uses no cache and says so.  A client under test runs as the user who runs the kit and
can read what the kit reads: grade a client you do not trust without the cache
(``--case-cache off``), or in a sandbox.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

#: The environment variable that holds the secret (any text; a CI secret).
ENV = "STELLA_CONFORM_CACHE_KEY"
#: The size of the key file's random key, and of an HMAC-SHA256.
KEY_SIZE = 32
#: What the HMAC covers is a case cache's index, never anything else signed with the key.
_DOMAIN = b"stella-conform case cache index\0"


def key_file() -> Path:
    """Where the per-user key lives."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "stella-conform" / "cache.key"


def cache_secret() -> tuple[bytes | None, str]:
    """The secret, and where it came from (or, without one, why there is none)."""
    given = os.environ.get(ENV, "")
    if given:
        return hashlib.sha256(given.encode("utf-8", "surrogatepass")).digest(), ENV
    path = key_file()
    try:
        return _read_or_make(path), str(path)
    except (OSError, ValueError) as exc:
        return None, f"no key: {ENV} is not set and {path} cannot be used ({exc})"


def _read_or_make(path: Path) -> bytes:
    """The key file's key, made first if there is none.  Made whole or not at all (a
    worker that reads it while another makes it sees the whole key), and refused when it
    is a link, someone else's, or open to others."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_SIZE))
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(temp, path)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    return _read(path)


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_uid != os.getuid():
            raise ValueError("owned by another user")
        if st.st_mode & 0o077:
            raise ValueError("others may read or write it (chmod 600)")
        key = fh.read(KEY_SIZE + 1)
    if len(key) != KEY_SIZE:
        raise ValueError(f"not a {KEY_SIZE}-byte key")
    return key


def sign(secret: bytes, cases_key: str, index: bytes) -> bytes:
    """The HMAC of a cache file's index, bound to the key of the cases it lists."""
    message = _DOMAIN + cases_key.encode() + b"\0" + index
    return hmac.new(secret, message, hashlib.sha256).digest()


def verifies(secret: bytes, cases_key: str, index: bytes, mac: bytes) -> bool:
    return hmac.compare_digest(sign(secret, cases_key, index), mac)
