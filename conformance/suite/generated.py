"""The generated phase of a check: its strata, the example database's entries, its random
examples (or the case cache's copy of them), and the first failure handed to Hypothesis
to shrink."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from random import Random
from typing import Any

from hypothesis.database import choices_to_bytes
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.strategies import SearchStrategy

from stella_conform.conformance.checks import Check, Context, GradedCase, Judgment, judge
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds import KINDS
from stella_conform.conformance.store.cachekey import cache_secret
from stella_conform.conformance.store.casecache import (
    CacheDamaged,
    CachedCases,
    CacheWriter,
    cache_key,
    discard,
    open_cached,
)
from stella_conform.conformance.suite.cases import (
    STRATA_FROM_EXAMPLES,
    GeneratedCase,
    check_strategy,
    check_stratum_list,
    graded_case,
)
from stella_conform.conformance.suite.config import SuiteConfig, check_seed
from stella_conform.conformance.suite.failures import case_failure, save_failure
from stella_conform.conformance.suite.fixtures import claimed
from stella_conform.conformance.suite.held import UNSHRUNK, Dropping, held_entries
from stella_conform.conformance.suite.model import (
    FAILURES_KEPT,
    CaseFailure,
    CheckResult,
    OnCase,
)
from stella_conform.conformance.suite.pacing import Pace, stopped_judgment
from stella_conform.conformance.suite.properties import (
    SHRINKING,
    check_property,
    database_key,
    example_database,
    random_examples,
    shrink_drawn,
)
from stella_conform.conformance.suite.sessions import CaseRunner
from stella_conform.generators.engine.examples import redrawn
from stella_conform.generators.strata import Stratum
from stella_conform.schemas.vocabulary import Vocabulary

#: The inputs whose generated cases the case cache keeps (a wrapper's scenarios drive the
#: fake stella: they are generated every time), by their kinds' names.
CACHED_INPUTS = tuple(name for name, kind in KINDS.items() if kind.cached)


class _ShrinkBudgetSpent(BaseException):
    """Ends shrinking when the budget of client runs is spent (a ``BaseException`` for the
    same reason as :class:`_StopCheck`); the last failure found is the result."""


class _StopCheck(BaseException):
    """Ends a check at once, from inside the Hypothesis property too.

    A ``BaseException``: Hypothesis treats an ``Exception`` as a failure to shrink,
    and there is nothing to shrink in "the client never answers" or "time is up".
    """


class _CheckFailed(AssertionError):
    pass


#: A generated case failed when the kit drew it, and passed when Hypothesis ran it again.
_NOT_AGAIN = "the client is not deterministic: a case it failed passed when run again: "


#: Generated cases every client passed, by what determines them (see :func:`_share_key`).
_SHARED: dict[tuple[Any, ...], list[GradedCase]] = {}


def _share_key(check: Check, config: SuiteConfig, vocab: Vocabulary) -> tuple[Any, ...]:
    """What a check's generated cases depend on when no database adds saved examples.

    Under a fixed seed Hypothesis draws the same sequence for every client that passes
    them all, so a second client replays the first one's cases (decoded once) instead of
    generating them again; at its first failure Hypothesis runs as usual and shrinks it.
    """
    return (
        check.id, check.input, tuple(check.mutations), check.valid_runs, config.wire_schema,
        vocab.ident, vocab.claimed, config.claims.reads, config.seed, config.examples,
    )  # fmt: skip


def forget_shared_cases() -> None:
    """Forget the generated cases clients shared (:func:`_share_key`): the next client
    graded draws its own, as the first one did."""
    _SHARED.clear()


#: A failing case as graded: the case, its judgment, what the client did.
Failing = tuple[GradedCase, Judgment, Observation]


def generated_judgments(
    check: Check,
    config: SuiteConfig,
    vocab: Vocabulary,
    runner: CaseRunner,
    ctx: Context,
    result: CheckResult,
    pace: Pace,
    on_case: OnCase,
) -> list[Judgment]:
    """The judgments of a check's generated cases (:class:`GeneratedPhase`); its failures
    go into ``result``, each case's verdict to ``on_case``."""
    strategy = check_strategy(check, vocab, config.recordings)
    if strategy is None:
        return []  # no mutation of this check can be made with the types the client knows
    return GeneratedPhase(check, config, vocab, runner, ctx, result, pace, strategy, on_case).run()


class GeneratedPhase:
    """One check's generated cases, graded in order: its strata, then what the example
    database holds for it (:func:`~stella_conform.conformance.suite.held.held_entries`),
    then the random examples the kit draws for its seed; or instead the same cases from the
    case cache, or from the client graded before this one on the check (a matrix).  The
    first failure is handed to Hypothesis to shrink, within a budget of client runs, and the
    smallest failure it finds is reported first."""

    def __init__(
        self,
        check: Check,
        config: SuiteConfig,
        vocab: Vocabulary,
        runner: CaseRunner,
        ctx: Context,
        result: CheckResult,
        pace: Pace,
        strategy: SearchStrategy[GeneratedCase],
        on_case: OnCase,
    ) -> None:
        self.check = check
        self.config = config
        self.vocab = vocab
        self.runner = runner
        self.ctx = ctx
        self.result = result
        self.pace = pace
        self.strategy = strategy
        self.on_case = on_case
        #: The judgments of the cases passed (the failure's is added once it is final).
        self.judgments: list[Judgment] = []
        #: The failures seen, in order: the last one is the smallest, since Hypothesis
        #: only ever tries candidates smaller than its best.
        self.failures: list[Failing] = []
        #: Client runs spent since the first failure, and how many a shrink may spend.
        self.shrink_runs = 0
        self.shrink_limit = config.shrink_budget
        #: The case after which the client stopped answering (the check stops there).
        self.unanswered: Failing | None = None
        #: Client runs on generated cases; strata graded; client runs on held entries
        #: that passed; cases replayed from a copy (the cache, another client), once done.
        self.client_runs = 0
        self.strata = 0
        self.held_runs = 0
        self.replayed: int | None = None
        #: The first failing stratum of each flaw (its message and mutations), as listed.
        self.flaws: dict[tuple[str, tuple[str, ...]], CaseFailure] = {}
        self.database = example_database(config)
        # Without a database the cases depend on the seed alone: clients graded on the
        # same check in this process (a matrix) share one generation and one oracle
        # reading (in the case cache when there is one, so that memory holds one case at
        # a time).
        self.share_key = (
            _share_key(check, config, vocab)
            if config.share_generation
            and self.database is None
            and not config.recordings
            and config.case_cache is None
            else None
        )
        #: The seed's own cases graded, kept for the next client (only a matrix keeps them).
        self.seen: list[GradedCase] = []
        # what earlier runs and fuzz sessions saved for the check (a budget of it):
        # replayed after the strata (drawn or from the case cache), before the random
        # examples
        self.held = held_entries(self.database, check, config) if self.database is not None else []
        self.cached, self.writer = _case_cache(check, config, vocab, result)

    def run(self) -> list[Judgment]:
        """Grade the phase; what a stop, a non-deterministic client or a failed
        generation leaves is judged as such."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._grade()
        except (_CheckFailed, _ShrinkBudgetSpent):
            pass
        except _StopCheck:
            return self._stopped()
        except Flaky as exc:
            self.judgments.append(Judgment("error", f"the client is not deterministic: {exc}"))
            return self.judgments
        except HypothesisException as exc:
            said = f"generation failed: {type(exc).__name__}: {exc}"
            self.judgments.append(Judgment("error", said))
            return self.judgments
        finally:
            if self.writer is not None:
                self.writer.abort()  # not committed: a failure, a stop, an error
        self._conclude()
        return self.judgments

    def _grade(self) -> None:
        """The cached cases, another client's, or the seed's drawn (each path replays the
        held entries after the strata)."""
        config, cached = self.config, self.cached
        shared = _SHARED.get(self.share_key) if self.share_key is not None else None
        replay = self.from_cache(cached) if cached is not None else False
        if replay is None and cached is not None:  # damaged: generate and keep again
            self.writer = CacheWriter(cached.path.parent, cached.key, cached.secret)
        if replay:
            self.result.case_cache = "read"
            return  # the cached cases, and the held entries after their strata
        if shared is not None and self.replay(shared):
            return
        # drawn only when Hypothesis runs (a replay holds them), and only by a run of the
        # default size or more: a quick look grades what it asked for
        if config.examples >= STRATA_FROM_EXAMPLES or config.strata_only:
            self.grade_strata()
        if config.strata_only or self.failures:
            pass  # a failing stratum was shrunk; the plugin's fuzz targets draw their own
        elif self.held and not self.replay_held():
            pass  # a saved failure came back: handed to Hypothesis
        else:
            self.grade_random()
        if self.share_key is not None and not self.failures:
            _SHARED[self.share_key] = self.seen
        if self.writer is not None and not self.failures:
            self.writer.commit(strata=self.strata)
            self.result.case_cache = self.result.case_cache or "written"

    def attempt(self, case: GeneratedCase) -> Failing | None:
        """The failure this case shows, if any (out of shrink budget: no client run)."""
        if self.pace.out_of_time():
            raise _StopCheck
        if self.failures:
            self.shrink_runs += 1
            if self.shrink_runs > self.shrink_limit:
                # Out of shrink budget: stop Hypothesis at once (every further candidate
                # would still cost a generation) and report the last failure it saw, which
                # is its smallest: it only ever tries candidates smaller than its best.
                raise _ShrinkBudgetSpent
        return self.grade(graded_case(case, self.vocab, self.config.claims.reads))

    def grade(self, g: GradedCase, kept: bool = True) -> Failing | None:
        """One case run and judged: its failure, if any.  ``kept``: one of the seed's own
        cases (not a database entry's), for the cache."""
        if self.share_key is not None and kept:
            self.seen.append(g)  # only a matrix keeps its cases, for the next client
        if self.writer is not None and kept:
            self.writer.add(g)  # kept for the next run, if every case passes
        if not claimed(g, self.config.claims):
            return None  # a shape the client does not read: not a case for it
        obs = self.runner.run(g)
        self.client_runs += 1
        j = judge(self.check, g, obs, self.ctx)
        stop = self.pace.stop_message(obs)
        if stop is not None:
            stopped = stopped_judgment(obs, stop)
            if self.unanswered is None:  # the first case unanswered is the one reported
                self.unanswered = (g, stopped, obs)
            self.on_case(stopped.verdict)
            raise _StopCheck
        self.on_case(j.verdict)
        if j.verdict in ("fail", "crash", "error"):
            if obs.status == "timeout":
                self.shrink_limit = 0  # a timeout is not shrunk: each try costs a --timeout
            return g, j, obs
        self.judgments.append(j)
        return None

    def body(self, case: GeneratedCase) -> None:
        """The check's Hypothesis property: a failing case raises."""
        failure = self.attempt(case)
        if failure is not None:
            # One place raises, so a replay out of budget is the same failure to Hypothesis.
            self.failures.append(failure)
            raise _CheckFailed(failure[1].message)

    def afresh(self) -> None:
        """Forget what was graded: the check is generated from the start (Hypothesis runs
        the cases again, and shrinks the failure)."""
        self.judgments.clear()
        self.client_runs = self.strata = self.held_runs = 0

    def replay(self, copied: Iterable[GradedCase], strata: int | None = None) -> bool:
        """The cases another client (or run) was graded on; False at the first that fails.
        ``strata``: how many of them are the check's strata, after which the example
        database's entries are replayed (:meth:`replay_held`), as a run that draws its
        cases replays them: True at once when one fails (handed to Hypothesis)."""
        count = 0
        for g in copied:
            if self._held_failed(count, strata):
                return True
            if self.pace.out_of_time():
                raise _StopCheck
            if self.grade(g) is not None:
                self.afresh()
                return False
            count += 1
        if self._held_failed(count, strata):  # no random example (--examples 0)
            return True
        self.replayed = count  # the random examples and the strata the run kept
        return True

    def _held_failed(self, count: int, strata: int | None) -> bool:
        """At the end of the copied strata, the held entries replayed: whether one failed."""
        if count != strata or not self.held or self.config.strata_only:  # as when drawn
            return False
        self.strata = count
        return not self.replay_held()

    def from_cache(self, entry: CachedCases) -> bool | None:
        """The cases a run before this one kept, the example database's entries replayed
        after their strata: True when all pass (or an entry failed, handed to Hypothesis),
        False at a failing case, None for a damaged file (removed)."""
        cases = entry.cases()
        try:
            if self.replay(cases, entry.strata):
                entry.touch()
                return True
            return False
        except (CacheDamaged, OSError) as exc:
            discard(entry.path)
            warn_damaged(entry.path, exc)
            self.afresh()
            return None
        finally:
            cases.close()

    def listed(self, failure: Failing) -> None:
        """A failing stratum listed under the check as it was drawn (not shrunk): the
        first of each flaw (its message and mutations), the others counted with it."""
        g, j, obs = failure
        self.judgments.append(j)
        shown = self.flaws.get((j.message, g.mutations))
        if shown is not None:
            shown.alike += 1
            return
        result = self.result
        result.failed_cases += 1
        if len(result.failures) < FAILURES_KEPT:
            shown = save_failure(self.config, self.check, g, case_failure(self.check, g, j, obs))
            result.failures.append(shown)
            self.flaws[j.message, g.mutations] = shown

    def grade_strata(self) -> None:
        """Every stratum, drawn, graded and dropped in turn (one case held at a time),
        before the random examples; each flaw they show is listed once, and the smallest
        failing stratum is handed to Hypothesis to shrink, its smallest failure shown
        first (the random examples are then not drawn, as at any failure Hypothesis
        replays).  A stratum that cost the client's ``--timeout`` (or its line timeout)
        ends them: every further one could cost as much (as a timeout is not shrunk)."""
        smallest: tuple[Stratum, Sequence[Any], Failing] | None = None
        for stratum in check_stratum_list(self.check, self.vocab):
            got = stratum.draw()
            if got is None:
                continue
            self.strata += 1
            choices, case = got.choices, got.case
            del got  # one case alive at a time: the choices replay it, if it must shrink
            failure = self.attempt(case)
            del case
            if failure is None:
                continue
            self.listed(failure)
            if smallest is None or _size(failure[0]) < _size(smallest[2][0]):
                smallest = (stratum, choices, failure)
            if failure[2].status == "timeout" or failure[2].stalled_at is not None:
                break
        if smallest is None:
            return
        least, its_choices, its_failure = smallest
        self.failures.append(its_failure)  # reported as drawn, unless Hypothesis finds smaller
        if its_failure[2].stalled_at is not None:
            self.shrink_limit = 0  # each try would wait out a line timeout again
        with least.shrinking():
            shrink_drawn(self.check, self.config, least.strategy, self.body, its_choices, kept=None)

    def hand_over(self, failure: Failing, choices: Sequence[Any], primary: bool = False) -> None:
        """A failing case the kit graded, to Hypothesis: replayed and shrunk (a primary
        entry is replayed from the database as a case Hypothesis shrank before, and is not
        shrunk again when it replays exactly), or reported as graded when nothing may
        shrink it (a timeout, ``--max-shrinks 0``)."""
        self.failures.append(failure)  # reported as graded, unless Hypothesis finds smaller
        if self.shrink_limit == 0:
            return
        check, config, strategy = self.check, self.config, self.strategy
        if primary:
            check_property(check, config, strategy, self.body, phases=SHRINKING)()
        else:
            shrink_drawn(check, config, strategy, self.body, choices, kept=self.database)
        if len(self.failures) == 1:  # the failure did not come back: not a pass
            g, j, obs = failure
            not_again = replace(j, verdict="error", message=_NOT_AGAIN + j.message)
            self.failures[0] = (g, not_again, obs)

    def replay_held(self) -> bool:
        """What the database holds for the check (every shrunk entry and the others up
        to :func:`~stella_conform.conformance.suite.held.held_budget`:
        :func:`~stella_conform.conformance.suite.held.held_entries`), after the strata
        (drawn, or from the case cache) and before the random examples: each entry replayed
        through the check's strategy and graded as a case, the primary ones first; each that
        passes (or is no case of the strategy any more) is dropped from the database where
        it may be (:class:`~stella_conform.conformance.suite.held.Dropping`), the first that
        fails is handed to Hypothesis and the ones after it are kept for later.  True when
        none failed: the run then grades the seed's own random examples, as on an empty
        database (or has graded them from the case cache), and keeps them there."""
        assert self.database is not None
        dropping = Dropping(self.database, database_key(self.check, self.config))
        random = Random(check_seed(self.config.seed, self.check.id))
        for entry in self.held:
            if self.pace.out_of_time():
                raise _StopCheck
            again = redrawn(self.strategy, entry.choices, random)
            if again is None:
                dropping.drop(entry)  # as Hypothesis drops an entry that does not replay
                continue
            g = graded_case(again.case, self.vocab, self.config.claims.reads)
            before = self.client_runs
            failure = self.grade(g, kept=False)
            del g
            if failure is None:
                self.held_runs += self.client_runs - before
                dropping.drop(entry)
                continue
            self.hand_over(failure, again.choices, primary=entry.primary)
            return False
        return True

    def grade_random(self) -> None:
        """The random examples the kit draws itself
        (:mod:`~stella_conform.generators.engine.examples`: no engine run around each); the
        first failing one is handed to Hypothesis to shrink (or reported as drawn when
        nothing may shrink it, and kept as a failure not shrunk:
        :data:`~stella_conform.conformance.suite.held.UNSHRUNK`)."""
        count = 0
        for case, choices in random_examples(self.check, self.config, self.strategy):
            failure = self.attempt(case)
            del case
            if failure is None:
                count += 1
                continue
            if self.shrink_limit == 0 and self.database is not None:
                key = database_key(self.check, self.config) + UNSHRUNK
                self.database.save(key, choices_to_bytes(choices))
            self.hand_over(failure, choices)
            return
        self.replayed = self.strata + count

    def _stopped(self) -> list[Judgment]:
        """The judgments of a phase stopped early: by a client that stopped answering, or
        by the time budget (the smallest failure found so far reported)."""
        result = self.result
        if self.unanswered is not None:
            case, j, obs = self.unanswered
            failure = save_failure(
                self.config, self.check, case, case_failure(self.check, case, j, obs)
            )
            result.failures.insert(0, failure)
            result.failed_cases += 1
            result.cases += self.client_runs
            return [*self.judgments, j]
        if self.failures:  # out of time while shrinking: report the smallest failure so far
            case, j, obs = min(self.failures, key=lambda f: (len(f[0].stream), f[0].stream))
            failure = save_failure(
                self.config, self.check, case, case_failure(self.check, case, j, obs)
            )
            result.failures.insert(0, failure)
            result.failed_cases += 1
            self.judgments.append(j)
            self._crash_listed()
        result.cases += self.client_runs
        return [*self.judgments, Judgment("error", self.pace.budget_message())]

    def _conclude(self) -> None:
        """The cases graded counted, and the failure (the shrunk one) listed first."""
        result, config = self.result, self.config
        at_random = 0 if config.strata_only else config.examples
        result.cases += (self.replayed or at_random + self.strata) + self.held_runs
        if not self.failures:
            return
        case, j, obs = self.failures[-1]  # the last failure seen is the shrunk one
        self.judgments.append(j)
        failure = save_failure(config, self.check, case, case_failure(self.check, case, j, obs))
        drawn = self.flaws.get((j.message, case.mutations))
        if drawn is None:
            result.failed_cases += 1
        else:  # a stratum's flaw, shrunk: the stratum as drawn is counted with it
            result.failures.remove(drawn)
            failure.alike = drawn.alike + (drawn.stream != failure.stream)
        result.failures.insert(0, failure)
        self._crash_listed()

    def _crash_listed(self) -> None:
        """The smallest crash seen, listed beside the failure reported when none of the
        judgments is a crash: shrinking takes any smaller failing case, so a crash can
        shrink into a wrong answer, and a crash is always the check's outcome
        (:func:`~stella_conform.conformance.checks.model.combine`)."""
        if any(j.verdict == "crash" for j in self.judgments):
            return
        crashes = [f for f in self.failures if f[1].verdict == "crash"]
        if not crashes:
            return
        case, j, obs = min(crashes, key=lambda f: _size(f[0]))
        self.judgments.append(j)
        failure = case_failure(self.check, case, j, obs)
        self.result.failures.append(save_failure(self.config, self.check, case, failure))
        self.result.failed_cases += 1


def _size(case: GradedCase) -> tuple[int, bytes]:
    """Which of two failing cases is the smaller (as Hypothesis orders what it shrinks)."""
    return len(case.stream), case.stream


def _case_cache(
    check: Check, config: SuiteConfig, vocab: Vocabulary, result: CheckResult
) -> tuple[CachedCases | None, CacheWriter | None]:
    """The check's cases from the case cache, or a writer to keep them there; neither when
    the cache is off or no secret authenticates it (:mod:`~stella_conform.conformance.store.
    cachekey`: ``result`` says why).  The file holds the seed's own cases (its strata and
    random examples), never an example database's entries: those are replayed beside
    them, so the file is read (and written) whether the database holds entries or not."""
    folder = config.case_cache
    if folder is None or config.recordings or not check.kind.cached:
        return None, None
    secret, source = cache_secret()
    if secret is None:
        result.case_cache = f"off: {source}"
        return None, None
    key = cache_key(
        check, vocab, seed=config.seed, examples=config.examples,
        claims=config.claims.to_json(),
    )  # fmt: skip
    cached, refused = open_cached(
        folder, key, check, vocab, config.claims.reads, secret=secret, examples=config.examples
    )
    if refused is not None:
        result.case_cache = f"refused: {refused}"
    return cached, CacheWriter(folder, key, secret) if cached is None else None


def warn_damaged(path: Path, exc: BaseException) -> None:
    """One line on stderr: a damaged cache file was removed and its cases are drawn again."""
    import sys

    print(
        f"stella-conform: warning: the case cache file {path.name} was damaged ({exc}); "
        "removed, its cases are generated again",
        file=sys.stderr,
    )
