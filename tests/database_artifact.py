"""A CI artifact of an example database, as a nightly job's upload would be downloaded.

No network: Hypothesis's GitHub-artifact database uses a downloaded artifact it finds in
its cache (younger than a day) without asking GitHub, so a zip of a directory database,
put where the download would have gone, stands in for the artifact a nightly job uploaded.
"""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime
from pathlib import Path

from stella_conform.conformance.store.database import ARTIFACT_CACHE, DEFAULT_ARTIFACT


def as_downloaded_artifact(database_dir: Path, cwd: Path, name: str = DEFAULT_ARTIFACT) -> Path:
    """Zip a directory database the way upload-artifact does (its contents at the root)
    into the cache where GitHubArtifactDatabase keeps the latest download."""
    cache = cwd / ARTIFACT_CACHE / name
    cache.mkdir(parents=True)
    stamp = datetime.now(UTC).isoformat().replace(":", "_")
    artifact = cache / f"{stamp}.zip"
    with zipfile.ZipFile(artifact, "w") as zf:
        for path in sorted(database_dir.rglob("*")):
            zf.write(path, path.relative_to(database_dir).as_posix())
    return artifact
