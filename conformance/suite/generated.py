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

from stella_conform.conformance.checks import Check, Context, GradedCase, Judgment, judge
from stella_conform.conformance.clients.runner import Observation
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
from stella_conform.conformance.suite.model import FAILURES_KEPT, CaseFailure, CheckResult
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
from stella_conform.generators.engine.drawing import redrawn
from stella_conform.generators.strata import Stratum
from stella_conform.schemas.vocabulary import Vocabulary

#: The inputs whose generated cases the case cache keeps (a wrapper's scenarios drive the
#: fake stella: they are generated every time).
CACHED_INPUTS = ("stream", "envelope", "journal")


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


def generated_judgments(
    check: Check,
    config: SuiteConfig,
    vocab: Vocabulary,
    runner: CaseRunner,
    ctx: Context,
    result: CheckResult,
    pace: Pace,
) -> list[Judgment]:
    strategy = check_strategy(check, vocab, config.recordings)
    if strategy is None:
        return []  # no mutation of this check can be made with the types the client knows
    judgments: list[Judgment] = []
    last_failure: list[tuple[GradedCase, Judgment, Observation]] = []
    budget = {"after_first_failure": 0, "limit": config.shrink_budget}
    stopped: list[tuple[GradedCase, Judgment, Observation]] = []
    ran = {"cases": 0, "held": 0}

    database = example_database(config)
    # Without a database the cases depend on the seed alone: clients graded on the same
    # check in this process (a matrix) share one generation and one oracle reading (in
    # the case cache when there is one, so that memory holds one case at a time).
    share_key = (
        _share_key(check, config, vocab)
        if config.share_generation
        and database is None
        and not config.recordings
        and config.case_cache is None
        else None
    )
    seen: list[GradedCase] = []
    # what earlier runs and fuzz sessions saved for the check (a budget of it): replayed
    # after the strata (drawn or from the case cache), before the random examples
    held = held_entries(database, check, config) if database is not None else []
    cached, writer = _case_cache(check, config, vocab)

    def attempt(
        case: GeneratedCase,
    ) -> tuple[GradedCase, Judgment, Observation] | None:
        """The failure this case shows, if any (out of shrink budget: no client run)."""
        if pace.out_of_time():
            raise _StopCheck
        if last_failure:
            budget["after_first_failure"] += 1
            if budget["after_first_failure"] > budget["limit"]:
                # Out of shrink budget: stop Hypothesis at once (every further candidate
                # would still cost a generation) and report the last failure it saw, which
                # is its smallest: it only ever tries candidates smaller than its best.
                raise _ShrinkBudgetSpent
        return run_graded(graded_case(case, vocab, config.claims.reads))

    def run_graded(
        g: GradedCase, kept: bool = True
    ) -> tuple[GradedCase, Judgment, Observation] | None:
        """``kept``: one of the seed's own cases (not a database entry's), for the cache."""
        if share_key is not None and kept:
            seen.append(g)  # only a matrix keeps its cases, for the next client
        if writer is not None and kept:
            writer.add(g)  # kept for the next run, if every case passes
        if not claimed(g, config.claims):
            return None  # a shape the client does not read: not a case for it
        obs = runner.run(g)
        ran["cases"] += 1
        j = judge(check, g, obs, ctx)
        stop = pace.stop_message(obs)
        if stop is not None:
            stopped.append((g, stopped_judgment(obs, stop), obs))
            raise _StopCheck
        if j.verdict in ("fail", "crash", "error"):
            if obs.status == "timeout":
                budget["limit"] = 0  # a timeout is not shrunk: each try costs a --timeout
            return g, j, obs
        judgments.append(j)
        return None

    def afresh() -> None:
        """Forget what was graded: the check is generated from the start (Hypothesis runs
        the cases again, and shrinks the failure)."""
        judgments.clear()
        ran.update(cases=0, strata=0, held=0)

    def replayed(shared: Iterable[GradedCase], strata: int | None = None) -> bool:
        """The cases another client (or run) was graded on; False at the first that fails.
        ``strata``: how many of them are the check's strata, after which the example
        database's entries are replayed (:func:`replay_held`), as a run that draws its
        cases replays them: True at once when one fails (handed to Hypothesis)."""
        count = 0
        replays = bool(held) and not config.strata_only  # as the drawing path below

        def held_failed() -> bool:
            """At the end of the strata, the held entries replayed: whether one failed."""
            if count != strata or not replays:
                return False
            ran["strata"] = count
            return not replay_held()

        for g in shared:
            if held_failed():
                return True
            if pace.out_of_time():
                raise _StopCheck
            if run_graded(g) is not None:
                afresh()
                return False
            count += 1
        if held_failed():  # no random example (--examples 0)
            return True
        ran["replayed"] = count  # the random examples and the strata the run kept
        return True

    def from_cache(entry: CachedCases) -> bool | None:
        """The cases a run before this one kept, the example database's entries replayed
        after their strata: True when all pass (or an entry failed, handed to Hypothesis),
        False at a failing case, None for a damaged file (removed)."""
        cases = entry.cases()
        try:
            if replayed(cases, entry.strata):
                entry.touch()
                return True
            return False
        except (CacheDamaged, OSError) as exc:
            discard(entry.path)
            warn_damaged(entry.path, exc)
            afresh()
            return None
        finally:
            cases.close()

    def body(case: GeneratedCase) -> None:
        failure = attempt(case)
        if failure is not None:
            # One place raises, so a replay out of budget is the same failure to Hypothesis.
            last_failure.append(failure)
            raise _CheckFailed(failure[1].message)

    flaws: dict[tuple[str, tuple[str, ...]], CaseFailure] = {}

    def listed(failure: tuple[GradedCase, Judgment, Observation]) -> None:
        """A failing stratum listed under the check as it was drawn (not shrunk): the
        first of each flaw (its message and mutations), the others counted with it."""
        g, j, obs = failure
        judgments.append(j)
        shown = flaws.get((j.message, g.mutations))
        if shown is not None:
            shown.alike += 1
            return
        result.failed_cases += 1
        if len(result.failures) < FAILURES_KEPT:
            shown = save_failure(config, check, g, case_failure(g, j, obs))
            result.failures.append(shown)
            flaws[j.message, g.mutations] = shown

    def grade_strata() -> None:
        """Every stratum, drawn, graded and dropped in turn (one case held at a time),
        before the random examples; each flaw they show is listed once, and the smallest
        failing stratum is handed to Hypothesis to shrink, its smallest failure shown
        first (the random examples are then not drawn, as at any failure Hypothesis
        replays).  A stratum that cost the client's ``--timeout`` (or its line timeout)
        ends them: every further one could cost as much (as a timeout is not shrunk)."""
        Failing = tuple[Stratum, Sequence[Any], tuple[GradedCase, Judgment, Observation]]
        smallest: Failing | None = None
        for stratum in check_stratum_list(check, vocab):
            got = stratum.draw()
            if got is None:
                continue
            ran["strata"] += 1
            choices, case = got.choices, got.case
            del got  # one case alive at a time: the choices replay it, if it must shrink
            failure = attempt(case)
            del case
            if failure is None:
                continue
            listed(failure)
            if smallest is None or _size(failure[0]) < _size(smallest[2][0]):
                smallest = (stratum, choices, failure)
            if failure[2].status == "timeout" or failure[2].stalled_at is not None:
                break
        if smallest is None:
            return
        last_failure.append(smallest[2])  # reported as drawn, unless Hypothesis finds smaller
        if smallest[2][2].stalled_at is not None:
            budget["limit"] = 0  # each try would wait out a line timeout again
        with smallest[0].shrinking():
            shrink_drawn(check, config, smallest[0].strategy, body, smallest[1], kept=None)

    def hand_over(
        failure: tuple[GradedCase, Judgment, Observation],
        choices: Sequence[Any],
        primary: bool = False,
    ) -> None:
        """A failing case the kit graded, to Hypothesis: replayed and shrunk (a primary
        entry is replayed from the database as a case Hypothesis shrank before, and is not
        shrunk again when it replays exactly), or reported as graded when nothing may
        shrink it (a timeout, ``--max-shrinks 0``)."""
        last_failure.append(failure)  # reported as graded, unless Hypothesis finds smaller
        if budget["limit"] == 0:
            return
        if primary:
            check_property(check, config, strategy, body, phases=SHRINKING)()
        else:
            shrink_drawn(check, config, strategy, body, choices, kept=database)
        if len(last_failure) == 1:  # the failure did not come back: not a pass
            g, j, obs = failure
            not_again = replace(j, verdict="error", message=_NOT_AGAIN + j.message)
            last_failure[0] = (g, not_again, obs)

    def replay_held() -> bool:
        """What the database holds for the check (every shrunk entry and the others up
        to :func:`held_budget`: :func:`held_entries`), after the strata (drawn, or from
        the case cache) and before the random examples: each entry replayed through the
        check's strategy and graded as a case, the primary ones first; each that passes
        (or is no case of the strategy any more) is dropped from the database where it may be
        (:class:`Dropping`), the first that fails is handed to Hypothesis and the ones
        after it are kept for later.  True when none failed: the run then grades the
        seed's own random examples, as on an empty database (or has graded them from the
        case cache), and keeps them there."""
        assert database is not None and strategy is not None
        dropping = Dropping(database, database_key(check, config))
        random = Random(check_seed(config.seed, check.id))
        for entry in held:
            if pace.out_of_time():
                raise _StopCheck
            again = redrawn(strategy, entry.choices, random)
            if again is None:
                dropping.drop(entry)  # as Hypothesis drops an entry that does not replay
                continue
            g = graded_case(again.case, vocab, config.claims.reads)
            before = ran["cases"]
            failure = run_graded(g, kept=False)
            del g
            if failure is None:
                ran["held"] += ran["cases"] - before
                dropping.drop(entry)
                continue
            hand_over(failure, again.choices, primary=entry.primary)
            return False
        return True

    def grade_random() -> None:
        """The random examples the kit draws itself (:mod:`drawing`: no engine run around
        each); the first failing one is handed to Hypothesis to shrink (or reported as
        drawn when nothing may shrink it, and kept as a failure not shrunk:
        :data:`UNSHRUNK`)."""
        count = 0
        for case, choices in random_examples(check, config, strategy):
            failure = attempt(case)
            del case
            if failure is None:
                count += 1
                continue
            if budget["limit"] == 0 and database is not None:
                database.save(database_key(check, config) + UNSHRUNK, choices_to_bytes(choices))
            hand_over(failure, choices)
            return
        ran["replayed"] = ran["strata"] + count

    ran["strata"] = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shared = _SHARED.get(share_key) if share_key is not None else None
            replay = from_cache(cached) if cached is not None else False
            if replay is None and cached is not None:  # damaged: generate and keep again
                writer = CacheWriter(cached.path.parent, cached.key)
            if replay:
                pass  # the cached cases, and the held entries after their strata
            elif shared is None or not replayed(shared):
                # drawn only when Hypothesis runs (a replay holds them), and only by a run
                # of the default size or more: a quick look grades what it asked for
                if config.examples >= STRATA_FROM_EXAMPLES or config.strata_only:
                    grade_strata()
                if config.strata_only or last_failure:
                    pass  # a failing stratum was shrunk; the plugin's fuzz targets draw their own
                elif held and not replay_held():
                    pass  # a saved failure came back: handed to Hypothesis
                else:
                    grade_random()
                if share_key is not None and not last_failure:
                    _SHARED[share_key] = seen
                if writer is not None and not last_failure:
                    writer.commit(strata=ran["strata"])
    except (_CheckFailed, _ShrinkBudgetSpent):
        pass
    except _StopCheck:
        if stopped:
            case, j, obs = stopped[0]
            failure = save_failure(config, check, case, case_failure(case, j, obs))
            result.failures.insert(0, failure)
            result.failed_cases += 1
            result.cases += ran["cases"]
            return [*judgments, j]
        if last_failure:  # out of time while shrinking: report the smallest failure so far
            case, j, obs = min(last_failure, key=lambda f: (len(f[0].stream), f[0].stream))
            failure = save_failure(config, check, case, case_failure(case, j, obs))
            result.failures.insert(0, failure)
            result.failed_cases += 1
            judgments.append(j)
        result.cases += ran["cases"]
        return [*judgments, Judgment("error", pace.budget_message())]
    except Flaky as exc:
        judgments.append(Judgment("error", f"the client is not deterministic: {exc}"))
        return judgments
    except HypothesisException as exc:
        judgments.append(Judgment("error", f"generation failed: {type(exc).__name__}: {exc}"))
        return judgments
    finally:
        if writer is not None:
            writer.abort()  # not committed: a failure, a stop, an error
    at_random = 0 if config.strata_only else config.examples
    result.cases += (ran.get("replayed") or at_random + ran["strata"]) + ran["held"]
    if last_failure:
        case, j, obs = last_failure[-1]  # the last failure seen is the shrunk one
        judgments.append(j)
        failure = save_failure(config, check, case, case_failure(case, j, obs))
        drawn = flaws.get((j.message, case.mutations))
        if drawn is None:
            result.failed_cases += 1
        else:  # a stratum's flaw, shrunk: the stratum as drawn is counted with it
            result.failures.remove(drawn)
            failure.alike = drawn.alike + (drawn.stream != failure.stream)
        result.failures.insert(0, failure)
    return judgments


def _size(case: GradedCase) -> tuple[int, bytes]:
    """Which of two failing cases is the smaller (as Hypothesis orders what it shrinks)."""
    return len(case.stream), case.stream


def _case_cache(
    check: Check, config: SuiteConfig, vocab: Vocabulary
) -> tuple[CachedCases | None, CacheWriter | None]:
    """The check's cases from the case cache, or a writer to keep them there; neither when
    the cache is off.  The file holds the seed's own cases (its strata and random
    examples), never an example database's entries: those are replayed beside them, so
    the file is read (and written) whether the database holds entries or not."""
    folder = config.case_cache
    if folder is None or config.recordings or check.input not in CACHED_INPUTS:
        return None, None
    key = cache_key(
        check, vocab, seed=config.seed, examples=config.examples,
        claims=config.claims.to_json(),
    )  # fmt: skip
    cached = open_cached(folder, key, check, vocab, config.claims.reads)
    return cached, CacheWriter(folder, key) if cached is None else None


def warn_damaged(path: Path, exc: BaseException) -> None:
    """One line on stderr: a damaged cache file was removed and its cases are drawn again."""
    import sys

    print(
        f"stella-conform: warning: the case cache file {path.name} was damaged ({exc}); "
        "removed, its cases are generated again",
        file=sys.stderr,
    )
