"""Run one untrusted client process: feed it, read it, bound it, and always clean up.

Everything a client can do wrong is expected here.  It may never read stdin
(writes must not block the kit), close stdin early (broken pipe), flood
stdout or stderr (kept output is capped, the rest counted and dropped), write
one enormous line (the line is cut off at a cap and flagged), hang (every
wait has a deadline), or leave a grandchild holding the pipes open (the
client runs in its own process group and the whole group is killed).

One thread, one ``selectors`` loop: no reader threads to leak, and no
deadlock between a full stdin pipe and a full stdout pipe.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stella_conform import stopping

#: Defaults; the runner may lower or raise them.
STDOUT_LINE_CAP = 4 * 1024 * 1024
STDERR_KEEP = 64 * 1024
#: The end of stderr is kept too, however much came before: a runtime's crash report
#: comes last, after whatever the client logged.
STDERR_TAIL_KEEP = 16 * 1024
CHUNK = 64 * 1024


class LineTooLong(Exception):
    """The client wrote a stdout line longer than the cap."""


@dataclass
class Exit:
    """How a process ended."""

    returncode: int | None
    signal: int | None = None
    timed_out: bool = False

    def describe(self) -> str:
        if self.timed_out:
            return "timed out"
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        return f"exit status {self.returncode}"


@dataclass
class StreamStats:
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0
    #: The last bytes seen (only kept for stderr).
    tail: bytearray = field(default_factory=bytearray)
    #: Newlines seen in all of it, however much was kept (only counted for stderr).
    newlines: int = 0


def _without_kit_secrets(env: Mapping[str, str] | None) -> dict[str, str]:
    """The client's environment, less the kit's own secrets (the case cache's key): a
    client has no use for them, and one that read them could forge what later runs grade."""
    from stella_conform.conformance.store.cachekey import ENV

    kept = dict(os.environ if env is None else env)
    kept.pop(ENV, None)
    return kept


class ClientProcess:
    """A client under test, in its own process group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        line_cap: int = STDOUT_LINE_CAP,
        stderr_keep: int = STDERR_KEEP,
        keep_stdout: int = 0,
        collect_lines: bool = True,
    ) -> None:
        self.argv = list(argv)
        self.line_cap = line_cap
        self.stderr_keep = stderr_keep
        self.keep_stdout = keep_stdout
        self.collect_lines = collect_lines  # exit mode reads stdout only to drain it
        self.stderr = StreamStats()
        self.stdout = StreamStats()
        self._lines: deque[bytes] = deque()
        self._partial = bytearray()
        self._overlong = False
        self._pending_write = bytearray()
        self._close_after_write = False
        self._stdout_eof = False
        self._stderr_eof = False
        self.stdin_broken = False
        self.started = time.monotonic()
        stopping.supervise()  # in a kit command: stop handlers and the subreaper are on
        # Never a shell: argv goes to exec as is, whatever the stream or client holds.
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=stopping.client_env(_without_kit_secrets(env)),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
        stopping.track_group(self.proc.pid)  # killed by the kit's stop signal handler
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout and self.proc.stderr and self.proc.stdin
        for pipe in (self.proc.stdout, self.proc.stderr, self.proc.stdin):
            os.set_blocking(pipe.fileno(), False)
        self._sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self._sel.register(self.proc.stderr, selectors.EVENT_READ, "err")

    # ----------------------------------------------------------------- writing

    def send(self, data: bytes, *, then_close: bool = False) -> None:
        """Queue bytes for stdin; they are written as the pump runs."""
        if self.stdin_broken:
            return
        self._pending_write.extend(data)
        self._close_after_write = self._close_after_write or then_close
        self._want_write()

    def close_stdin(self) -> None:
        self.send(b"", then_close=True)
        if not self._pending_write:
            self._really_close_stdin()

    def _want_write(self) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        with contextlib.suppress(KeyError):  # already registered
            self._sel.register(stdin, selectors.EVENT_WRITE, "in")

    def _really_close_stdin(self) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(stdin)
        with contextlib.suppress(OSError):
            stdin.close()

    @property
    def writes_pending(self) -> bool:
        return bool(self._pending_write) and not self.stdin_broken

    # ----------------------------------------------------------------- pumping

    def pump(self, timeout: float) -> None:
        """Move bytes for at most ``timeout`` seconds (returns early on any progress).

        Every wait on a client passes here: a stop signal the kit swallowed where it landed
        (:func:`stopping.check`) ends the command here, within one wait."""
        stopping.check()
        if not self._sel.get_map():
            time.sleep(min(timeout, 0.01))
            return
        for key, _ in self._sel.select(max(0.0, timeout)):
            if key.data == "in":
                self._write_some()
            elif key.data == "out":
                self._read_stdout()
            else:
                self._read_stderr()

    def _write_some(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        if self._pending_write:
            try:
                written = os.write(stdin.fileno(), self._pending_write[:CHUNK])
                del self._pending_write[:written]
            except BlockingIOError:
                return
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.stdin_broken = True
                self._pending_write.clear()
                self._really_close_stdin()
                return
        if not self._pending_write:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(stdin)
            if self._close_after_write:
                self._really_close_stdin()

    def _read(self, pipe_name: str) -> bytes | None:
        pipe = self.proc.stdout if pipe_name == "out" else self.proc.stderr
        assert pipe is not None
        try:
            data = os.read(pipe.fileno(), CHUNK)
        except BlockingIOError:
            return b""
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(pipe)
            if pipe_name == "out":
                self._stdout_eof = True
            else:
                self._stderr_eof = True
            return None
        return data

    def _read_stdout(self) -> None:
        data = self._read("out")
        if not data:
            if data is None and self._partial:
                self._lines.append(bytes(self._partial))  # last line without newline
                self._partial.clear()
            return
        self.stdout.total += len(data)
        if len(self.stdout.kept) < self.keep_stdout:
            self.stdout.kept.extend(data[: self.keep_stdout - len(self.stdout.kept)])
        if not self.collect_lines:
            return
        start = 0
        lines, partial, cap = self._lines, self._partial, self.line_cap
        while True:
            nl = data.find(b"\n", start)
            if nl >= 0 and not partial and not self._overlong and nl - start <= cap:
                lines.append(data[start:nl])  # a whole line in this read: no buffer copies
                start = nl + 1
                continue
            if nl < 0:
                if not self._overlong:
                    self._partial.extend(data[start:])
                    if len(self._partial) > self.line_cap:
                        self._overlong = True
                        self._partial.clear()
                break
            if self._overlong:
                self._overlong = False
                self._lines.append(b"\x00OVERLONG")
            else:
                self._partial.extend(data[start:nl])
                if len(self._partial) > self.line_cap:
                    self._lines.append(b"\x00OVERLONG")
                else:
                    self._lines.append(bytes(self._partial))
                self._partial.clear()
            start = nl + 1

    def read_ready_stderr(self) -> None:
        """Read what stderr holds now, without waiting. A client writes its stderr before
        the answer that follows it, so once the answer is read those bytes are in the
        pipe, but the two pipes are read in whatever order they are ready: read here, they
        count to the case that wrote them (a persistent client's next case would quote them).
        """
        stderr = self.proc.stderr
        while stderr is not None and not stderr.closed and not self._stderr_eof:
            try:
                if not select.select([stderr], [], [], 0)[0]:
                    return
            except (OSError, ValueError):
                return
            self._read_stderr()

    def _read_stderr(self) -> None:
        data = self._read("err")
        if not data:
            return
        self.stderr.total += len(data)
        self.stderr.newlines += data.count(b"\n")
        room = self.stderr_keep - len(self.stderr.kept)
        if room > 0:
            self.stderr.kept.extend(data[:room])
        tail = self.stderr.tail
        tail.extend(data[-STDERR_TAIL_KEEP:])
        if len(tail) > STDERR_TAIL_KEEP:
            del tail[: len(tail) - STDERR_TAIL_KEEP]

    # ----------------------------------------------------------------- reading

    def next_line(self, deadline: float) -> bytes | None:
        """The next stdout line, or ``None`` at EOF or when the deadline passes.

        Raises :class:`LineTooLong` for a line over the cap.
        """
        while True:
            if self._lines:
                line = self._lines.popleft()
                if line == b"\x00OVERLONG":
                    raise LineTooLong(
                        f"a stdout line longer than {self.line_cap} bytes (a summary may send "
                        'a long text as {"sha256": HEX} instead: STELLA_CONFORM_DIGESTS, '
                        "docs/adapter-protocol.md#long-texts)"
                    )
                return line
            if self._stdout_eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.pump(min(remaining, 0.25))

    @property
    def stdout_closed(self) -> bool:
        return self._stdout_eof and not self._lines

    def wait(self, deadline: float) -> Exit:
        """Wait for the process to exit (draining its output), then reap the group."""
        while True:
            code = self.proc.poll()
            if code is not None:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return Exit(None, timed_out=True)
            if self._stdout_eof and self._stderr_eof and not self.writes_pending:
                # nothing left to move: block on the exit itself instead of polling
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=remaining)
                continue
            self.pump(min(remaining, 0.05))
        # The main process is gone: drain what is already written, briefly, then
        # kill the group so a grandchild holding the pipes cannot keep us waiting.
        grace = time.monotonic() + 0.2
        while not (self._stdout_eof and self._stderr_eof) and time.monotonic() < grace:
            self.pump(0.02)
        self.kill()
        if code < 0:
            return Exit(None, signal=-code)
        return Exit(code)

    def discard_stdout(self) -> None:
        """From now on stdout is drained and counted, never kept as lines."""
        self.collect_lines = False
        self._lines.clear()
        self._partial.clear()

    def drain(self, until: float) -> None:
        while time.monotonic() < until and not (self._stdout_eof and self._stderr_eof):
            self.pump(min(0.05, max(0.0, until - time.monotonic())))

    def kill(self) -> None:
        """Kill the whole process group and release every pipe. Safe to call twice."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        stopping.untrack_group(self.proc.pid)
        # a grandchild that left the group with setsid was re-parented to the kit when the
        # client died (a child subreaper): kill it now, not never
        stopping.reap_orphans()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(KeyError, ValueError):
                    self._sel.unregister(pipe)
                with contextlib.suppress(OSError):
                    pipe.close()
        with contextlib.suppress(Exception):
            self._sel.close()

    def __enter__(self) -> ClientProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def stderr_text(self, limit: int = 2000, *, since: int = 0) -> str:
        """The last ``limit`` bytes of stderr (from the kept tail, however much came before),
        of those written after its first ``since`` bytes: a persistent client's stderr
        during one case, never an earlier case's words."""
        written = min(limit, max(0, self.stderr.total - since))
        if not written:
            return ""
        return bytes(self.stderr.tail[-written:]).decode("utf-8", "replace")

    def stderr_for_crash_report(self) -> str:
        """Where a runtime's crash report can be: the start of stderr and its end."""
        head = bytes(self.stderr.kept)
        tail = bytes(self.stderr.tail)
        if self.stderr.total <= len(head):
            return head.decode("utf-8", "replace")
        return (head + b"\n" + tail).decode("utf-8", "replace")
