"""What a stopped command raises: :class:`Stopped` (a stop signal) and :class:`WorkerLost`
(a ``-j`` worker killed from outside), each knowing its exit code and what to say."""

from __future__ import annotations

import contextlib
import signal


class Stopped(KeyboardInterrupt):
    """The kit got a stop signal; unwinding writes what it has, marked incomplete.

    No ``except Exception`` on the way (a client's error handling) may swallow it, and it
    is a ``KeyboardInterrupt`` for Hypothesis, whose engine lets only that pass as it
    is: any other exception raised in the middle of a draw is recorded as the test
    case's outcome first, and recording a case cut short raises "Inconsistent data
    generation!" in its place (a stopped run would grade on, its clients killed, then
    exit 0 with a false "not deterministic" error).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.partial: list[object] = []

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def why(self) -> str:
        """What stopped the command, for its report: "stopped by SIGTERM"."""
        return f"stopped by {self.name}"

    #: Whether the command says :attr:`why` on stderr too: a stop signal was sent by the
    #: person (or the CI job) who sees the command end; a lost worker was not.
    news = False

    @property
    def hint(self) -> str:
        """What the stderr line adds to :attr:`why` (a lost worker: who sends its signal)."""
        return ""


class WorkerLost(Stopped):
    """A ``-j`` worker process ended in the middle of its checks: killed from outside.

    The OOM killer's SIGKILL, a stray ``kill``, a SIGTERM meant for someone else: no
    worker ends on its own while it has checks, so this is never the client's verdict
    and not the kit's bug either.  The command ends as a stopped one does, with what was
    graded in every report, marked incomplete, and exit 128 + the worker's signal (137
    for SIGKILL), where concurrent.futures' ``BrokenProcessPool`` would read as a traceback
    and exit 3, "a bug in the kit".  A worker that exited with a status instead (nothing in the kit
    does that) is exit 3, as an internal error is, but still one line.
    """

    def __init__(self, pid: int | None, status: int | None) -> None:
        signum = -status if status is not None and status < 0 else 0
        if status is not None and 128 < status < 128 + signal.NSIG:
            # the worker's own stop handler (:func:`_on_signal`): it exits 128 + N
            signum = status - 128
        super().__init__(signum)
        self.pid, self.status = pid, status

    @property
    def name(self) -> str:
        if not self.signum:
            return "no signal" if self.status is None else f"exit status {self.status}"
        with contextlib.suppress(ValueError):
            return signal.Signals(self.signum).name
        return f"signal {self.signum}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum if self.signum else 3  # errors.INTERNAL_ERROR

    @property
    def why(self) -> str:
        worker = "a -j worker process" + (f" (pid {self.pid})" if self.pid else "")
        if self.status is None:
            return f"{worker} ended abruptly in the middle of its checks"
        if not self.signum:
            return f"{worker} ended with {self.name} in the middle of its checks"
        return f"{worker} was killed by {self.name} from outside the kit"

    @property
    def hint(self) -> str:
        if self.signum == signal.SIGKILL:
            return " (SIGKILL is what the OOM killer sends when memory runs out)"
        return ""

    news = True
