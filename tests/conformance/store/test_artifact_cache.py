"""The GitHub-artifact cache is a folder in the working tree: checked before it is used.

No network: the download is replaced by a stand-in that records it was asked for (and
returns nothing, or a zip the test made). Unchecked, a zip stamped 9999-12-31 would be
used for ever; a FIFO, a link to /dev/zero, a badly named zip or a folder in the cache
would crash the kit (exit 3) or hang it; a 13 MB zip bomb would take it to gigabytes; a
member packed with an unknown method would be a traceback.
"""

from __future__ import annotations

import os
import resource
import struct
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase, choices_to_bytes

from stella_conform.conformance.store.database import (
    ENTRY_CAP,
    ArtifactSource,
    CheckedArtifactDatabase,
    artifact_problem,
)

KEY = b"check"
ENTRY = choices_to_bytes((1, 2, 3))


def stamp(when: datetime) -> str:
    return when.isoformat().replace(":", "_") + ".zip"


def database_zip(path: Path, entries: dict[str, bytes] | None = None, **kw: object) -> Path:
    """A zip laid out as upload-artifact writes a directory database (contents at the root)."""
    source = path.parent.parent / (path.name + ".db")  # outside the cache folder
    db = DirectoryBasedExampleDatabase(str(source))
    db.save(KEY, ENTRY)
    with zipfile.ZipFile(path, "w", **kw) as zf:  # type: ignore[arg-type]
        for file in sorted(source.rglob("*")):
            zf.write(file, file.relative_to(source).as_posix())
        for name, data in (entries or {}).items():
            zf.writestr(name, data)
    return path


class Harness:
    """One artifact database over a cache folder, its download and warnings recorded."""

    def __init__(self, cache: Path, download: Path | None = None) -> None:
        self.warnings: list[str] = []
        self.downloads = 0
        wrapped = ArtifactSource("acme", "reader", cache.name).database(cache.parent)
        self.db = wrapped._wrapped  # type: ignore[attr-defined]
        assert isinstance(self.db, CheckedArtifactDatabase)
        self.db.warn = self.warnings.append  # type: ignore[method-assign]

        def fetch_artifact() -> Path | None:
            self.downloads += 1
            return download

        self.db._fetch_artifact = fetch_artifact  # type: ignore[method-assign]

    def entries(self) -> list[bytes]:
        return list(self.db.fetch(KEY))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    folder = tmp_path / "cache" / "stella-conform-db"  # ArtifactSource's default name
    folder.mkdir(parents=True)
    return folder


def test_a_fresh_checked_artifact_is_read_without_a_download(cache: Path) -> None:
    database_zip(cache / stamp(datetime.now(UTC)))
    h = Harness(cache)
    assert h.entries() == [ENTRY] and h.downloads == 0 and not h.warnings


def test_a_zip_stamped_in_the_future_is_not_used_for_ever(cache: Path) -> None:
    future = database_zip(cache / "9999-12-31T00_00_00+00_00.zip")
    h = Harness(cache)
    assert h.entries() == [] and h.downloads == 1
    assert any("in the future" in w for w in h.warnings), h.warnings
    assert future.exists()  # not the kit's to delete: ignored, said so


def test_an_expired_artifact_is_fetched_again_and_used_only_as_a_fallback(cache: Path) -> None:
    database_zip(cache / stamp(datetime.now(UTC) - timedelta(days=3)))
    h = Harness(cache)
    assert h.entries() == [ENTRY] and h.downloads == 1
    assert any("expired" in w for w in h.warnings), h.warnings


@pytest.mark.parametrize("plant", ["fifo", "dev-zero", "folder", "bad-name", "not-a-zip"])
def test_whatever_else_is_in_the_cache_is_ignored_with_a_warning(cache: Path, plant: str) -> None:
    now = stamp(datetime.now(UTC))
    if plant == "fifo":
        os.mkfifo(cache / now)
    elif plant == "dev-zero":
        os.symlink("/dev/zero", cache / now)
    elif plant == "folder":
        (cache / now).mkdir()
    elif plant == "bad-name":
        database_zip(cache / "latest.zip")
    else:
        (cache / now).write_bytes(b"PK\x03\x04 not really")
    h = Harness(cache)
    assert h.entries() == []  # no hang, no exception, no memory
    assert h.warnings and h.downloads == 1, h.warnings


def test_a_cache_that_is_not_a_folder_is_not_used(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    database_zip(target / stamp(datetime.now(UTC)))
    link = tmp_path / "stella-conform-db"
    os.symlink(target, link)
    h = Harness(link)
    assert h.entries() == [] and h.downloads == 0
    assert "not a folder" in h.warnings[0]


def _method(path: Path, method: int) -> None:
    """Rewrite every member's compression method, in the local and central headers."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = data.find(signature)
        while at >= 0:
            data[at + offset : at + offset + 2] = struct.pack("<H", method)
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("attack", ["bomb", "big-member", "method", "dot-dot", "absolute"])
def test_a_zip_whose_members_are_not_a_database_is_refused_unread(cache: Path, attack: str) -> None:
    path = cache / stamp(datetime.now(UTC))
    if attack == "bomb":  # 64 MiB of zeros in 64 KiB: the kit must not unpack it
        database_zip(path, {"k/bomb": bytes(64 * 1024 * 1024)}, compression=zipfile.ZIP_DEFLATED)
    elif attack == "big-member":
        database_zip(path, {"k/big": os.urandom(ENTRY_CAP + 1)})
    elif attack == "method":
        database_zip(path)
        _method(path, 99)  # AES, say: Python cannot unpack it (NotImplementedError)
    elif attack == "dot-dot":
        database_zip(path, {"../outside": ENTRY})
    else:
        database_zip(path, {"/etc/x": ENTRY})
    problem = artifact_problem(path)
    assert problem is not None
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    h = Harness(cache)
    assert h.entries() == [] and h.downloads == 1
    assert any("not used" in w for w in h.warnings), h.warnings
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 32, f"{grown_mib:.0f} MiB"


def test_a_downloaded_artifact_is_checked_too(cache: Path, tmp_path: Path) -> None:
    bomb = database_zip(
        cache / stamp(datetime.now(UTC)),
        {"k/bomb": bytes(8 * 1024 * 1024)},
        compression=zipfile.ZIP_DEFLATED,
    )
    fresh = cache / "downloaded.zip"
    bomb.rename(fresh)
    h = Harness(cache, download=fresh)
    assert h.entries() == [] and h.downloads == 1
    assert any("downloaded artifact is not used" in w for w in h.warnings), h.warnings
    assert not fresh.exists()  # the kit's own download: removed
