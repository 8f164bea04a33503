"""An in-process stand-in for a client process: it answers from a script, instantly.

The runner's protocol logic (``answers.AnswerReader``, lockstep, persistent sessions) is tested with
thousands of message shapes; a real process per example would cost seconds each.  The
peer implements exactly what the runner asks of :class:`ClientProcess`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from stella_conform.conformance.clients.process import Exit, StreamStats


class _Proc:
    def __init__(self, peer: FakePeer) -> None:
        self.peer = peer
        self.pid = -1

    def poll(self) -> int | None:
        return self.peer.returncode if not self.peer.lines else None


class FakePeer:
    """Writes ``lines`` (each one stdout line, without its newline) and then exits."""

    def __init__(self, lines: Sequence[bytes], returncode: int = 0) -> None:
        self.lines = deque(lines)
        self.returncode = returncode
        self.sent = bytearray()
        self.stdout = StreamStats(total=sum(len(line) + 1 for line in lines))
        self.stderr = StreamStats()
        self.proc = _Proc(self)
        self.elapsed = 0.0
        self.writes_pending = False

    def send(self, data: bytes, *, then_close: bool = False) -> None:
        self.sent.extend(data)

    def close_stdin(self) -> None:
        pass

    def next_line(self, deadline: float) -> bytes | None:
        return self.lines.popleft() if self.lines else None

    @property
    def stdout_closed(self) -> bool:
        return not self.lines

    def wait(self, deadline: float) -> Exit:
        self.lines.clear()
        return Exit(self.returncode)

    def drain(self, until: float) -> None:
        pass

    def discard_stdout(self) -> None:
        pass

    def kill(self) -> None:
        self.lines.clear()

    def read_ready_stderr(self) -> None:
        pass

    def stderr_text(self, limit: int = 2000, *, since: int = 0) -> str:
        return ""

    def stderr_for_crash_report(self) -> str:
        return ""
