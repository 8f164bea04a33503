"""Reference clients and templates write every answer they owe before they exit.

Node.js writes to a pipe asynchronously: what does not fit in the pipe waits in the
process, and ``process.exit()`` drops it.  A client ending on ``process.exit(0)`` at a
shutdown loses the answers of the cases queued before it, most of them when many are
queued.  Authors copy the reference clients, so each must end by letting its output
drain.

The tests are deterministic without timing: every case (and the shutdown, or the end of
input) is written at once, and nothing is read until the client's output pipe is full
(or the client has exited).  A client that exits while answers wait behind a full pipe
has lost them; one that waits for them to drain is still there when reading starts.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from full_pipe import answers_after_a_full_pipe

NODE_CLIENT = REPO / "adapters" / "node" / "reference_client.js"
PYTHON_CLIENT = REPO / "adapters" / "python" / "reference_client.py"

#: Events of one case: each answered with a line observation, so a case's answers are
#: about 6 KB and a few dozen cases are several pipes' worth.
EVENTS = 100
CASES = 60


def _stream() -> bytes:
    lines = [b'{"type":"text_delta","delta":"word %d"}\n' % i for i in range(EVENTS)]
    lines.append(b'{"type":"run_complete","model":"m","cost_usd":0}\n')
    return b"".join(lines)


def _cases_then(last: bytes) -> bytes:
    payload = base64.b64encode(_stream())
    cases = b"".join(
        b'{"kind":"case","id":"c%d","stream":"%s"}\n' % (n, payload) for n in range(CASES)
    )
    return cases + last


PERSISTENT = {
    "node": ["node", str(NODE_CLIENT)],
    "python": [sys.executable, str(PYTHON_CLIENT)],
}


@pytest.mark.parametrize("client", sorted(PERSISTENT))
@pytest.mark.parametrize("ending", ["shutdown", "end of input"])
def test_persistent_client_answers_every_queued_case_before_it_exits(
    client: str, ending: str
) -> None:
    if client == "node" and shutil.which("node") is None:
        pytest.skip("no node")
    last = b'{"kind":"shutdown"}\n' if ending == "shutdown" else b""
    answers = answers_after_a_full_pipe(PERSISTENT[client], "persistent", _cases_then(last))
    summaries = [a["id"] for a in answers if a["kind"] == "summary"]
    assert summaries == [f"c{n}" for n in range(CASES)], (
        f"answered {len(summaries)} of {CASES} queued cases"
    )
    lines = sum(1 for a in answers if a["kind"] == "line")
    assert lines == CASES * (EVENTS + 1)


#: Where .ci/run installs TypeScript and the Node.js types (see tests/cli/test_init.py).
TS_TOOLCHAIN = Path(
    os.environ.get("STELLA_CONFORM_TS_TOOLCHAIN", REPO / ".ci" / ".toolchains" / "ts")
)


def _report_clients(tmp_path: Path) -> dict[str, list[str]]:
    clients = {"python": [sys.executable, str(PYTHON_CLIENT)]}
    if shutil.which("node") is not None:
        clients["node"] = ["node", str(NODE_CLIENT)]
    modules = TS_TOOLCHAIN / "node_modules"
    if shutil.which("node") is not None and (modules / "typescript").is_dir():
        from stella_conform.cli.init import templates_dir

        folder = tmp_path / "ts"
        shutil.copytree(templates_dir() / "typescript", folder)
        (folder / "node_modules").symlink_to(modules)
        tsc = ["node", str(modules / "typescript" / "bin" / "tsc"), "-p", "."]
        done = subprocess.run(tsc, cwd=folder, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        clients["typescript"] = ["node", str(folder / "dist" / "stella_adapter.js")]
    elif os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
        pytest.fail(f"no TypeScript toolchain at {TS_TOOLCHAIN} (.ci/run installs it)")
    return clients


def test_report_clients_answer_every_line_of_a_stream_written_whole(tmp_path: Path) -> None:
    """Report mode, the whole stream at once (as a summary-only run writes it) and then
    the end of input: every line observation and the summary arrive before the exit.
    The TypeScript template is one of these clients when its toolchain is installed."""
    stream = b"".join(_stream() for _ in range(CASES))  # one long stream
    for name, argv in _report_clients(tmp_path).items():
        answers = answers_after_a_full_pipe(argv, "report", stream)
        kinds = [a["kind"] for a in answers]
        assert kinds[0] == "hello", name
        assert kinds[-1] == "summary", f"{name}: no summary after {len(kinds)} messages"
        assert kinds.count("line") == stream.count(b"\n"), name
