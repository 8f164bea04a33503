"""The reference clients on the seams' cases (generators/seams.py): a U+FEFF that is not
the stream's first bytes is not JSON's whitespace, so a line that starts with one is a
corrupt line, rejected when it is not the last.  Node.js's TextDecoder drops a leading
U+FEFF unless told not to, and jq's parser skips one before any text it parses: both
read such a line as valid until the clients said otherwise.  A BOM before the first line
stays what each read it as (reading B of utf8-bom: skipped)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import JQ_REFERENCE, NODE_REFERENCE

RC = b'{"type":"run_complete","model":"m","cost_usd":0.0}\n'
TURN = b'{"type":"turn_complete","model":"m","cost_usd":0.0}\n'
TEXT = b'{"type":"text","text":"the"}\n'
BOM = b"\xef\xbb\xbf"

CLIENTS = [
    pytest.param(
        NODE_REFERENCE,
        id="node",
        marks=pytest.mark.skipif(not shutil.which("node"), reason="no node"),
    ),
    pytest.param(
        JQ_REFERENCE,
        id="jq",
        marks=pytest.mark.skipif(not shutil.which("jq"), reason="no jq"),
    ),
]


def _exit_code(command: tuple[str, ...], stream: bytes, tmp_path: Path) -> int:
    path = tmp_path / "stream.jsonl"
    path.write_bytes(stream)
    done = subprocess.run([*command, str(path)], capture_output=True, timeout=60)
    return done.returncode


@pytest.mark.parametrize("command", CLIENTS)
@pytest.mark.parametrize(
    "stream",
    [TURN + BOM + TEXT + RC, TURN + BOM + b"\n" + RC],
    ids=["before-an-event", "as-the-line"],
)
def test_a_bom_after_the_first_line_is_a_corrupt_line(
    command: tuple[str, ...], stream: bytes, tmp_path: Path
) -> None:
    assert _exit_code(command, stream, tmp_path) == 1


@pytest.mark.parametrize("command", CLIENTS)
def test_a_bom_before_the_first_line_is_still_skipped(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    assert _exit_code(command, BOM + TURN + TEXT + RC, tmp_path) == 0
