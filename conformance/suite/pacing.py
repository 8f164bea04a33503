"""When a check stops grading, and why: fail fast on a client that never answers, and the
time budget."""

from __future__ import annotations

import time
from dataclasses import dataclass

from stella_conform.conformance.checks import Judgment
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.suite.config import SuiteConfig

#: Crashes (or protocol errors) in a row, before any answer, that stop a check.
FAIL_FAST_CRASHES = 3


@dataclass
class Pace:
    """Fail fast and the time budget: when a check stops grading, and why.

    A check whose first cases all go unanswered stops with one ``error``: at the
    first timeout (each costs a whole ``--timeout``, and a client that hung once
    before answering anything hangs again), or after ``FAIL_FAST_CRASHES``
    crashes (cheap, but a client that crashes on every input has nothing to grade).
    Once any case is answered, later crashes and timeouts are ordinary errors.
    """

    config: SuiteConfig
    answered: bool = False
    unanswered: int = 0
    cases: int = 0
    #: Why the check stopped early, once it has.
    reason: str | None = None

    #: The time budget ran out before the check was graded in full.
    ran_out: bool = False

    def out_of_time(self) -> bool:
        deadline = self.config.deadline
        return deadline is not None and time.monotonic() > deadline

    def budget_message(self) -> str:
        self.ran_out = True
        self.reason = (
            f"not graded in full: the {self.config.budget_option} of "
            f"{self.config.time_budget:g} s ran out after {self.cases} case(s)"
        )
        return self.reason

    def stop_message(self, obs: Observation) -> str | None:
        """Why the check stops after this observation, or None to go on."""
        self.cases += 1
        if obs.ok:
            self.answered = True
            return None
        if self.answered:
            return None
        self.unanswered += 1
        if obs.status != "timeout" and self.unanswered < FAIL_FAST_CRASHES:
            return None
        said = last_stderr_line(obs.stderr_tail)
        first = "the first case" if self.unanswered == 1 else f"{self.unanswered} cases"
        self.reason = f"stopped after {first} without an answer: client {obs.describe()}" + (
            f"; client stderr: {said}" if said else ""
        )
        return self.reason


def last_stderr_line(tail: str, limit: int = 200) -> str:
    """The client's last words: the last non-blank line of its stderr, shortened."""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if len(lines[-1]) <= limit else lines[-1][:limit] + "…"


def stopped_judgment(obs: Observation, reason: str) -> Judgment:
    """The judgment that ends a check the client never answered: its own crash, or an error."""
    return Judgment("crash" if obs.status == "crash" else "error", reason)
