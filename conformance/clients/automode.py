"""``--mode auto``: grade a client in the cheapest mode it speaks, found by asking it.

Persistent mode grades a case 6-8 times cheaper than a process per case and grades the
checks exit mode cannot see, but a user only got it by knowing to ask.  Auto mode
starts the client once as the protocol starts an adapter (``STELLA_CONFORM_MODE=report``,
the mode every adapter speaks) and waits for a hello:

* a hello whose ``modes`` list ``persistent``: persistent mode; listing only ``report``,
  or no ``modes`` at all (an adapter need not speak persistent mode): report mode;
* anything else is a client that does not speak the protocol, graded in exit mode: one
  that ends without a hello, writes something else first, or sits waiting for input
  without having written one (an adapter writes its hello *before* reading stdin), and,
  at the latest, one that has said nothing within :data:`HELLO_WAIT`.

Waiting for input is seen, on Linux, in ``/proc``: a thread of the client's session
blocked on the stdin pipe the kit gave it (a ``read`` of it, or an ``epoll`` wait whose
interest list holds it: Node.js and other event loops), no thread running, and none of
them using CPU, for :data:`IDLE_FOR`.  A starting program is running, runnable (waiting
for a CPU on a busy machine) or reading its files; a program that reads stdin before
writing anything sits in that read.  A program asleep on anything else (a ``sleep`` in a
start script, a container daemon, a lock, the network) is not waiting for its stream and
keeps the whole wait.  So an exit-mode client is known in a fraction of a second, and a
slow adapter still has the whole wait.  Where ``/proc`` cannot tell (missing, or a
thread's ``syscall`` file not readable), the wait is the only test.

The measured starts behind the figures are in docs/adapter-protocol.md
(``benchmarks/hello_wait.py`` measures them again).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from dataclasses import dataclass
from typing import Any

from stella_conform.conformance.clients.process import ClientProcess, LineTooLong
from stella_conform.conformance.clients.protocol import ProtocolError, excerpt, parse_message
from stella_conform.conformance.clients.runner import (
    Client,
    Mode,
    _start,
    _stream_file,
    ensure_mode_supported,
)

#: The longest auto mode waits for a hello (a client's ``--timeout`` may lower it): about
#: four times the slowest adapter start ``benchmarks/hello_wait.py`` sees on a loaded
#: machine (a Python client through a version manager's shim, the TypeScript template,
#: beside busy loops), so a slow start is not taken for silence.  On Linux a client that
#: waits for its stream is seen long before (:data:`IDLE_FOR`); only where ``/proc`` is
#: missing does every exit-mode client cost the whole wait.
HELLO_WAIT = 10.0
#: How long a client must sit asleep, using no CPU, without a hello, to count as waiting
#: for input (an exit-mode client).  The clock ticks that count CPU are 10 ms.
IDLE_FOR = 0.25
#: How often the client's processes are looked at while waiting.
POLL = 0.01


@dataclass(frozen=True)
class ModeChoice:
    """The mode auto mode chose, the hello that decided it (if any), and why."""

    client: Client
    hello: dict[str, Any] | None
    reason: str

    @property
    def mode(self) -> Mode:
        return self.client.mode


#: What a report adds when auto mode found no hello: the way to the protocol modes.
EXIT_HINT = "an adapter that starts slowly: --mode report or persistent"


def settle_mode(client: Client, requested: str) -> tuple[Client, dict[str, Any] | None, str | None]:
    """The client in the mode it is graded in, its hello, and why that mode (auto only).

    Every command that takes ``--mode auto`` comes through here: an explicit mode is
    checked against the hello's ``modes`` as before (:class:`UnsupportedMode`)."""
    if requested != "auto" or client.function is not None:
        return client, ensure_mode_supported(client), None
    choice = choose_mode(client)
    return choice.client, choice.hello, choice.reason


def choose_mode(client: Client, wait: float = HELLO_WAIT) -> ModeChoice:
    """Start the client once and choose its mode from what it does (see the module)."""
    probe = dataclasses.replace(client, mode="report")
    started = time.monotonic()
    deadline = started + min(client.timeout, wait)
    with _stream_file(probe, b"") as staged:  # a {stream} client gets an empty file
        proc = _start(probe, staged.argv)
        try:
            return _decide(client, proc, started, deadline)
        finally:
            proc.kill()


def _decide(client: Client, proc: ClientProcess, started: float, deadline: float) -> ModeChoice:
    idle = _Idle(proc.proc.pid, _pipe_inode(proc))
    while True:
        try:
            raw = proc.next_line(min(deadline, time.monotonic() + POLL))
        except LineTooLong:
            return _exit(client, "its first line was not a hello (over the line cap)")
        if raw is not None:
            return _from_line(client, raw)
        if proc.stdout_closed:
            return _exit(client, "it ended without writing one")
        now = time.monotonic()
        if now >= deadline:
            return _exit(client, f"none within {deadline - started:g} s")
        if idle.waiting(now):
            return _exit(client, "it waited for input without writing one")


def _from_line(client: Client, raw: bytes) -> ModeChoice:
    try:
        hello = parse_message(raw, expect=("hello",))
    except ProtocolError as exc:
        if _says_hello(raw):  # it speaks the protocol, wrongly: let every check say so
            reason = f"its hello is not valid, so each check shows it ({exc})"
            return ModeChoice(dataclasses.replace(client, mode="report"), None, reason)
        return _exit(client, f"its first line was something else: {excerpt(raw)}")
    modes = hello.get("modes")
    listed = ", ".join(str(m) for m in modes) if modes is not None else None
    if modes is not None and "persistent" in modes:
        mode: Mode = "persistent"
        why = f"its hello lists the modes {listed}"
    elif modes is None:
        mode = "report"
        why = "its hello lists no modes (report: every adapter speaks it)"
    else:
        mode = "report"
        why = f"its hello lists the modes {listed}"
    return ModeChoice(dataclasses.replace(client, mode=mode), hello, why)


def _says_hello(raw: bytes) -> bool:
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("kind") == "hello"


def _exit(client: Client, why: str) -> ModeChoice:
    reason = f"no hello, {why}"
    return ModeChoice(dataclasses.replace(client, mode="exit"), None, reason)


class _Idle:
    """Whether a client's session has sat blocked on its stdin, using no CPU, for
    :data:`IDLE_FOR`."""

    def __init__(self, session: int, stdin_pipe: int | None) -> None:
        self.session = _Session(session)
        self.stdin_pipe = stdin_pipe
        self.since: float | None = None
        self.ticks = -1

    def waiting(self, now: float) -> bool:
        sample = _session_state(self.session)
        if sample is None or self.stdin_pipe is None:
            return False  # no /proc: only the wait decides
        asleep, ticks, threads = sample
        if not asleep:
            self.since = None
            return False
        if ticks != self.ticks or self.since is None:
            self.since, self.ticks = now, ticks
            return False
        if now - self.since < IDLE_FOR:
            return False
        return any(_reads_pipe(pid, tid, self.stdin_pipe) for pid, tid in threads)


def waiting_for_input(proc: ClientProcess) -> bool | None:
    """Whether a running client is, now, asleep waiting for its next input: no thread of
    it running, and one blocked on the stdin pipe the kit gave it (see :func:`_reads_pipe`).
    None where ``/proc`` cannot tell.

    A client's own process is looked at first (``python client.py``: the one that
    reads); only when it sleeps on something else (a wrapper waiting for its child) is
    the rest of its session looked for."""
    pipe = _pipe_inode(proc)
    pid = proc.proc.pid
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None if not os.path.exists(f"/proc/{os.getpid()}/stat") else False
    if pipe is None:
        return None
    states = [_stat(f"/proc/{pid}/task/{tid}/stat") for tid in tids]
    if any(s is None or s[0] not in _ASLEEP for s in states):
        return False  # running (or gone meanwhile)
    if any(_reads_pipe(pid, tid, pipe) for tid in tids):
        return True
    sample = _Session(pid).state()
    if sample is None:
        return None
    asleep, _, threads = sample
    return asleep and any(_reads_pipe(p, tid, pipe) for p, tid in threads if p != pid)


#: Thread states that mean "not making progress on its own": asleep, stopped, a zombie.
_ASLEEP = frozenset("STtZXxIPK")
#: ``epoll_wait``'s events bit for "readable".
_EPOLLIN = 0x1


def _pipe_inode(proc: ClientProcess) -> int | None:
    """The inode of the pipe the client reads as its stdin (the kit holds its write end)."""
    stdin = proc.proc.stdin
    try:
        return os.fstat(stdin.fileno()).st_ino if stdin is not None else None
    except (OSError, ValueError):
        return None


class _Session:
    """The processes of the client's session, found in ``/proc`` without reading every
    process's ``stat`` file on every look.

    Reading all of them at every :data:`POLL` (a few hundred on a shared machine) would
    cost the kit more CPU than the client it waits for.  A process outside the session stays
    outside it (a process can leave a session, with ``setsid``, never join one), so the
    first look reads each process once and remembers those outside; later looks read only
    the session's own processes and the ones started since.  (A process number used again
    within the wait, by a new process of the client's, would be missed: Linux hands out
    numbers in rising order up to ``pid_max``, so that needs the whole range in seconds.)
    """

    def __init__(self, session: int) -> None:
        self.session = session
        self.ident = str(session)
        #: Process numbers known to be outside the session.
        self.outside: set[int] = set()

    def state(self) -> tuple[bool, int, list[tuple[int, str]]] | None:
        """(every thread of the session's processes asleep, their CPU clock ticks, the
        threads as (pid, tid)), or None where ``/proc`` cannot tell."""
        try:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return None
        asleep, ticks, found = True, 0, False
        threads: list[tuple[int, str]] = []
        outside = self.outside
        for pid in pids:
            if pid in outside:
                continue
            fields = _stat(f"/proc/{pid}/stat")
            if fields is None:
                continue  # gone meanwhile
            if len(fields) < 13 or fields[3] != self.ident:
                outside.add(pid)
                continue
            found = True
            ticks += int(fields[11]) + int(fields[12])
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue  # gone meanwhile
            for tid in tasks:
                task = _stat(f"/proc/{pid}/task/{tid}/stat")
                if task is not None and task[0] not in _ASLEEP:
                    asleep = False
                threads.append((pid, tid))
        if not found and not os.path.exists(f"/proc/{os.getpid()}/stat"):
            return None
        return asleep, ticks, threads


def _session_state(session: _Session) -> tuple[bool, int, list[tuple[int, str]]] | None:
    """One look at the client's session (:meth:`_Session.state`)."""
    return session.state()


def _reads_pipe(pid: int, tid: str, pipe: int) -> bool:
    """Whether a sleeping thread is blocked on the pipe ``pipe``: in a ``read`` of one of
    its descriptors of that pipe, or in an epoll wait on an instance watching it for input.

    The call is told by the thread's ``wchan`` (where the kernel has it asleep: a pipe
    read, an epoll wait) or by its system call's number where the architecture's numbers
    are known; its first argument must be the descriptor.  Both are needed: a ``sleep``
    is ``clock_nanosleep(CLOCK_REALTIME, ...)``, whose first argument is 0, stdin's
    descriptor."""
    task = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{task}/syscall", "rb") as fh:
            call = fh.read().split()
        number, fd = int(call[0]), int(call[1], 16)
    except (OSError, IndexError, ValueError):
        return False  # gone, not permitted, or running ("running", "-1 ...")
    try:
        with open(f"{task}/wchan", "rb") as fh:
            wchan = fh.read(256).decode("ascii", "replace")
    except OSError:
        wchan = ""
    reads, epolls = _CALLS.get(platform.machine(), ((), ()))
    if number in reads or ("pipe" in wchan and ("read" in wchan or "wait" in wchan)):
        return _link(pid, fd) == f"pipe:[{pipe}]"
    epoll = number in epolls or "epoll" in wchan or "ep_poll" in wchan
    if epoll and _link(pid, fd) == "anon_inode:[eventpoll]":
        return _epoll_watches(f"/proc/{pid}/fdinfo/{fd}", pipe)
    return False


#: System call numbers of (read, readv) and of the epoll waits, by architecture.
_CALLS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "x86_64": ((0, 19), (232, 281, 441)),
    "aarch64": ((63, 65), (22, 441)),
}


def _link(pid: int, fd: int) -> str | None:
    """What the process's descriptor ``fd`` is (``pipe:[INODE]``, ``anon_inode:[...]``)."""
    if not 0 <= fd < 1 << 20:
        return None  # not a descriptor (a pointer, -1)
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None


def _epoll_watches(fdinfo: str, pipe: int) -> bool:
    """Whether the epoll instance described by ``fdinfo`` waits for ``pipe`` to be
    readable (its ``tfd:`` lines name each watched file's inode in hexadecimal)."""
    try:
        with open(fdinfo, "rb") as fh:
            text = fh.read(65536).decode("ascii", "replace")
    except OSError:
        return False
    for line in text.splitlines():
        if not line.startswith("tfd:"):
            continue
        fields = line.split()
        try:
            events = int(fields[fields.index("events:") + 1], 16)
            inode = next(int(f[4:], 16) for f in fields if f.startswith("ino:"))
        except (ValueError, IndexError, StopIteration):
            continue
        if inode == pipe and events & _EPOLLIN:
            return True
    return False


def _stat(path: str) -> list[str] | None:
    """The fields of a ``stat`` file after the command name (state first)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()
