"""Which Hypothesis example database a ``run`` or a ``fuzz`` reads and writes.

Locally it is a directory (``.stella-conform/hypothesis``).  In CI a nightly ``fuzz``
uploads that directory as a GitHub Actions artifact; a pull-request ``run`` should
replay what it found without a download step of its own.  Hypothesis reads such an
artifact directly (:class:`~hypothesis.database.GitHubArtifactDatabase`, which
downloads the latest artifact of that name through the GitHub API with
``GITHUB_TOKEN`` and caches it for a day).  It is read-only, so it is multiplexed
with the local directory: both are read, only the directory is written, and the
next upload carries what this session added.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

#: The artifact name the documented CI workflow uploads.
DEFAULT_ARTIFACT = "stella-conform-db"
#: Where a downloaded artifact is cached (one zip, the latest).
ARTIFACT_CACHE = Path(".stella-conform/github-artifacts")
_SPEC = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/([A-Za-z0-9_.-]+))?")


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
        """The artifact as a read-only database (downloaded on first read, then cached)."""
        artifact = GitHubArtifactDatabase(
            self.owner, self.repo, artifact_name=self.name, path=cache / self.name
        )
        return ReadOnlyDatabase(artifact)


def example_database(
    directory: Path | None, artifact: ArtifactSource | None = None
) -> ExampleDatabase | None:
    """The local directory, the artifact read beside it, both, or neither."""
    local = DirectoryBasedExampleDatabase(str(directory)) if directory is not None else None
    shared = artifact.database() if artifact is not None else None
    if local is not None and shared is not None:
        return MultiplexedDatabase(local, shared)
    return local if local is not None else shared


#: Seconds any one network read of the artifact download may wait (Hypothesis sets none).
DOWNLOAD_TIMEOUT = 60.0


def warm(database: ExampleDatabase | None) -> None:
    """Read the database once now, so the artifact is downloaded (or found in its cache)
    before any worker is forked: each would otherwise fetch it on its own.

    Hypothesis downloads without a timeout; on a network that drops packets the run
    would wait for ever before grading anything, so the download's sockets get one.
    Unreachable or refused, Hypothesis warns and reads no artifact: the run goes on with
    the local directory.
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
