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

Waiting for input is seen, on Linux, in ``/proc``: every thread of every process of the
client's session asleep, and none of them using CPU, for :data:`IDLE_FOR`.  A starting
program is running, runnable (waiting for a CPU on a busy machine) or reading its files;
a program that reads stdin before writing anything is asleep.  So an exit-mode client is
known in a fraction of a second, and a slow adapter still has the whole wait.  Where
``/proc`` is missing, the wait is the only test.

The measured starts behind the figures are in docs/adapter-protocol.md
(``benchmarks/hello_wait.py`` measures them again).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from stella_conform.conformance.process import ClientProcess, LineTooLong
from stella_conform.conformance.protocol import ProtocolError, excerpt, parse_message
from stella_conform.conformance.runner import (
    Client,
    Mode,
    _start,
    _stream_file,
    ensure_mode_supported,
)

#: The longest auto mode waits for a hello (a client's ``--timeout`` may lower it).  About
#: four times the slowest start measured on a loaded machine (2.3 s through a pyenv shim,
#: 1.9 s for the TypeScript template, at load average 20 with four busy loops beside:
#: ``benchmarks/hello_wait.py``).  On Linux a client that waits for its stream is seen
#: long before (:data:`IDLE_FOR`); only where ``/proc`` is missing does every exit-mode
#: client cost the whole wait.
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
    idle = _Idle(proc.proc.pid)
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
    """Whether a client's session has sat asleep, using no CPU, for :data:`IDLE_FOR`."""

    def __init__(self, session: int) -> None:
        self.session = session
        self.since: float | None = None
        self.ticks = -1

    def waiting(self, now: float) -> bool:
        sample = _session_state(self.session)
        if sample is None:
            return False  # no /proc: only the wait decides
        asleep, ticks = sample
        if not asleep:
            self.since = None
            return False
        if ticks != self.ticks or self.since is None:
            self.since, self.ticks = now, ticks
            return False
        return now - self.since >= IDLE_FOR


#: Thread states that mean "not making progress on its own": asleep, stopped, a zombie.
_ASLEEP = frozenset("STtZXxIPK")


def _session_state(session: int) -> tuple[bool, int] | None:
    """(every thread of the session's processes asleep, their CPU clock ticks), or None
    where ``/proc`` cannot tell."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    asleep, ticks, found = True, 0, False
    for pid in pids:
        fields = _stat(f"/proc/{pid}/stat")
        if fields is None or len(fields) < 13 or fields[3] != str(session):
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
    if not found and not os.path.exists(f"/proc/{os.getpid()}/stat"):
        return None
    return asleep, ticks


def _stat(path: str) -> list[str] | None:
    """The fields of a ``stat`` file after the command name (state first)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()
