"""One check being fuzzed (an *arm*, as of a bandit), and the failures it found.

An arm holds what fuzzing one check needs: its generator, the runner that gives its cases
to the client, its corpus (:mod:`corpus`), its record of new behaviour (for the schedule's
choice of the next check), its failures (one per reaction of the client, see
:func:`reaction`), and what it exchanges with other workers through a shared database.
:func:`armed` makes one ready: its generator, its database key, its runner.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stella_conform.conformance.checks import Check, Context, GradedCase, Judgment
from stella_conform.conformance.checks.identity import failure_identity
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.fuzz.corpus import REWEIGH_EVERY, Entry
from stella_conform.conformance.suite import (
    CaseFailure,
    CaseRunner,
    SuiteConfig,
    check_strategy,
    database_key,
    fixture_case,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.schemas.vocabulary import Vocabulary

#: Distinct failures kept (and saved) per check.
FAILURES_PER_CHECK = 5


@dataclass
class Found:
    """One de-duplicated failure: a check, the client's reaction, and when it was found."""

    check: str
    signature: str
    message: str
    seconds: float
    cases: int
    failure: CaseFailure
    #: The recording the case's run came from (``--seed-corpus``), if any.
    recording: str | None = None
    #: Found by mutating an input another worker shared.
    from_shared: bool = False
    #: Another worker's failure (from the shared database), failing here too when run.
    replayed: bool = False
    #: The failing case itself, to replay when no example database holds it.
    case: GradedCase | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "signature": self.signature,
            "message": self.message,
            "seconds": round(self.seconds, 2),
            "cases_before": self.cases,
            "saved": self.failure.saved,
            "replay": self.failure.replay,
            **({"not_saved": self.failure.not_saved} if self.failure.not_saved else {}),
            "recording": self.recording,
            "from_shared_input": self.from_shared,
            "from_shared_failure": self.replayed,
        }


def reaction(check: Check, judgment: Judgment, obs: Observation) -> str:
    """The failure's identity
    (:func:`~stella_conform.conformance.checks.identity.failure_identity`): two finds with
    the same one are one bug found twice, as ``run`` counts them."""
    return failure_identity(check.id, judgment, obs)


@dataclass
class Arm:
    """One check being fuzzed: its generator, its client runner, its corpus, its record."""

    check: Check
    strategy: Any
    runner: CaseRunner
    ctx: Context
    key: bytes
    corpus: list[Entry] = field(default_factory=list)
    cases: int = 0
    novel: int = 0
    recent: deque[int] = field(default_factory=lambda: deque(maxlen=200))
    failures: dict[str, Found] = field(default_factory=dict)
    retired: bool = False
    #: How many of this check's cases reached each thing (a code edge, a shape, an answer).
    hits: Counter[int] = field(default_factory=Counter)
    weights: list[float] = field(default_factory=list)
    weighed_at: int = -REWEIGH_EVERY
    #: Inputs (choice bytes) this arm has run or kept: another worker's is taken in once.
    known: set[bytes] = field(default_factory=set)
    #: Cases since the last look at the shared database.
    since_sync: int = 0
    #: Digests of the shared records this arm has looked at, and the records of its own
    #: inputs not written to the shared database yet (at the next look, in one go).
    looked: set[bytes] = field(default_factory=set)
    outbox: list[bytes] = field(default_factory=list)

    def score(self, total: int) -> float:
        """Recent rate of new behaviour plus an exploration bonus (UCB1)."""
        rate = sum(self.recent) / len(self.recent) if self.recent else 1.0
        return rate + math.sqrt(2 * math.log(total + 1) / (self.cases + 1))


def armed(
    check: Check,
    suite: SuiteConfig,
    traced: SuiteConfig,
    vocab: Vocabulary,
    live: Callable[[CaseRunner], None],
) -> Arm:
    """``check`` ready to be fuzzed: its generator, its database key (``run``'s, so that
    ``run`` replays what fuzzing saves), and a runner on the client that reports its
    coverage (``traced``: the suite with that client).  A quiet check first runs its
    minimal fixture, for the stderr the client writes when nothing is wrong; ``live`` is
    told of the runner before it runs (one client process alive at a time)."""
    runner = CaseRunner(traced, check)
    claims = suite.claims
    ctx = Context(computes=claims.computes, summary_only=claims.summary_only)
    strategy = check_strategy(check, vocab, suite.recordings)
    arm = Arm(check, strategy, runner, ctx, b"")
    arm.key = database_key(check, suite)
    if check.judge == "quiet":
        fixtures = suite.fixtures_dir or bundled_fixtures_dir()
        live(runner)
        baseline = runner.run(fixture_case(check, "minimal_run", vocab, fixtures))
        arm.ctx.baseline_stderr_lines = baseline.stderr_lines
    return arm
