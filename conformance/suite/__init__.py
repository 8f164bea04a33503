"""Grade one client on a set of checks: fixtures first, then generated cases.

Each check runs its curated fixtures, then generated cases that carry only that
check's mutations: its strata, then random examples the kit draws from the check's
Hypothesis strategy itself (:mod:`~stella_conform.generators.engine.examples`: no engine run
around each).  A failing generated case is handed to the check's Hypothesis property,
which shrinks it (within a budget of client runs, since every shrink step starts the
client again); it is saved in the fixture format, and reported with the command that
replays it.  Checks run in parallel worker processes with ``-j``; each check's cases are
drawn from its own seed, so results do not depend on ``-j``.

Each job has its room in this package; this module names what the rest of the kit uses:

* :mod:`.model`: a check's result and its failing cases, as reported;
* :mod:`.config`: what a run grades with (:class:`SuiteConfig`), a check's own seed;
* :mod:`.replay` and :mod:`.travel`: the command that replays a saved case, anywhere;
* :mod:`.sessions`: running a case on the client (:class:`CaseRunner`), a shared process;
* :mod:`.paired`: the second stream a self-comparing check feeds;
* :mod:`.fixtures`: curated fixtures loaded as cases;
* :mod:`.failures`: a failing case saved, a check's failures bounded;
* :mod:`.pacing`: fail fast and the time budget;
* :mod:`.cases`: a check's strategy and strata, a generated case as graded;
* :mod:`.properties` and :mod:`.held`: the Hypothesis property, its example database and
  the entries it holds;
* :mod:`.generated`: a check's generated phase;
* :mod:`.preflight`: the client tried once before any check;
* :mod:`.grading`: one check graded, a run's checks;
* :mod:`.tasks` and :mod:`.workers`: the grading session (its tasks, inline or in ``-j``
  workers, each step an event).
"""

from __future__ import annotations

from stella_conform.conformance.suite.cases import (
    STRATA_FROM_EXAMPLES,
    GeneratedCase,
    check_strata,
    check_strategy,
    check_stratum_list,
    graded_case,
    not_drawable,
)
from stella_conform.conformance.suite.config import SHRINK_BUDGET, SuiteConfig, check_seed
from stella_conform.conformance.suite.failures import (
    MESSAGE_CAP,
    SAVED_WHOLE,
    STREAM_KEPT,
    case_failure,
    distinct_failure,
    keep_bounded,
    save_failure,
    smallest_first,
)
from stella_conform.conformance.suite.fixtures import (
    claimed,
    fixture_case,
    fixture_path,
    load_case,
)
from stella_conform.conformance.suite.generated import (
    CACHED_INPUTS,
    forget_shared_cases,
    warn_damaged,
)
from stella_conform.conformance.suite.grading import (
    IN_PROCESS_SKIP,
    grading_order,
    run_check,
    run_suite,
)
from stella_conform.conformance.suite.held import (
    HELD_SUB_KEYS,
    UNSHRUNK,
    HeldEntry,
    held_budget,
    held_entries,
)
from stella_conform.conformance.suite.model import FAILURES_KEPT, CaseFailure, CheckResult
from stella_conform.conformance.suite.pacing import FAIL_FAST_CRASHES, Pace, last_stderr_line
from stella_conform.conformance.suite.preflight import Preflight, preflight
from stella_conform.conformance.suite.properties import (
    GENERATING,
    SHRINKING,
    HandedOver,
    check_property,
    database_key,
    example_database,
    random_examples,
    shrink_drawn,
)
from stella_conform.conformance.suite.replay import replay_command
from stella_conform.conformance.suite.sessions import CaseRunner, shared_sessions
from stella_conform.conformance.suite.tasks import Grading, Task, Tell
from stella_conform.conformance.suite.workers import worker_pool

__all__ = [
    "CACHED_INPUTS",
    "FAILURES_KEPT",
    "FAIL_FAST_CRASHES",
    "GENERATING",
    "HELD_SUB_KEYS",
    "IN_PROCESS_SKIP",
    "MESSAGE_CAP",
    "SAVED_WHOLE",
    "SHRINKING",
    "SHRINK_BUDGET",
    "STRATA_FROM_EXAMPLES",
    "STREAM_KEPT",
    "UNSHRUNK",
    "CaseFailure",
    "CaseRunner",
    "CheckResult",
    "GeneratedCase",
    "Grading",
    "HandedOver",
    "HeldEntry",
    "Pace",
    "Preflight",
    "SuiteConfig",
    "Task",
    "Tell",
    "case_failure",
    "check_property",
    "check_seed",
    "check_strata",
    "check_strategy",
    "check_stratum_list",
    "claimed",
    "database_key",
    "distinct_failure",
    "example_database",
    "fixture_case",
    "fixture_path",
    "forget_shared_cases",
    "graded_case",
    "grading_order",
    "held_budget",
    "held_entries",
    "keep_bounded",
    "last_stderr_line",
    "load_case",
    "not_drawable",
    "preflight",
    "random_examples",
    "replay_command",
    "run_check",
    "run_suite",
    "save_failure",
    "shared_sessions",
    "shrink_drawn",
    "smallest_first",
    "warn_damaged",
    "worker_pool",
]
