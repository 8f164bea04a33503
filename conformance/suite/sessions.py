"""Running a check's cases on the client: one process per check, or one shared by the
checks graded in a process."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.clients.runner import (
    Client,
    Feed,
    Observation,
    PersistentSession,
    run_once,
)
from stella_conform.conformance.suite.config import SuiteConfig


class SharedSession:
    """The persistent client process the checks graded in this process share.

    Starting a client is not free: as much CPU as grading tens of its cases, so a process
    per check would spend a large part of a run starting clients.  While sharing is on
    (:func:`shared_sessions`, and in every ``-j`` worker), the checks of a run take turns
    on one client process; it is restarted only after a crash or a timeout, as within a
    check.  ``R3.no-loud-warning`` gets a process no check has used
    (which the checks after it go on sharing): a client that warns once per process would
    otherwise pass or fail it by what earlier checks made it write, and its verdict would
    move with the checks run before it in a worker (``--only``, ``-j``, ``--shard``).  A run
    grades it first (:func:`~stella_conform.conformance.suite.grading.grading_order`), so
    that is the run's first process; graded after another check, it starts a fresh one.  It
    counts the stderr lines the process writes after its own baseline case, every line, not
    only the capped part of stderr kept.
    """

    on = False
    session: PersistentSession | None = None

    @classmethod
    def for_check(cls, client: Client, check: Check) -> PersistentSession | None:
        """The shared session for this client, or None when this check needs its own."""
        if not cls.on:
            return None
        if cls.session is not None and cls.session.client != client:
            cls.close()
        if cls.session is not None and check.judge == "quiet" and cls.session.counter:
            cls.close()  # a process no earlier check has made write anything
        if cls.session is None:
            cls.session = PersistentSession(client)
        return cls.session

    @classmethod
    def close(cls) -> None:
        if cls.session is not None:
            session, cls.session = cls.session, None
            session.close()


@contextlib.contextmanager
def shared_sessions() -> Iterator[None]:
    """Within it, checks graded in this process share one persistent client process."""
    was = SharedSession.on
    SharedSession.on = True
    try:
        yield
    finally:
        SharedSession.on = was
        SharedSession.close()


class CaseRunner:
    """Runs cases for one check in one worker, reusing a persistent client if asked."""

    def __init__(self, config: SuiteConfig, check: Check) -> None:
        self.config = config
        self.check = check
        persistent = config.client.mode == "persistent" and config.client.function is None
        shared = SharedSession.for_check(config.client, check) if persistent else None
        self.session = shared or (PersistentSession(config.client) if persistent else None)
        #: Whether the session is this check's own, to close when the check is done.
        self.owns_session = shared is None
        self.calls = 0
        #: Whether the client has answered a case of this check in time.
        self.answered = False

    def run(self, case: GradedCase) -> Observation:
        """One case; a timeout after earlier answers is run once more before it counts.

        The timeout is wall-clock time, and on a busy machine a client can spend it
        waiting for a CPU: a client that has answered before is given the case again, and
        only a second timeout is an ``error``.  (A client that never answered is not:
        fail-fast stops the check at its first timeout, see
        :class:`~stella_conform.conformance.suite.pacing.Pace`.)
        """
        obs = self._run(case)
        deadline = self.config.deadline
        over = deadline is not None and time.monotonic() > deadline
        if obs.status == "timeout" and self.answered and not over:
            obs = self._run(case)
            if obs.status == "timeout":
                obs.detail += " (twice: the case was run again in case the machine was busy)"
        if obs.ok:
            self.answered = True
        return obs

    def _run(self, case: GradedCase) -> Observation:
        self.calls += 1
        return case.input_kind.observe(case, self.check, self)

    @property
    def client(self) -> Client:
        """The client under test."""
        return self.config.client

    def play(self, stream: bytes, feed: Feed) -> Observation:
        """Run the client on ``stream``: in the check's session, or in a fresh process."""
        if self.session is not None:
            return self.session.run(stream, feed)
        return run_once(self.config.client, stream, feed)

    def close(self) -> None:
        if self.session is not None and self.owns_session:
            self.session.close()
