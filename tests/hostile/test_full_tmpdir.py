"""A temporary folder that cannot take what a command writes there: one line naming the
folder and the cause, exit 2, and nothing left behind; never a traceback and exit 3.

``decode -`` keeps a copy of its stdin for the other readings to read again; ``trace
check`` keeps a long journal's ids in a table on disk.  Two ways a folder fails: writes
past 64 KiB refused by ``RLIMIT_FSIZE`` (any user, any system: "File too large"), and,
where the test may mount one, a 64 KiB tmpfs that fills ("No space left on device").
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hostile_kit import HANG_GUARD, KIT_ARGV, no_leaks  # noqa: F401 (no_leaks: autouse)
from journal_ids import many_ids_lines

LIMIT = 64 * 1024

#: A stream far larger than the folder takes, and a journal whose ids outgrow the checks'
#: memory and their on-disk table's page cache.
STREAM = b'{"type":"text","text":"hello there"}\n' * 40_000
JOURNAL = b"".join(many_ids_lines(300))


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


@pytest.fixture(params=["file-size-limit", "full-tmpfs"])
def full_tmpdir(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Path, Callable[[], None] | None]]:
    """A TMPDIR whose writes fail past 64 KiB, and what to run in the kit's process first."""
    if request.param == "file-size-limit":
        yield Path(os.environ["TMPDIR"]), _limited  # no_leaks's folder: its check holds too
        return
    folder = tmp_path / "tiny"
    folder.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={LIMIT}", "tmpfs", str(folder)],
        capture_output=True,
        timeout=HANG_GUARD,
    )
    if mount.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield folder, None
        assert not list(folder.iterdir()), "temp files left in the full folder"
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, timeout=HANG_GUARD)


CAUSES = {"File too large", "No space left on device", "disk I/O error", "database or disk is full"}


@pytest.mark.parametrize(
    ("args", "data", "says"),
    [
        (["decode", "-q", "-"], STREAM, "decode - keeps a copy of its stdin in a temporary"),
        (["decode", "--json", "-"], STREAM, "decode - keeps a copy of its stdin in a temporary"),
        (["trace", "check", "-"], JOURNAL, "cannot check -: a long journal's ids"),
    ],
    ids=["decode", "decode --json", "trace check"],
)
def test_a_temporary_folder_that_cannot_be_written_is_one_line_and_exit_2(
    full_tmpdir: tuple[Path, Callable[[], None] | None], args: list[str], data: bytes, says: str
) -> None:
    folder, before = full_tmpdir
    out = subprocess.run(
        [*KIT_ARGV, *args],
        input=data,
        capture_output=True,
        env={**os.environ, "TMPDIR": str(folder)},
        preexec_fn=before,
        timeout=10 * HANG_GUARD,
    )
    stderr = out.stderr.decode(errors="replace")
    assert out.returncode == 2, (out.returncode, stderr[-3000:])
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"stella-conform: {says}") and f"folder in {folder}" in stderr
    cause = stderr.split("which failed: ", 1)[1].split(" (free space there", 1)[0]
    assert cause in CAUSES, stderr
    assert "set TMPDIR to another folder" in stderr
