"""Feed one case to a client and record what it did, in any of the three modes.

The runner observes; it never judges (the judges of :mod:`stella_conform.conformance.checks`
do).  Whatever the client does — answer, reject, crash, hang, babble — the result is an
:class:`Observation`, and the client's processes are gone when it returns.  What a
reporting client may say, and when, is :mod:`.answers`' to enforce.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stella_conform import stopping
from stella_conform.conformance.clients.answers import AnswerReader, expect_hello
from stella_conform.conformance.clients.crash import crash_signature
from stella_conform.conformance.clients.process import ClientProcess, Exit
from stella_conform.conformance.clients.protocol import (
    DIGESTS_ENV,
    MODE_ENV,
    PROTOCOL_ENV,
    PROTOCOL_VERSION,
    ProtocolError,
)
from stella_conform.errors import SetupError
from stella_conform.safe_files import RefusedFile, read_regular
from stella_conform.safe_text import clip

Mode = Literal["exit", "report", "persistent"]
MODES: tuple[Mode, ...] = ("exit", "report", "persistent")
STREAM_PLACEHOLDER = "{stream}"
RECORD_PLACEHOLDER = "{record}"
Status = Literal["ok", "timeout", "crash", "protocol-error"]
#: The most of a recorder's output kept for grading.
RECORDING_CAP = 64 * 1024 * 1024
#: The end of the client's stderr that travels with every result (bytes, whole lines).
STDERR_TAIL = 2000
#: The most of a rejecting client's own reason shown beside its verdict.
REASON_SHOWN = 300


@dataclass(frozen=True)
class Feed:
    """How one case reaches the client, beyond the client's own launch settings.

    ``lines``: a stream, written line by line (lockstep in report mode).
    ``document``: one document (an envelope), written whole; the client answers
    with a summary only.  ``none``: nothing on stdin (a wrapper launches stella
    itself and finds its scenario through ``env``).  ``record``: the client is a
    recorder; what it writes on stdout (or to the ``{record}`` file) is kept.
    """

    style: Literal["lines", "document", "none"] = "lines"
    env: Mapping[str, str] = field(default_factory=dict)
    record: bool = False


LINES = Feed()


@dataclass(frozen=True)
class Client:
    """How to launch the client under test."""

    argv: tuple[str, ...]
    mode: Mode = "exit"
    timeout: float = 10.0
    line_timeout: float = 5.0
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    #: Why the timeouts are not the ones asked for (fuzz scales them for a client its
    #: coverage slows down, feedback.traced_client): said in every timeout's message.
    timeout_why: str = ""
    #: Exit mode: the exit statuses that mean "rejected" (0 always means "accepted").
    reject_exit_codes: frozenset[int] = frozenset({1})
    #: Grade a runtime's crash report on stderr (an uncaught exception, a panic) as a
    #: crash even when the exit status says "rejected" (see ``crash.py``).
    detect_crashes: bool = True
    #: An in-process Python parser instead of a command (see ``inprocess.py``).
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    #: The client reports only a summary, no line observations (a whole-text reader, a
    #: file poller): its stream is written whole, without lockstep.
    summary_only: bool = False

    @property
    def timeout_text(self) -> str:
        """The per-case timeout as a message gives it: ``10 s``, or with why it is
        scaled: ``40 s: 10 s × 4, Node.js coverage runs without V8's optimizer``."""
        return f"{self.timeout:g} s" + (f": {self.timeout_why}" if self.timeout_why else "")

    @property
    def uses_placeholder(self) -> bool:
        return any(STREAM_PLACEHOLDER in a for a in self.argv)

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.env)
        env.update(extra or {})
        env[MODE_ENV] = self.mode
        env[PROTOCOL_ENV] = str(PROTOCOL_VERSION)
        env[DIGESTS_ENV] = "sha256"
        return env


def resolve_client(argv: Sequence[str]) -> tuple[str, ...]:
    """Check the command can be executed at all; raise :class:`SetupError` if not."""
    if not argv or not argv[0]:
        raise SetupError("no client command given after '--'")
    program = argv[0]
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise SetupError(f"client not found: {program}")
        if path.is_dir():
            raise SetupError(f"client is a directory: {program}")
        if not os.access(path, os.X_OK):
            raise SetupError(f"client is not executable: {program}")
    elif shutil.which(program) is None:
        raise SetupError(f"client not found on PATH: {program}")
    return tuple(argv)


@dataclass
class Observation:
    """What the client did with one case."""

    status: Status = "ok"
    detail: str = ""
    verdict: str | None = None
    exit: Exit | None = None
    lines: dict[int, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    hello: dict[str, Any] | None = None
    stalled_at: int | None = None
    stderr_bytes: int = 0
    stderr_lines: int = 0
    stderr_tail: str = ""
    stdout_bytes: int = 0
    seconds: float = 0.0
    #: Recorder profile: what the client wrote as its recording.
    recording: bytes | None = None
    #: Wrapper profile: how the client invoked the fake stella (one dict per call).
    invocations: list[dict[str, Any]] = field(default_factory=list)
    #: Checks that compare a client with itself: what it did with the paired stream (the
    #: same events with the final newline added, or with the torn last line left off).
    paired: Observation | None = None
    #: A protocol error's words without the output they quote (the same in every case).
    cause: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def rejected_line(self) -> int | None:
        if self.summary is not None and self.summary.get("rejected_line") is not None:
            return int(self.summary["rejected_line"])
        rejects = [n for n, o in self.lines.items() if o.get("outcome") == "reject"]
        return min(rejects) if rejects else None

    def describe(self, own_words: bool = True) -> str:
        """``reject at line 3 ("unknown type text_v2")``: the verdict, in the client's own
        words when it gave a reason (``own_words=False``: without them)."""
        if self.status != "ok":
            return f"{self.status}: {self.detail}"
        text = self.verdict_text()
        if own_words and self.verdict == "reject" and self.detail:
            text += f" ({clip(self.detail, REASON_SHOWN)})"
        if self.stalled_at is not None:
            text += f" (stalled on line {self.stalled_at})"
        return text

    def verdict_text(self) -> str:
        """``accept``, ``reject at line 3``: the verdict alone, as a correct one is written."""
        text = f"{self.verdict}"
        if self.verdict == "reject" and self.rejected_line is not None:
            text += f" at line {self.rejected_line}"
        return text

    def take_reason(self) -> None:
        """A rejecting adapter's ``reason`` (on its ``reject`` line) as the detail shown."""
        if self.verdict != "reject" or self.detail:
            return
        line = self.rejected_line
        reason = self.lines.get(line, {}).get("reason") if line is not None else None
        if isinstance(reason, str) and reason.strip():
            self.detail = reason.strip()

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "detail": self.detail or None,
            "verdict": self.verdict,
            "exit": self.exit.describe() if self.exit else None,
            "rejected_line": self.rejected_line,
            "stalled_at": self.stalled_at,
            "summary": self.summary,
            "stderr_bytes": self.stderr_bytes,
            "stderr_tail": self.stderr_tail or None,
            "seconds": round(self.seconds, 4),
        }


def count_lines(stream: bytes) -> int:
    """How many physical lines :func:`split_lines` makes of ``stream``, without making them."""
    return stream.count(b"\n") + (1 if stream and not stream.endswith(b"\n") else 0)


def split_lines(stream: bytes) -> list[bytes]:
    """Physical lines (split at LF only), each with its own terminator."""
    out, start = [], 0
    while start < len(stream):
        nl = stream.find(b"\n", start)
        if nl < 0:
            out.append(stream[start:])
            break
        out.append(stream[start : nl + 1])
        start = nl + 1
    return out


@dataclass
class _Staged:
    argv: list[str]
    via_stdin: bool
    record_path: str | None = None


@contextlib.contextmanager
def _stream_file(client: Client, stream: bytes) -> Iterator[_Staged]:
    """argv with ``{stream}`` / ``{record}`` replaced by private temp files, removed afterwards."""
    recording = any(RECORD_PLACEHOLDER in a for a in client.argv)
    if not client.uses_placeholder and not recording:
        yield _Staged(list(client.argv), True)
        return
    # mode 0700; removed when the case ends, or by the stop handler if the kit is stopped
    with stopping.private_dir("stella-conform-") as directory:
        path = os.path.join(directory, "stream.jsonl")
        record = os.path.join(directory, "record.jsonl")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(stream)
        argv = [
            a.replace(STREAM_PLACEHOLDER, path).replace(RECORD_PLACEHOLDER, record)
            for a in client.argv
        ]
        yield _Staged(argv, not client.uses_placeholder, record if recording else None)


def _start(
    client: Client,
    argv: list[str],
    *,
    collect_lines: bool = True,
    feed: Feed = LINES,
) -> ClientProcess:
    try:
        return ClientProcess(
            argv,
            env=client.environment(feed.env),
            cwd=client.cwd,
            collect_lines=collect_lines,
            keep_stdout=RECORDING_CAP if feed.record else 0,
        )
    except FileNotFoundError:
        raise SetupError(f"client not found: {argv[0]}") from None
    except PermissionError:
        raise SetupError(f"client is not executable: {argv[0]}") from None
    except OSError as exc:
        raise SetupError(f"cannot start client {argv[0]}: {exc.strerror or exc}") from None


def _finish(obs: Observation, proc: ClientProcess, since: int = 0) -> Observation:
    """What the process wrote, into the observation. ``since``: the stderr bytes it had
    written before this case (a persistent process's earlier cases): the tail shown is
    what this case wrote, never an earlier case's words; the counts are the process's."""
    obs.stderr_bytes = proc.stderr.total
    # every line the process wrote so far, not only those of the capped part kept: a
    # client that logged 64 KiB in earlier checks (one process for all of them) still
    # shows each further line
    unterminated = proc.stderr.total > 0 and not proc.stderr.tail.endswith(b"\n")
    obs.stderr_lines = proc.stderr.newlines + (1 if unterminated else 0)
    obs.stderr_tail = _whole_lines(
        proc.stderr_text(STDERR_TAIL, since=since), proc.stderr.total - since
    )
    obs.stdout_bytes = proc.stdout.total
    obs.seconds = proc.elapsed
    return obs


def _whole_lines(tail: str, total: int) -> str:
    """A cut tail starts at a line boundary, so the first line shown is never half a line."""
    if total > STDERR_TAIL and "\n" in tail[:-1]:
        return tail[tail.index("\n") + 1 :]
    return tail


def _crashed(client: Client, proc: ClientProcess) -> str | None:
    """The client's own crash report (an uncaught exception, a panic), when detection is on."""
    if not client.detect_crashes:
        return None
    return crash_signature(proc.stderr_for_crash_report())


def _exit_status(
    obs: Observation,
    ended: Exit,
    timeout_detail: str,
    client: Client,
    proc: ClientProcess,
    *,
    detect: bool = True,
) -> str | None:
    """Record how the process ended; the verdict its exit status gives, or None (an error).

    ``detect``: look for a crash report on stderr (not when a summary already gave
    the verdict: an adapter may log a caught exception and still answer properly).
    """
    obs.exit = ended
    if ended.timed_out:
        obs.status, obs.detail = "timeout", timeout_detail
        return None
    crash = _crashed(client, proc) if detect else None
    if ended.signal is None and ended.returncode == 0:
        return "accept"
    if crash is not None:
        obs.status, obs.detail = "crash", f"crashed: {crash} ({ended.describe()})"
    elif ended.signal is not None:
        obs.status, obs.detail = "crash", ended.describe()
    elif ended.returncode in client.reject_exit_codes:
        return "reject"
    else:
        codes = ", ".join(str(c) for c in sorted(client.reject_exit_codes))
        obs.status = "crash"
        obs.detail = f"{ended.describe()} (only 0 = accept and {codes} = reject are verdicts)"
    return None


def run_exit(client: Client, stream: bytes, feed: Feed = LINES) -> Observation:
    """Exit-code mode: the stream on stdin (or as a file); the verdict is the exit status."""
    obs = Observation()
    with _stream_file(client, stream) as staged:
        proc = _start(client, staged.argv, collect_lines=False, feed=feed)
        try:
            if staged.via_stdin and feed.style != "none":
                proc.send(stream, then_close=True)
            else:
                proc.close_stdin()
            ended = proc.wait(time.monotonic() + client.timeout)
            obs.verdict = _exit_status(
                obs, ended, f"no exit within the timeout ({client.timeout_text})", client, proc
            )
        finally:
            proc.kill()
        if feed.record:
            _take_recording(obs, proc, staged.record_path)
    return _finish(obs, proc)


def _take_recording(obs: Observation, proc: ClientProcess, path: str | None) -> None:
    if path is not None:
        # The client wrote this file (or planted a FIFO, a device or a link there): read it
        # only if it is a regular file, without blocking, and never past the cap.
        try:
            obs.recording = read_regular(path, RECORDING_CAP, follow=False)
        except FileNotFoundError:
            obs.recording = b""
        except RefusedFile as exc:
            obs.recording = b""
            if obs.ok:
                obs.status, obs.detail = "crash", f"the {{record}} file {exc.why}"
            return
        except OSError as exc:
            obs.recording = b""
            if obs.ok:
                obs.status = "crash"
                obs.detail = f"cannot read the {{record}} file: {exc.strerror or exc}"
            return
        over = False
    else:
        obs.recording = bytes(proc.stdout.kept)
        over = proc.stdout.total > RECORDING_CAP
    if over and obs.ok:
        obs.status, obs.detail = "crash", f"the recording is over {RECORDING_CAP} bytes"


#: The longest the mode preflight waits for a hello (a hanging client is graded later).
HANDSHAKE_WAIT = 5.0


def ensure_mode_supported(client: Client) -> dict[str, Any] | None:
    """Start the adapter once and read its hello; :class:`UnsupportedMode` before any check.

    Only the declared modes are judged here: a client that writes no hello, or a bad
    one, is graded (and reported) by the checks as usual.  Returns the hello, if any.
    """
    if client.mode == "exit" or client.function is not None:
        return None
    try:
        proc = _start(client, list(client.argv))
    except SetupError:
        return None  # reported by the run itself
    try:
        deadline = time.monotonic() + min(client.timeout, HANDSHAKE_WAIT)
        hello = expect_hello(AnswerReader(proc, Observation(), [0]), deadline, client.mode)
    except ProtocolError:
        return None
    finally:
        proc.kill()
    return hello


def _reporting(
    client: Client,
    feed: Feed,
    written: list[int],
    send_input: Callable[[ClientProcess, AnswerReader, Observation, float], None],
    input_size: int = 0,
) -> Observation:
    """A report-mode run: hello, the input (``send_input``), the summary, the exit status."""
    obs = Observation()
    proc = _start(client, list(client.argv), feed=feed)
    try:
        deadline = time.monotonic() + client.timeout
        reader = AnswerReader(proc, obs, written, input_size=input_size)
        try:
            obs.hello = expect_hello(reader, deadline, client.mode)
            send_input(proc, reader, obs, deadline)
            proc.close_stdin()
            while obs.summary is None:
                if reader.next(deadline) is None:
                    break
            # nothing after the summary is read: count it, keep none of it (a client that
            # floods lines while the kit waits for its exit would otherwise fill memory)
            proc.discard_stdout()
        except ProtocolError as exc:
            obs.status, obs.detail, obs.cause = "protocol-error", str(exc), exc.cause
            if proc.stdout_closed:  # the client is going away: say why, if it says
                proc.drain(time.monotonic() + 0.2)
                crash = _crashed(client, proc)
                if crash is not None:
                    obs.status, obs.detail = "crash", f"crashed: {crash} ({exc})"
                    obs.cause = None
            proc.kill()
            return _finish(obs, proc)
        ended = proc.wait(deadline)
        _settle_report(obs, ended, client, proc)
    finally:
        proc.kill()
    return _finish(obs, proc)


def run_report(client: Client, stream: bytes) -> Observation:
    """Report mode, lockstep: line k+1 is written only after line k is acknowledged.

    A summary-only client gets the stream whole instead: it answers at the end.
    """
    if client.summary_only:
        return run_document(client, stream, Feed("document"))
    lines = split_lines(stream)
    written = [0]

    def lockstep(
        proc: ClientProcess, reader: AnswerReader, obs: Observation, deadline: float
    ) -> None:
        waiting = True
        for index, line in enumerate(lines, 1):
            last = index == len(lines)
            proc.send(line, then_close=last)
            written[0] = index
            if not waiting or last:
                continue
            if not _await_ack(reader, index, deadline, client.line_timeout):
                if obs.verdict is not None or proc.stdout_closed:
                    break  # the client finished (e.g. rejected) before reading on
                obs.stalled_at = index
                waiting = False  # grade the rest anyway, without lockstep
            if obs.summary is not None or any(
                o.get("outcome") == "reject" for o in obs.lines.values()
            ):
                break

    return _reporting(client, LINES, written, lockstep, len(stream))


def run_document(client: Client, data: bytes, feed: Feed) -> Observation:
    """Report mode for a whole document (an envelope) or no input at all (a wrapper).

    No lockstep: the client gets everything at once and answers with its hello
    and a summary; line observations have nothing to refer to and are refused.
    """

    def whole(proc: ClientProcess, reader: AnswerReader, obs: Observation, deadline: float) -> None:
        if feed.style == "document":
            proc.send(data)

    return _reporting(client, feed, [0], whole, len(data))


def _await_ack(reader: AnswerReader, line: int, deadline: float, line_timeout: float) -> bool:
    """Wait until line ``line`` is observed or pending; False on a stall or early end."""
    until = min(deadline, time.monotonic() + line_timeout)
    while line not in reader.obs.lines and line not in reader.pending:
        if reader.obs.summary is not None:
            return True
        message = reader.next(until)
        if message is None:
            return False
    return True


def _settle_report(obs: Observation, ended: Exit, client: Client, proc: ClientProcess) -> None:
    exit_verdict = _exit_status(
        obs,
        ended,
        f"no summary and exit within the timeout ({client.timeout_text})",
        client,
        proc,
        detect=obs.summary is None,
    )
    if exit_verdict is None:
        return
    if obs.summary is None:
        obs.status = "protocol-error"
        obs.detail = obs.cause = f"no summary before {ended.describe()}"
    elif obs.verdict != exit_verdict:
        obs.status = "protocol-error"
        obs.detail = f"summary says {obs.verdict} but the client exited with {ended.describe()}"
        obs.cause = obs.detail


def _case_message(case_id: str, stream: bytes, env: Mapping[str, str] | None) -> bytes:
    """The ``case`` message, as ``json.dumps`` writes it, with the stream's base64 put in
    as it is: base64 needs no JSON escape, and ``json.dumps`` would scan a megabyte
    stream's base64 for escapes, which costs more than the client takes to read it."""
    head = json.dumps({"kind": "case", "id": case_id, "stream": ""})[:-2].encode()
    tail = b', "env": ' + json.dumps(dict(env)).encode() if env else b""
    return b'%s%s"%s}\n' % (head, base64.b64encode(stream), tail)


class PersistentSession:
    """One client process for many cases, restarted (and re-handshaken) after a crash."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.proc: ClientProcess | None = None
        self.hello: dict[str, Any] | None = None
        self.counter = 0
        self.restarts = 0

    def _ensure(self, deadline: float) -> ClientProcess:
        if self.proc is not None and self.proc.proc.poll() is None:
            return self.proc
        if self.proc is not None:
            self.proc.kill()
            self.restarts += 1
        self.proc = _start(self.client, list(self.client.argv))
        scratch = Observation()
        self.hello = expect_hello(AnswerReader(self.proc, scratch, [0]), deadline, self.client.mode)
        return self.proc

    def run(self, stream: bytes, feed: Feed = LINES) -> Observation:
        if feed.style == "none" or feed.record:
            raise SetupError("persistent mode cannot run wrapper or recorder cases")
        obs = Observation()
        self.counter += 1
        case_id = f"case-{self.counter}"
        deadline = time.monotonic() + self.client.timeout
        #: The process of this case (kept after a crash throws it away: its stderr is
        #: the case's), and how much stderr it had written before the case began.
        proc: ClientProcess | None = None
        since = 0
        try:
            before = self.proc
            if before is not None:
                before.read_ready_stderr()  # the last case's words count to it
                since = before.stderr.total
            proc = self._ensure(deadline)
            if proc is not before:
                since = 0  # started for this case: everything it wrote is this case's
            obs.hello = self.hello
            written = [count_lines(stream) if feed.style == "lines" else 0]
            reader = AnswerReader(
                proc,
                obs,
                written,
                case_id=case_id,
                input_size=len(stream),
                summary_only=self.client.summary_only,
            )
            proc.send(_case_message(case_id, stream, feed.env))
            while obs.summary is None:
                if reader.next(deadline) is None:
                    break
            if obs.summary is None:
                if proc.proc.poll() is not None or proc.stdout_closed:
                    ended = proc.wait(deadline)
                    crash = _crashed(self.client, proc)
                    how = f"crashed: {crash} ({ended.describe()})" if crash else ended.describe()
                    obs.status, obs.detail = "crash", f"{how} in the middle of a case"
                    obs.exit = ended
                else:
                    obs.status, obs.detail = (
                        "timeout",
                        (f"no summary within the timeout ({self.client.timeout_text})"),
                    )
                self._discard()
        except ProtocolError as exc:
            obs.status, obs.detail, obs.cause = "protocol-error", str(exc), exc.cause
            if proc is None and self.proc is not None:  # its hello was wrong: started anew
                proc, since = self.proc, 0
            self._discard()
        if proc is not None:
            proc.read_ready_stderr()
            _finish(obs, proc, since)
        return obs

    def pause(self) -> None:
        """Stop the process now, without its shutdown: it is started again (and sends its
        hello again) for the next case.  For a caller that keeps few clients alive."""
        if self.proc is not None:
            self.proc.kill()
            self.proc = None

    def _discard(self) -> None:
        """Throw the process away: its state can no longer be trusted."""
        if self.proc is not None:
            self.proc.kill()
            self.proc = None
            self.restarts += 1

    def close(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            self.proc.send(b'{"kind":"shutdown"}\n', then_close=True)
            self.proc.wait(time.monotonic() + 2)
        self.proc.kill()
        self.proc = None

    def __enter__(self) -> PersistentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_once(client: Client, stream: bytes, feed: Feed = LINES) -> Observation:
    """Run one case in a fresh process (exit or report mode), or in-process."""
    if client.function is not None:
        if feed != LINES:
            raise SetupError("an in-process client can only be graded on streams")
        from stella_conform.conformance.clients.inprocess import run_inprocess

        return run_inprocess(client.function, stream)
    if client.mode == "exit":
        return run_exit(client, stream, feed)
    if client.mode == "report":
        if feed.style == "lines":
            return run_report(client, stream)
        return run_document(client, stream, feed)
    with PersistentSession(client) as session:
        return session.run(stream, feed)
