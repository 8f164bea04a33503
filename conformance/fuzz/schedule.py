"""Which check the next case is for, whether it starts afresh, and when fuzzing stops.

Time goes to the checks whose recent cases keep finding new behaviour (an
upper-confidence-bound choice over checks, so no check starves); a team of workers
divides the checks among them.  Fuzzing stops at the budget less what the final pass is
likely to need, at Ctrl-C, or at a stop condition (``--max-cases``, ``--max-failures``,
every check failed with ``--stop-on-first``).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from stella_conform.conformance.checks import Check
from stella_conform.conformance.fuzz.arms import Arm
from stella_conform.conformance.fuzz.team import SYNC_SECONDS, Team
from stella_conform.conformance.suite import SuiteConfig

#: Share of draws that start from scratch even when the corpus has inputs to mutate.
FRESH_SHARE = 0.25
#: Share of a team worker's cases spent on its own share of the checks (the rest on every
#: check, by the same choice as a worker alone: none is left to one worker only).
TEAM_SHARE = 0.75
#: The most of the ``--for`` budget kept back for the final pass ("grade like ``run``").
FINAL_PASS_SHARE_CAP = 0.5


@dataclass(frozen=True)
class FuzzConfig:
    suite: SuiteConfig
    seconds: float
    stop_on_first: bool = False
    max_failures: int | None = None
    #: Stop after this many cases (whatever the time): a session that is the same on a
    #: fast machine and a loaded one.
    max_cases: int | None = None
    sync_seconds: float = SYNC_SECONDS
    #: When the budget started, on the fuzzer's clock (the CLI: when the command started,
    #: so ``--for`` bounds the whole command); ``None``: when :meth:`Fuzzer.run` starts.
    started: float | None = None


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``5m``, ``1h30m`` as seconds; ValueError when malformed."""
    spec = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", spec):
        seconds = float(spec)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", spec)
        if not parts or "".join(n + u for n, u in parts) != spec:
            raise ValueError(f"not a duration: {text!r} (e.g. 90s, 5m, 1h30m)")
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
        seconds = sum(float(n) * scale[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"a duration must be positive: {text!r}")
    return seconds


class Schedule:
    """The choice of the next check and of fresh or mutated cases, with the session's
    random draws (``rnd``) and its team's division of the checks (``team``); the budget,
    with what the client's cases have cost so far (``case_seconds`` over ``timed``
    cases) and why fuzzing stopped (``stopped``)."""

    def __init__(
        self, config: FuzzConfig, checks: Sequence[Check], rnd: random.Random, team: Team
    ) -> None:
        self.config = config
        self.checks = checks
        self.random = rnd
        self.team = team
        self.case_seconds = 0.0
        self.timed = 0
        self.stopped = "time"

    def timed_case(self, seconds: float) -> None:
        """Count what one case cost the client: what the final pass will cost per case."""
        self.case_seconds += seconds
        self.timed += 1

    def choose(self, arms: Sequence[Arm], cases: int) -> Arm:
        """The check for the next case: the one whose recent cases found most (UCB1).

        Workers sharing a database that fuzz one client's checks divide them, as HypoFuzz
        spreads tests over its workers: worker P of a team of N (by seed, from the roll
        call) spends :data:`TEAM_SHARE` of its cases on the checks P, P + N, P + 2N, ...
        (and the rest on every check), so the team's cases are not spread thin over every
        check on every worker; each check's finds reach the others at their next look.
        """
        live = [a for a in arms if not a.retired]
        mine = self.own(arms, live)
        if mine and self.random.random() < TEAM_SHARE:
            live = mine
        scores = [a.score(cases) for a in live]
        best = max(scores)
        return self.random.choice([a for a, s in zip(live, scores, strict=True) if s == best])

    def own(self, arms: Sequence[Arm], live: Sequence[Arm]) -> list[Arm]:
        """This worker's share of the live checks in its team (none alone, or when its
        share is all of them or none of them: then it spreads over every check)."""
        place, size = self.team.position
        if size < 2:
            return []
        mine = [a for i, a in enumerate(arms) if i % size == place and not a.retired]
        return mine if 0 < len(mine) < len(live) else []

    def fresh_share(self, arms: Sequence[Arm]) -> float:
        """How many of this worker's cases start from scratch (the rest mutate its corpus).

        A team divides its checks (:meth:`choose`), and each worker takes its share deep
        by mutating, as a worker alone does.  A team larger than its list of checks (two
        workers on one check, four on three) leaves some workers without a share: they
        would mutate the very corpus the others take deep, one search run twice.  They
        divide the work another way: they draw every case afresh, and what these find
        that is new reaches the others at their next look.  (On the rule-5 deep bug, which
        a fresh case is as often as a mutant, two workers sharing one check's corpus were
        later than two alone on 13 seeds of 40 and sooner on 4: docs/fuzzing.md.)
        Parallel fuzzers give their instances different schedules for the same reason
        (AFL++'s ``-p explore`` secondaries).
        """
        place, size = self.team.position
        return FRESH_SHARE if place < len(arms) or size < 2 else 1.0

    def final_reserve(self, failures: int) -> float:
        """The part of the budget the final pass is likely to need: each check's fixtures,
        a generated case and a database replay, a few shrinking runs per failure found,
        at what a case has cost so far (with a margin); at most half the budget."""
        if not self.timed or math.isinf(self.config.seconds):
            return 0.0
        per_case = self.case_seconds / self.timed
        runs = sum(len(c.fixtures) + 2 for c in self.checks) + 10 * failures
        return min(FINAL_PASS_SHARE_CAP * self.config.seconds, 1.5 * per_case * runs)

    def done(
        self,
        deadline: float,
        now: float,
        *,
        interrupted: bool,
        cases: int,
        failures: int,
        arms: Sequence[Arm],
    ) -> bool:
        """Whether fuzzing stops here (``stopped`` says why)."""
        if interrupted:
            self.stopped = "interrupted"
            return True
        if now >= deadline - self.final_reserve(failures):
            self.stopped = "time"
            return True
        if self.config.max_cases is not None and cases >= self.config.max_cases:
            self.stopped = f"{cases} cases"
            return True
        if self.config.max_failures is not None and failures >= self.config.max_failures:
            self.stopped = f"{failures} failure(s) found"
            return True
        if all(arm.retired for arm in arms):
            self.stopped = "every check failed"
            return True
        return False
