"""The fuzzing loop: one client, its checks' generators, case after case until told to stop.

Each case is drawn through Hypothesis's own engine data (``generators/engine/choices.py``),
afresh or from a mutant of a corpus input (:mod:`mutators`), given to the client, judged,
and its behaviour (the client's coverage, the input's shape, the answer) compared with what
the session has seen: an input that did something new is kept (:mod:`corpus`), a failure
is saved once per reaction of the client.  The schedule (:mod:`schedule`) picks the check,
the team (:mod:`team`) exchanges inputs with other workers, and the final pass
(:mod:`final`) grades every check as ``run`` does when fuzzing stops.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis.database import ExampleDatabase, choices_from_bytes, choices_to_bytes

from stella_conform import stopping
from stella_conform.conformance.checks import Check, GradedCase, Judgment, judge
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.fuzz.arms import FAILURES_PER_CHECK, Arm, Found, armed, reaction
from stella_conform.conformance.fuzz.corpus import CORPUS_CAP, Choices, Entry, pick
from stella_conform.conformance.fuzz.feedback import Blind, hash_seed, timeout_note, traced_client
from stella_conform.conformance.fuzz.final import FinalPass
from stella_conform.conformance.fuzz.mutators import mutate
from stella_conform.conformance.fuzz.records import _HASHED, CORPUS_SUB_KEY, _stable
from stella_conform.conformance.fuzz.report import FuzzOutcome, Progress
from stella_conform.conformance.fuzz.schedule import FuzzConfig, Schedule
from stella_conform.conformance.fuzz.shapes import shape_features
from stella_conform.conformance.fuzz.team import Sharing, Team, client_digest
from stella_conform.conformance.store.database import KitDatabase
from stella_conform.conformance.store.recordings import drawing_recorded, recording_prefix
from stella_conform.conformance.suite import (
    UNSHRUNK,
    CaseRunner,
    CheckResult,
    case_failure,
    check_strategy,
    claimed,
    example_database,
    graded_case,
    save_failure,
    shared_sessions,
)
from stella_conform.generators.engine.choices import ChoiceDraw, draw_choices
from stella_conform.schemas.vocabulary import Vocabulary

#: Outcomes for which the kit stops the client in the middle of the case (a protocol
#: error, a timeout): its coverage of that case is not kept, since what the client ran
#: between its bad answer and the kill is a matter of scheduling (a seeded session took
#: another path when that counted 71 edges in one run and 75 in the next).
STOPPED_MID_CASE = frozenset({"protocol-error", "timeout"})


class Fuzzer:
    """Runs the checks' generators against one client until told to stop."""

    def __init__(
        self,
        checks: Sequence[Check],
        config: FuzzConfig,
        feedback: Blind,
        *,
        progress: Callable[[Progress], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.checks = list(checks)
        self.config = config
        # the client as the session runs it (its final pass, its replay lines): with the
        # hash seed its traced client gets (feedback.hash_seed)
        client = config.suite.client
        hashed = dataclasses.replace(client, env=hash_seed(client.env, feedback, config.suite.seed))
        self.suite = dataclasses.replace(config.suite, client=hashed)
        self.feedback = feedback
        #: The arms' client: the same command, started so that it reports its coverage
        #: (its timeouts scaled by what the coverage costs it, feedback.traced_client).
        traced = traced_client(client, feedback, self.suite.seed)
        self.traced = dataclasses.replace(self.suite, client=traced)
        self.asked: Callable[[], bool] = lambda: False  # a first Ctrl-C (stopping.signals)
        self.progress = progress
        self.clock = clock
        self.random = random.Random(self.suite.seed)
        #: Whether the case drawn last started from a recording (``--seed-corpus``).
        self.drawn_recorded = False
        self.vocab: Vocabulary = self.suite.vocabulary()
        self.database: ExampleDatabase | None = example_database(self.suite)
        digest = client_digest(client, self.feedback.kind, self.vocab.ident)
        self.team = Team(self.database, digest, self.suite.seed, config.sync_seconds)
        self.keeper = self.team.keeper()
        self.schedule = Schedule(config, self.checks, self.random, self.team)
        self.final = FinalPass(config, self.suite, self.checks, replays=self.database is None)
        #: The corpus input the case in hand was mutated from (None: drawn afresh).
        self.parent: Entry | None = None
        #: Everything the session's cases reached (code edges, shapes, answers).
        self.seen: set[int] = set()
        self.cases = 0
        self.found: list[Found] = []
        self.arms: list[Arm] = []
        self.started = 0.0
        #: The one client session alive (the others are paused): at most one client.
        self.live: Any = None

    @property
    def interrupted(self) -> bool:
        return self.asked()

    @property
    def sharing(self) -> Sharing | None:
        """What this worker shared (None without a shared database)."""
        return self.team.sharing

    def stopping(self, deadline: float) -> bool:
        """Whether to stop taking inputs in: interrupted, or the deadline passed."""
        return self.interrupted or self.clock() >= deadline

    # ------------------------------------------------------------------ set-up

    def _fuzzable(self, check: Check) -> bool:
        client = self.suite.client
        if not check.grades_in(client.mode):
            return False
        claims = self.suite.claims
        if claims.unmet(check, self.vocab, client.mode) or claims.skip_reason(check, self.vocab):
            return False  # (an unmet claim fails in run whatever the cases: nothing to find)
        if client.function is not None and not check.kind.in_process:
            return False
        return check_strategy(check, self.vocab, self.suite.recordings) is not None

    def _resume(self, arm: Arm, deadline: float) -> None:
        """Replay the corpus an earlier session left in the local database, then take in
        what the other workers shared."""
        if self.database is None:
            return
        key = arm.key + CORPUS_SUB_KEY
        if isinstance(self.database, KitDatabase):
            local = self.database.fetch_local(key)
        else:
            local = list(self.database.fetch(key))
        for blob in local[:CORPUS_CAP]:
            if self.stopping(deadline):
                return
            self.replay(arm, blob, "resumed")
        self.team.receive(arm, deadline, CORPUS_CAP, self)  # a fresh worker starts from theirs

    def replay(self, arm: Arm, blob: bytes, origin: str) -> bool:
        """Run an input once (unless the arm knows it); whether it was kept."""
        self.keeper.kept = False
        if blob in arm.known:
            return False
        arm.known.add(blob)
        choices = choices_from_bytes(blob)
        if choices is None:
            return False
        self.parent = None
        self._one(arm, choices, origin=origin)
        return self.keeper.kept

    def _seed(self, arm: Arm, deadline: float) -> None:
        """One case from each recording (``--seed-corpus``), kept where it does something
        new: the fuzzer's seed corpus, run first as fuzzers run theirs."""
        if not self.suite.recordings or not arm.check.kind.recordings:
            return
        for index in range(len(self.suite.recordings)):
            if self.stopping(deadline):
                return
            self.parent = None
            self.keeper.kept = False
            self._one(arm, recording_prefix(index))
            self.keeper.seeds_kept += self.keeper.kept

    def adopt(self, arm: Arm, blob: bytes, features: frozenset[int]) -> None:
        """Keep another worker's input, unrun, if what it found is not all seen here.

        The same client, run and measured the same way, reaches the same code on the
        same input, so the record says what running it would, without the cases that
        replaying every input the others kept would cost (up to a fifth of a worker's).
        """
        fresh = features - self.seen
        choices = choices_from_bytes(blob)
        if not fresh or choices is None:
            return
        drawn = self._draw(arm, choices)  # the case's structure, for its mutations
        if drawn is None:
            return
        self.seen |= fresh
        reached = frozenset(f >> 3 if f < _HASHED else f for f in features)
        arm.hits.update(reached)
        self._keep(arm, drawn, len(fresh), reached, "shared", True)
        assert self.sharing is not None
        self.sharing.adopted += 1

    def _sync(self, deadline: float, *, final: bool = False) -> None:
        """Every few seconds: what this worker learnt out, what the others found in."""
        if self.sharing is None:
            return
        self.team.sync(self.arms, deadline, self.clock(), self, self.keeper, final=final)

    # ------------------------------------------------------------------ the loop

    def run(self) -> FuzzOutcome:
        """Fuzz until the budget (less the final pass's share), Ctrl-C or a stop condition;
        then grade every check as ``run`` does, within what is left of the budget.

        A first Ctrl-C while fuzzing ends the fuzzing; a second one, SIGTERM or SIGHUP
        (:class:`stopping.Stopped`) ends the command: the outcome so far, with what the
        final pass graded, travels in ``Stopped.partial`` for the report.
        """
        self.started = self.config.started if self.config.started is not None else self.clock()
        deadline = self.started + self.config.seconds
        final_pass = None
        try:
            with stopping.first_interrupt_asks() as asked, shared_sessions():
                self.asked = asked
                try:
                    self._fuzz(deadline)
                finally:
                    for arm in self.arms:
                        arm.runner.close()
            fuzz_seconds = self.clock() - self.started
            self._sync(deadline, final=True)
            final_pass = self.final.run(deadline, self.arms, self.clock())
            self.team.close(self.started)
        except stopping.Stopped as stop:
            fuzz_seconds = self.clock() - self.started
            self.schedule.stopped = f"stopped by {stop.name}"
            self.team.close(self.started)
            stop.partial = [self._outcome(self.final.partial(self.arms), fuzz_seconds, None)]
            raise
        return self._outcome(self.final.graded, fuzz_seconds, final_pass)

    def _outcome(
        self, results: list[CheckResult], seconds: float, final_pass: str | None
    ) -> FuzzOutcome:
        return FuzzOutcome(
            results=results,
            seconds=seconds,
            cases=self.cases,
            features=self._features(),
            stopped=self.schedule.stopped,
            feedback="; ".join(
                filter(
                    None, [self.feedback.describe(), timeout_note(self.suite.client, self.feedback)]
                )
            ),
            failures=sorted(self.found, key=lambda f: f.seconds),
            arms=self.arms,
            sharing=self.sharing,
            recordings=len(self.suite.recordings),
            final_pass=final_pass,
            seeds_kept=self.keeper.seeds_kept,
        )

    def _fuzz(self, deadline: float) -> None:
        self.begin(deadline)
        last_report = self.clock()
        window = (self.cases, self._features())
        while self.arms and not self._done(deadline):
            self.step(deadline)
            now = self.clock()
            if self.progress is not None and now - last_report >= 1.0:
                self.progress(self._progress(now - last_report, window))
                last_report, window = now, (self.cases, self._features())

    def _done(self, deadline: float) -> bool:
        interrupted = self.interrupted
        return self.schedule.done(
            deadline,
            self.clock(),
            interrupted=interrupted,
            cases=self.cases,
            failures=len(self.found),
            arms=self.arms,
        )

    # The loop in two parts, so that benchmarks/shared_fuzz.py can drive several fuzzers
    # case by case in lockstep (within ``suite.sessions.shared_sessions``, ``started`` set).

    def begin(self, deadline: float) -> None:
        """Arm the checks, resume the corpus the database holds, run the seed corpus."""
        self.arms = [
            armed(c, self.suite, self.traced, self.vocab, self._only_live)
            for c in self.checks
            if self._fuzzable(c)
        ]
        self.team.roll_call(self.arms)
        for arm in self.arms:
            self._resume(arm, deadline)
        for arm in self.arms:
            self._seed(arm, deadline)
        self.team.next_sync = self.clock() + self.config.sync_seconds

    def step(self, deadline: float) -> None:
        """One case (and, when it is time, a look at the shared database)."""
        if not self.team.read:
            # as it starts: the workers started with it have said so (lockstep: all of them)
            self.team.read = True
            self.team.read_team(self.arms)
        arm = self.schedule.choose(self.arms, self.cases)
        self._one(arm, self._mutant(arm))
        self._sync(deadline)

    def _features(self) -> int:
        """Coverage features seen so far (the client's code; input shapes not counted)."""
        return sum(1 for f in self.seen if f < _HASHED)

    def _progress(self, interval: float, window: tuple[int, int]) -> Progress:
        features = self._features()
        return Progress(
            seconds=self.clock() - self.started,
            cases=self.cases,
            rate=(self.cases - window[0]) / interval if interval > 0 else 0.0,
            features=features,
            new_features=features - window[1],
            failures=list(self.found),
        )

    # ------------------------------------------------------------------ one case

    def _mutant(self, arm: Arm) -> Choices | None:
        """A prefix of choices to replay (Hypothesis draws the rest), or None for fresh."""
        self.parent = None
        if not arm.corpus or self.random.random() < self.schedule.fresh_share(self.arms):
            return None
        entry = pick(arm, self.random, bool(self.suite.recordings))
        entry.picked += 1
        self.parent = entry
        return mutate(self.random, entry, arm.corpus)

    def _draw(self, arm: Arm, prefix: Choices | None) -> ChoiceDraw | None:
        """The check's case drawn from ``prefix`` (None: afresh), noting whether it
        started from a recording; None when the draw is rejected."""
        drawing_recorded(reset=True)
        drawn = draw_choices(arm.strategy, self.random, prefix)
        if drawn is None:
            return None
        self.drawn_recorded = drawing_recorded(reset=True)
        return drawn

    def _one(self, arm: Arm, prefix: Choices | None, *, origin: str = "here") -> None:
        """Draw one case, run it, judge it; keep its input if it did something new, save
        it if it failed."""
        drawn = self._draw(arm, prefix)
        if drawn is None:
            return
        case = drawn.case
        parent = self.parent
        from_shared = origin in ("shared", "failure") or (parent is not None and parent.from_shared)
        if self.sharing is not None and parent is not None and parent.from_shared:
            self.sharing.reused += 1
        g = graded_case(case, self.vocab, self.suite.claims.reads)
        if not claimed(g, self.suite.claims):
            return  # a shape the client does not read: not a case for it
        obs, coverage = self._run(arm, g)
        j = judge(arm.check, g, obs, arm.ctx)
        self.cases += 1
        arm.cases += 1
        arm.since_sync += 1
        answer = (arm.check.id, obs.status, obs.verdict, j.verdict)
        # the code the case reached in the client (if it says), the input's own shape
        # (which kinds of line it puts side by side), and the client's answer
        shapes = shape_features(g.stream, self.vocab) if g.input_kind.event_shapes else frozenset()
        marks = {_stable(s) for s in shapes}
        marks.add(_stable(answer))
        behaviour = {*coverage, *marks}
        # the same, code edges with hit counts aside: the keys of the input's weight
        reached = frozenset({*(f >> 3 for f in coverage), *marks})
        arm.hits.update(reached)
        new = behaviour - self.seen
        arm.recent.append(1 if new else 0)
        if new:
            self.seen |= new
            arm.novel += 1
            self._keep(arm, drawn, len(new), reached, origin, from_shared, frozenset(new))
            if self.sharing is not None and origin == "here" and from_shared:
                self.sharing.built_on += 1
        if j.verdict in ("fail", "crash", "error"):
            recording = getattr(getattr(case, "run", None), "recording", None)
            self._failed(arm, g, j, obs, drawn, from_shared, recording, origin == "failure")

    def _run(self, arm: Arm, g: GradedCase) -> tuple[Observation, frozenset[int]]:
        """Give the case to the client: what it did, and the code it reached (nothing when
        the kit stopped it mid-case)."""
        self._only_live(arm.runner)
        self.feedback.start_case()
        began = self.clock()
        obs = arm.runner.run(g)
        self.schedule.timed_case(self.clock() - began)
        session = arm.runner.session
        coverage = self.feedback.end_case(session.proc if session is not None else None)
        if obs.status in STOPPED_MID_CASE:
            # what the client ran before the kit's kill landed is a matter of scheduling,
            # so it is not this input's: its shapes and the answer stand for it
            coverage = frozenset()
        return obs, coverage

    def _only_live(self, runner: CaseRunner) -> None:
        """At most one client process alive: the checks share one persistent session
        (:func:`~stella_conform.conformance.suite.sessions.shared_sessions`), and one with a
        session of its own (a quiet check, which counts its client's stderr from its own
        start) pauses the other's."""
        session = runner.session
        if self.live is not None and self.live is not session:
            self.live.pause()
        self.live = session

    def _keep(
        self,
        arm: Arm,
        drawn: ChoiceDraw,
        novel: int,
        reached: frozenset[int],
        origin: str = "here",
        from_shared: bool = False,
        found: frozenset[int] = frozenset(),
    ) -> Entry:
        """Add the input just drawn to the corpus (see :meth:`Keeper.keep`)."""
        return self.keeper.keep(
            arm, drawn, novel, reached, origin, from_shared, found, recorded=self.drawn_recorded
        )

    def _failed(
        self,
        arm: Arm,
        g: GradedCase,
        j: Judgment,
        obs: Observation,
        drawn: ChoiceDraw,
        from_shared: bool = False,
        recording: str | None = None,
        replayed: bool = False,
    ) -> None:
        """Save a failure once per reaction of the client (at most
        :data:`~stella_conform.conformance.fuzz.arms.FAILURES_PER_CHECK` a check), where
        ``run`` replays it first."""
        signature = reaction(arm.check, j, obs)
        arm.known.add(choices_to_bytes(drawn.choices))  # not replayed from the database
        if signature in arm.failures:
            return
        if self.config.stop_on_first:
            arm.retired = True
        if len(arm.failures) >= FAILURES_PER_CHECK:
            return
        failure = case_failure(arm.check, g, j, obs)
        failure.source = "fuzzed"
        save_failure(self.suite, arm.check, g, failure)  # bounded in _merge (keep_bounded)
        found = Found(
            arm.check.id,
            signature,
            j.message,
            self.clock() - self.started,
            self.cases,
            failure,
            recording=recording,
            from_shared=from_shared,
            replayed=replayed,
            case=g,
        )
        arm.failures[signature] = found
        self.found.append(found)
        db = self.database
        if replayed and self.sharing is not None:
            self.sharing.failures += 1
            if isinstance(db, KitDatabase) and db.local is not None:
                db = db.local  # the shared database holds it already
        if db is not None:
            # where a run keeps a failure it did not shrink: the next run replays it
            # before drawing anything, shrinks it, and keeps the shrunk case
            db.save(arm.key + UNSHRUNK, choices_to_bytes(drawn.choices))
