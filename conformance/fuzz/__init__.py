"""Fuzzing for as long as it is given: ``stella-conform fuzz``.

``run`` draws a fixed number of cases per check and stops, which is right for a
pull request.  A client's rare bugs hide behind several conditions at once, and a
fixed budget of independent random cases rarely lines them up.  The fuzzer keeps
drawing from the same per-check generators, but:

* it keeps a *corpus* per check of the inputs that produced something new (new
  coverage in the client, see :mod:`feedback`; without coverage, a new shape of
  input, see :mod:`shapes`; or a new kind of answer), and spends most draws
  *mutating* those inputs rather than starting from scratch, so a case that met two
  conditions is the start of the search for the third;
* it spends time on the checks whose recent cases keep finding new behaviour
  (an upper-confidence-bound choice over checks, so no check starves);
* every distinct failure (by check and by the client's reaction) is saved to the
  fixture format with a replay command (bounded as ``run``'s: ``suite.keep_bounded``),
  and into the Hypothesis example database
  under the very key ``run`` uses for that check, so the next ``run`` replays it
  first; the corpus goes to the same database under a sub-key, so the next
  ``fuzz`` resumes from it.

Inputs are Hypothesis *choice sequences*, drawn through Hypothesis's own engine
data (``ConjectureData``), the representation its database stores.  Mutations
work on those sequences, along the case's structure where Hypothesis recorded it
(keep the valid run and draw its mutations afresh, drop one of them) or blindly
(cut and regenerate the tail, change one choice, splice two inputs, repeat or drop
a run of choices); whatever no longer fits is filled in by Hypothesis, so every
mutant is a valid case of the check.  This is the same
internal interface HypoFuzz drives.

At the end (time, Ctrl-C, ``--stop-on-first``) every check is graded once more the
way ``run`` grades it, with at least one generated case: its fixtures, then the
database, where a failure found here is replayed and shrunk.  The report is
``run``'s report plus what the fuzzing did.

The package is split by job, as HypoFuzz is: :mod:`loop` (one client's fuzzing loop),
:mod:`corpus` (what is kept and why), :mod:`mutators`, :mod:`schedule` (which check next,
the time budget), :mod:`team` (workers sharing a database), :mod:`records` (every key
layout the fuzzer writes to the database), :mod:`arms` (one check being fuzzed, its
failures), :mod:`final` (the final pass), :mod:`report` (what ``fuzz`` prints and writes);
:mod:`feedback`, :mod:`shapes` and ``coverage_hooks`` say what an input reached.  This
module re-exports the names the CLI, the tests and the benchmarks import.
"""

from __future__ import annotations

from stella_conform.conformance.fuzz.arms import FAILURES_PER_CHECK as FAILURES_PER_CHECK
from stella_conform.conformance.fuzz.arms import Arm as Arm
from stella_conform.conformance.fuzz.arms import Found as Found
from stella_conform.conformance.fuzz.arms import reaction as reaction
from stella_conform.conformance.fuzz.corpus import CORPUS_CAP as CORPUS_CAP
from stella_conform.conformance.fuzz.corpus import RECENT_SHARE as RECENT_SHARE
from stella_conform.conformance.fuzz.corpus import REWEIGH_EVERY as REWEIGH_EVERY
from stella_conform.conformance.fuzz.corpus import Choices as Choices
from stella_conform.conformance.fuzz.corpus import Entry as Entry
from stella_conform.conformance.fuzz.corpus import Reached as Reached
from stella_conform.conformance.fuzz.loop import STOPPED_MID_CASE as STOPPED_MID_CASE
from stella_conform.conformance.fuzz.loop import Fuzzer as Fuzzer
from stella_conform.conformance.fuzz.records import CORPUS_SUB_KEY as CORPUS_SUB_KEY
from stella_conform.conformance.fuzz.records import ENERGY_SUB_KEY as ENERGY_SUB_KEY
from stella_conform.conformance.fuzz.records import SHARED_FEATURES_CAP as SHARED_FEATURES_CAP
from stella_conform.conformance.fuzz.records import SHARED_SUB_KEY as SHARED_SUB_KEY
from stella_conform.conformance.fuzz.records import WORKERS_KEY as WORKERS_KEY
from stella_conform.conformance.fuzz.report import FuzzOutcome as FuzzOutcome
from stella_conform.conformance.fuzz.report import FuzzReport as FuzzReport
from stella_conform.conformance.fuzz.report import Progress as Progress
from stella_conform.conformance.fuzz.schedule import FINAL_PASS_SHARE_CAP as FINAL_PASS_SHARE_CAP
from stella_conform.conformance.fuzz.schedule import FRESH_SHARE as FRESH_SHARE
from stella_conform.conformance.fuzz.schedule import TEAM_SHARE as TEAM_SHARE
from stella_conform.conformance.fuzz.schedule import FuzzConfig as FuzzConfig
from stella_conform.conformance.fuzz.schedule import parse_duration as parse_duration
from stella_conform.conformance.fuzz.team import RECEIVE_SHARE as RECEIVE_SHARE
from stella_conform.conformance.fuzz.team import ROLL_CALL_SECONDS as ROLL_CALL_SECONDS
from stella_conform.conformance.fuzz.team import ROLL_CALL_STALE as ROLL_CALL_STALE
from stella_conform.conformance.fuzz.team import SYNC_SECONDS as SYNC_SECONDS
from stella_conform.conformance.fuzz.team import Sharing as Sharing
from stella_conform.conformance.suite import run_check as run_check
from stella_conform.conformance.suite import shared_sessions as shared_sessions
