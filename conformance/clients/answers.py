"""What a client says in report and persistent modes, read under the protocol's rules.

:class:`AnswerReader` takes one validated message at a time (:mod:`.protocol` parses it)
and enforces what may come when: one hello first, line observations only for lines
already written and each once, nothing after the summary, the case id of the case
running, and no more observation bytes than the input allows.  A break of any rule is a
:class:`~.protocol.ProtocolError`, which the runner turns into the case's observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stella_conform.conformance.clients.process import ClientProcess, LineTooLong
from stella_conform.conformance.clients.protocol import ProtocolError, excerpt, parse_message
from stella_conform.errors import SetupError

if TYPE_CHECKING:
    from stella_conform.conformance.clients.runner import Observation


#: What one case's line observations may hold: a base plus a multiple of the input.
OBSERVATIONS_BASE = 8 * 1024 * 1024
OBSERVATIONS_PER_INPUT_BYTE = 4


#: The fields of a line observation the kit keeps (all the judges and the report read).
OBSERVATION_KEPT = ("kind", "line", "outcome", "type", "reason", "id")


def observations_cap(input_size: int) -> int:
    return OBSERVATIONS_BASE + OBSERVATIONS_PER_INPUT_BYTE * input_size


class AnswerReader:
    """Reads validated messages from a client, enforcing the report-mode rules."""

    def __init__(
        self,
        proc: ClientProcess,
        obs: Observation,
        written: list[int],
        case_id: str | None = None,
        input_size: int = 0,
        summary_only: bool = False,
    ) -> None:
        self.proc = proc
        self.obs = obs
        self.written = written  # lines written so far, as a one-item list
        self.case_id = case_id
        self.summary_only = summary_only
        self.pending: set[int] = set()
        # Observations are kept for grading; a client echoing a 4 MB ``event`` on every
        # line would otherwise hold gigabytes. What it may say is bounded by what it got.
        self.budget = observations_cap(input_size)
        self.kept = 0

    def next(self, deadline: float) -> dict[str, Any] | None:
        try:
            raw = self.proc.next_line(deadline)
        except LineTooLong as exc:
            raise ProtocolError(str(exc)) from None
        if raw is None:
            return None
        message = parse_message(raw)
        if self.case_id is not None and message["kind"] != "hello":
            got = message.get("id")
            if got != self.case_id:
                hint = (
                    " (an answer without a case id: the adapter may not support persistent "
                    "mode; try --mode report, or list its modes in its hello)"
                    if got is None
                    else ""
                )
                raise ProtocolError(
                    f"answer for case {got!r} while case {self.case_id!r} is running: "
                    f"{excerpt(raw)}{hint}"
                )
        self.record(message, raw)
        return message

    def record(self, message: dict[str, Any], raw: bytes) -> None:
        kind = message["kind"]
        if kind == "hello":
            raise ProtocolError(f"a second hello: {excerpt(raw)}")
        if self.obs.summary is not None:
            raise ProtocolError(f"{kind} after the summary: {excerpt(raw)}")
        if kind in ("line", "pending"):
            n = message["line"]
            if n > self.written[0]:
                raise ProtocolError(
                    f"{kind} for line {n}, but only {self.written[0]} line(s) were written: "
                    f"{excerpt(raw)}"
                )
            if kind == "pending":
                self.pending.add(n)
                return
            if n in self.obs.lines:
                raise ProtocolError(f"a second observation for line {n}: {excerpt(raw)}")
            self.kept += len(raw)
            if self.kept > self.budget:
                raise ProtocolError(
                    f"the line observations of this case exceed {self.budget} bytes "
                    f"({OBSERVATIONS_BASE} + {OBSERVATIONS_PER_INPUT_BYTE} per input byte), "
                    f"at line {n}"
                )
            # only what is graded is kept: an echoed event can be few bytes and many objects
            # (3.8 MiB of {} is a million dicts parsed, over a hundred MiB if kept)
            self.obs.lines[n] = {k: message[k] for k in OBSERVATION_KEPT if k in message}
            self.pending.discard(n)
        elif kind == "summary":
            if self.summary_only:
                pass  # it claimed to answer with a summary alone
            elif self.written[0] > 0 and not self.obs.lines and not self.pending:
                raise ProtocolError(f"summary before any observation: {excerpt(raw)}")
            self.obs.summary = message
            self.obs.verdict = message["verdict"]
            self.obs.take_reason()


class UnsupportedMode(SetupError):
    """The adapter's hello lists the modes it supports, and the one asked for is not one."""


def check_mode(hello: Mapping[str, Any], mode: str) -> None:
    """Raise :class:`UnsupportedMode` when the hello declares modes that exclude ``mode``.

    A set-up error, not a per-case one: grading a report-only adapter in persistent
    mode would otherwise give an error for every case, none of them naming the cause.
    """
    modes = hello.get("modes")
    if modes is None or mode in modes:
        return
    name = (hello.get("client") or {}).get("name", "the adapter")
    supported = ", ".join(str(m) for m in modes) or "none"
    raise UnsupportedMode(
        f"{name} does not support --mode {mode}: its hello lists the modes {supported}"
    )


#: What a missing hello tells the user: which mode grades a client without the protocol.
NO_HELLO = (
    " (a client that does not speak the adapter protocol is graded with --mode exit, "
    "or --mode auto, which chooses by its hello)"
)


def expect_hello(reader: AnswerReader, deadline: float, mode: str | None = None) -> dict[str, Any]:
    try:
        raw = reader.proc.next_line(deadline)
    except LineTooLong as exc:
        raise ProtocolError(str(exc)) from None
    if raw is None:
        if reader.proc.stdout_closed:
            raise ProtocolError(f"no hello: the client closed stdout without writing one{NO_HELLO}")
        raise ProtocolError(f"no hello within the timeout{NO_HELLO}")
    hello = parse_message(raw, expect=("hello",))
    if mode is not None:
        check_mode(hello, mode)
    return hello
