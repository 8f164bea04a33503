"""The example database of `run` and `fuzz`: a directory, a CI artifact read beside it.

No network: Hypothesis's GitHub-artifact database uses a downloaded artifact it finds in
its cache (younger than a day) without asking GitHub, so a zip of a directory database,
put where the download would have gone, stands in for the artifact a nightly job uploaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import kit_inline
from database_artifact import as_downloaded_artifact
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

from stella_conform.conformance.store.database import (
    ARTIFACT_CACHE,
    DEFAULT_ARTIFACT,
    ArtifactSource,
    example_database,
)


def test_artifact_spec() -> None:
    assert ArtifactSource.parse("acme/reader") == ArtifactSource("acme", "reader", DEFAULT_ARTIFACT)
    assert ArtifactSource.parse("acme/reader/nightly-db").name == "nightly-db"
    for bad in ("acme", "acme/", "/reader", "a/b/c/d", "acme/read er"):
        with pytest.raises(ValueError):
            ArtifactSource.parse(bad)


def test_the_artifact_is_read_beside_the_directory_and_never_written(tmp_path: Path) -> None:
    """The database Hypothesis's own docs recommend for this: read both, write locally."""
    artifact = GitHubArtifactDatabase(
        "acme", "reader", artifact_name="nightly-db", path=ARTIFACT_CACHE / "nightly-db"
    )
    local = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    source = ArtifactSource("acme", "reader", "nightly-db")
    assert example_database(tmp_path / "db", source) == MultiplexedDatabase(
        local, ReadOnlyDatabase(artifact)
    )
    assert example_database(None, source) == MultiplexedDatabase(ReadOnlyDatabase(artifact))
    assert example_database(tmp_path / "db") == MultiplexedDatabase(local)
    assert example_database(None) is None


def test_a_cached_artifact_is_read_and_writes_go_to_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nightly = DirectoryBasedExampleDatabase(str(tmp_path / "nightly"))
    nightly.save(b"check", b"found overnight")
    as_downloaded_artifact(tmp_path / "nightly", tmp_path)
    monkeypatch.chdir(tmp_path)  # the artifact cache is relative, like the database's
    database = example_database(tmp_path / "local", ArtifactSource("acme", "reader"))
    assert database is not None
    database.save(b"check", b"found here")
    assert set(database.fetch(b"check")) == {b"found overnight", b"found here"}
    local = DirectoryBasedExampleDatabase(str(tmp_path / "local"))
    assert set(local.fetch(b"check")) == {b"found here"}


def test_a_malformed_artifact_is_a_usage_error(tmp_path: Path) -> None:
    out = kit_inline("run", "--github-artifact", "acme", "--", "true", cwd=tmp_path)
    assert out.returncode == 2
    assert "--github-artifact" in out.stderr and "OWNER/REPO" in out.stderr


def test_the_download_is_read_with_a_timeout_and_the_default_restored() -> None:
    """Hypothesis downloads the artifact with no timeout of its own."""
    import socket

    from hypothesis.database import InMemoryExampleDatabase

    from stella_conform.conformance.store.database import DOWNLOAD_TIMEOUT, warm

    seen: list[float | None] = []

    class Recording(InMemoryExampleDatabase):
        def fetch(self, key: bytes):  # type: ignore[no-untyped-def]
            seen.append(socket.getdefaulttimeout())
            yield from super().fetch(key)

    before = socket.getdefaulttimeout()
    warm(Recording())
    assert seen == [DOWNLOAD_TIMEOUT]
    assert socket.getdefaulttimeout() == before
    warm(None)  # no database: nothing to read
