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
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
import re
import struct
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis.control import BuildContext
from hypothesis.database import ExampleDatabase, choices_from_bytes, choices_to_bytes
from hypothesis.errors import Frozen, HypothesisException, StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import choice_from_index
from hypothesis.internal.conjecture.data import ConjectureData

from stella_conform import __version__, stopping
from stella_conform.conformance.checks import Check, Context, GradedCase, Judgment, judge
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.fuzz.feedback import Blind, hash_seed, timeout_note, traced_client
from stella_conform.conformance.fuzz.shapes import shape_features
from stella_conform.conformance.report.render import Report
from stella_conform.conformance.store.database import (
    KitDatabase,
    register_fixed_length,
    register_record,
)
from stella_conform.conformance.store.recordings import (
    RECORDED_ONE_IN,
    drawing_recorded,
    recording_prefix,
)
from stella_conform.conformance.suite import (
    UNSHRUNK,
    CaseFailure,
    CaseRunner,
    CheckResult,
    SuiteConfig,
    _claimed,
    _failure,
    _fixture_case,
    _save_failure,
    check_strategy,
    database_key,
    example_database,
    graded_case,
    keep_bounded,
    run_check,
    shared_sessions,
    without_particulars,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.schemas.vocabulary import Vocabulary

#: Outcomes for which the kit stops the client in the middle of the case (a protocol
#: error, a timeout): its coverage of that case is not kept.  A seeded session took another
#: path when the client's lines between its bad answer and the kill counted 71 edges in one
#: run and 75 in the next.
STOPPED_MID_CASE = frozenset({"protocol-error", "timeout"})
#: Share of draws that start from scratch even when the corpus has inputs to mutate.
FRESH_SHARE = 0.25
#: Inputs kept per check; beyond that the least productive go.
CORPUS_CAP = 400
#: Database sub-key of the fuzzing corpus (``run`` never reads it).
CORPUS_SUB_KEY = b".stella-fuzz.corpus"
#: Database sub-key of the corpus inputs' energy, one record per input and worker
#: (a shared database only): the input's digest, the worker, what the input found when
#: it was kept, and how often that worker has mutated it.
ENERGY_SUB_KEY = b".stella-fuzz.energy"
_ENERGY = struct.Struct(">12s4sII")
register_fixed_length(ENERGY_SUB_KEY, _ENERGY.size)
#: Database sub-key of the corpus as workers share it (a shared database only): one
#: record per input, its choices and what it found when it was kept (see
#: :func:`_shared_record`), so that another worker can tell whether the input would be
#: new there without running it.
SHARED_SUB_KEY = b".stella-fuzz.shared"
_SHARED_HEAD = struct.Struct(">B8sH")
_SHARED_VERSION = 1
#: The most features a shared record names (an input kept first finds hundreds: the
#: client's start-up code, which every worker's own first case finds too).
SHARED_FEATURES_CAP = 256
#: Features other than the client's code (an input's shapes, the client's answers) are
#: 62-bit digests with this bit set: the same in every process, as the code coverage's
#: features are (Python's own hash of a string is not), so workers can compare them.
_HASHED = 1 << 62
#: Seconds between two looks at the shared database for other workers' inputs.
SYNC_SECONDS = 2.0
#: The most of its cases a worker spends running inputs of workers that fuzz another
#: client (whose records it cannot compare with its own) between two looks.
RECEIVE_SHARE = 0.2
#: Database key of the workers' roll call (a shared database only): one record per live
#: worker, its name, a digest of its team (the client as :attr:`Fuzzer.client_digest` says
#: it, and the checks), its seed, and when it last said so (wall clock).
WORKERS_KEY = b".stella-fuzz.workers"
_WORKER = struct.Struct(">4s8sQd")
register_fixed_length(WORKERS_KEY, _WORKER.size)


def _seed_word(seed: int) -> int:
    """A worker's seed as its roll-call record holds it: ``--seed`` takes any integer, the
    record has 64 bits (a seed of 2**63 or more, packed as it was, was a ``struct.error``
    and exit 3, 'a bug in the kit'); workers are ranked by this word."""
    return seed % (1 << 64)


#: Seconds between two roll calls; a record this much older than that is a worker gone.
ROLL_CALL_SECONDS = 10.0
ROLL_CALL_STALE = 6 * ROLL_CALL_SECONDS
#: Share of a team worker's cases spent on its own share of the checks (the rest on every
#: check, by the same choice as a worker alone: none is left to one worker only).
TEAM_SHARE = 0.75
#: Distinct failures kept (and saved) per check.
FAILURES_PER_CHECK = 5
#: Share of mutated inputs picked among the newest (the rest by rarity, see ``_pick``).
RECENT_SHARE = 0.5
#: Cases of a check between two recomputations of its corpus entries' weights.
REWEIGH_EVERY = 25

Choices = tuple[Any, ...]


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


@dataclass(frozen=True)
class Reached:
    """The things an input reached (code edges, input shapes), compactly."""

    keys: Sequence[int]

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class Entry:
    """One corpus input: its choices, the shape of each choice for point mutations, where
    each part of its top-level structure starts, and what it reached (for its weight)."""

    choices: Choices
    shapes: tuple[tuple[str, Any], ...]
    novel: int
    parts: tuple[int, ...] = ()
    pieces: tuple[tuple[int, int], ...] = ()
    reached: Reached | frozenset[int] = frozenset()
    picked: int = 0
    #: Where it came from: ``here``, ``resumed`` (the local database), ``shared`` (another
    #: worker's, through the shared database), ``failure`` (another worker's failure, run
    #: here); and whether a shared input is among its ancestors (its mutants build on
    #: another worker's find).
    origin: str = "here"
    from_shared: bool = False
    #: Whether it starts from a recording (``--seed-corpus``), as its ancestors did.
    recorded: bool = False
    #: How often other workers mutated it (their energy records), and what this worker
    #: last told them.
    shared_picked: int = 0
    told: int = -1
    #: Its choices as the database stores them, and their digest (energy records' key).
    blob: bytes = b""
    digest: bytes = b""
    #: This worker's record of it in the shared database (see :func:`_shared_record`).
    record: bytes = b""


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


@dataclass
class Progress:
    seconds: float
    cases: int
    rate: float
    features: int
    new_features: int
    failures: list[Found]


@dataclass
class Sharing:
    """What one worker took from the shared database, and what it gave.

    ``received`` counts other workers' inputs this worker looked at, ``adopted`` those it
    kept (they reach something new here: by what their record says they found, or, from
    a worker on another client, by running them), ``ran`` those it ran (a worker on
    another client's, and other workers' failures), ``failures`` the failures of other
    workers that failed here too; ``reused`` the cases mutated from an input with another
    worker's find among its ancestors, ``built_on`` the inputs such cases added to the
    corpus, ``sent`` the corpus inputs this worker wrote.
    """

    database: str
    worker: str
    received: int = 0
    adopted: int = 0
    ran: int = 0
    failures: int = 0
    reused: int = 0
    built_on: int = 0
    sent: int = 0
    #: When (seconds into the session) and why the shared database stopped answering.
    lost_after: float | None = None
    lost_error: str | None = None
    answered_again: bool = False
    #: Writes never made, by kind: failures, corpus inputs, energy records.
    not_shared: dict[str, int] = field(default_factory=dict)
    #: Other live workers with this worker's seed and checks (they repeat each other).
    same_seed: int = 0
    #: The live workers on this client and these checks at the last look (this one
    #: included), and this one's place among them (by seed): see :meth:`Fuzzer._choose`.
    team: int = 1
    place: int = 0
    #: How many checks the team divides (a place beyond them has no share: see
    #: :meth:`Fuzzer._fresh_share`).
    checks: int = 0

    def to_json(self) -> dict[str, Any]:
        lost = None
        if self.lost_after is not None:
            lost = {
                "after_seconds": round(self.lost_after, 2),
                "error": self.lost_error,
                "answered_again": self.answered_again,
            }
        return {
            "database": self.database,
            "worker": self.worker,
            "received": self.received,
            "adopted": self.adopted,
            "ran": self.ran,
            "failures": self.failures,
            "reused": self.reused,
            "built_on": self.built_on,
            "sent": self.sent,
            "lost": lost,
            "not_shared": dict(self.not_shared),
            "same_seed_workers": self.same_seed,
            "team": {"workers": self.team, "place": self.place},
        }

    def lines(self) -> list[str]:
        out = [
            f"shared: {self.database}: received {self.received:,} input(s) from other workers "
            f"({self.adopted:,} kept here, {self.ran:,} run), {self.reused:,} case(s) built on "
            f"them ({self.built_on:,} kept); sent {self.sent:,}"
        ]
        if self.failures:
            out.append(f"{self.failures:,} failure(s) other workers found failed here too")
        if self.lost_after is not None:
            again = "; it answered again later" if self.answered_again else ""
            out.append(
                f"shared database lost after {self.lost_after:.1f} s ({self.lost_error}){again}"
            )
        if self.team > 1 and self.place >= self.checks:
            out.append(
                f"team: worker {self.place + 1} of {self.team} on {self.checks} check(s): no "
                "share of its own, so it drew every case afresh for the others to take deep"
            )
        elif self.team > 1:
            out.append(
                f"team: worker {self.place + 1} of {self.team} on these checks (most of its "
                "cases on its share of them)"
            )
        if self.same_seed:
            out.append(
                f"{self.same_seed} other worker(s) had this worker's seed and checks: they ran "
                "the same cases (give each worker its own --seed)"
            )
        if self.not_shared:
            what = ", ".join(f"{n:,} {kind}" for kind, n in sorted(self.not_shared.items()))
            out.append(f"not shared (kept in the local database only): {what}")
        return out


@dataclass
class FuzzOutcome:
    results: list[CheckResult]
    seconds: float
    cases: int
    features: int
    stopped: str
    feedback: str
    failures: list[Found]
    arms: list[Arm]
    sharing: Sharing | None = None
    #: Recordings (``--seed-corpus``) the cases' runs could start from, and how many
    #: of the cases started from each at the outset were kept.
    recordings: int = 0
    seeds_kept: int = 0
    #: How the final pass went when it could not grade every check in full, else None.
    final_pass: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 2),
            **({"final_pass": self.final_pass} if self.final_pass else {}),
            "cases": self.cases,
            "cases_per_second": round(self.cases / self.seconds, 1) if self.seconds else 0.0,
            "coverage_features": self.features,
            "feedback": self.feedback,
            "stopped": self.stopped,
            "time_to_first_failure": (
                round(min(f.seconds for f in self.failures), 2) if self.failures else None
            ),
            "failures": [f.to_json() for f in self.failures],
            "checks": {
                arm.check.id: {
                    "cases": arm.cases,
                    "new_behaviour": arm.novel,
                    "corpus": len(arm.corpus),
                    "failures": len(arm.failures),
                }
                for arm in self.arms
            },
            "seed_corpus": {"recordings": self.recordings, "kept": self.seeds_kept},
            "shared": self.sharing.to_json() if self.sharing is not None else None,
        }


def reaction(check: Check, judgment: Judgment, obs: Observation) -> str:
    """What the client did, with the case's particulars (numbers, quoted values, the reason
    it gave for a rejection) removed.

    Two failures with the same reaction are one bug found twice; a crash is told
    apart by its last stderr line (the exception), a wrong answer by the judge's words.
    """
    parts = [check.id, obs.status, str(obs.verdict)]
    if obs.status == "crash" and obs.stderr_tail.strip():
        parts.append(obs.stderr_tail.strip().splitlines()[-1])
    elif obs.exit is not None and obs.exit.signal is not None:
        parts.append(obs.exit.describe())
    parts.append(judgment.signature or judgment.message)
    text = " | ".join(parts)
    return without_particulars(text)[:300]


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
        self.asked: Callable[[], bool] = lambda: False  # a first Ctrl-C (stopping.py)
        self.progress = progress
        self.clock = clock
        self.random = random.Random(self.suite.seed)
        #: Whether the case drawn last started from a recording (``--seed-corpus``).
        self.drawn_recorded = False
        self.vocab: Vocabulary = self.suite.vocabulary()
        self.database: ExampleDatabase | None = example_database(self.suite)
        shared = self.database.shared if isinstance(self.database, KitDatabase) else None
        #: This worker's name in the shared database's energy records.
        self.worker = os.urandom(4)
        #: What makes two workers' features comparable: the kit, the client (its command's
        #: words by their last part: machines check it out in different folders), how it is
        #: run and measured, the vocabulary.  A worker on another client runs what it gets.
        words = [os.path.basename(word) for word in client.argv]
        ident = [__version__, self.feedback.kind, client.mode, self.vocab.ident, *words]
        self.client_digest = hashlib.sha256("\0".join(ident).encode()).digest()[:8]
        self.sharing = Sharing(shared.shown, self.worker.hex()) if shared is not None else None
        self.next_sync = 0.0
        #: This worker's roll-call record (None until it has written one), and when next.
        self.roll_record: bytes | None = None
        self.next_roll_call = 0.0
        #: This worker's place in its team and the team's size (see :meth:`_choose`), and
        #: whether it has looked for its team yet (at its first case).
        self.team = (0, 1)
        self.team_read = False
        #: The corpus input the case in hand was mutated from (None: drawn afresh).
        self.parent: Entry | None = None
        #: Whether the last case run was kept in the corpus.
        self.kept = False
        #: Cases started from a recording (``--seed-corpus``) that were kept.
        self.seeds_kept = 0
        self.seen: set[int] = set()
        #: Interned shapes of choices (see _shape).
        self._shapes: dict[Hashable, tuple[str, Any]] = {}
        self.cases = 0
        self.found: list[Found] = []
        self.arms: list[Arm] = []
        self.started = 0.0
        self.stopped = "time"
        #: Seconds the client took for the cases so far, and how many: what the final
        #: pass will cost per case, so fuzzing leaves it time within ``--for``.
        self.case_seconds = 0.0
        self.timed = 0
        #: The one client session alive (the others are paused): at most one client.
        self.live: Any = None
        #: Checks the final pass has graded so far (a stop signal reports them).
        self.graded: list[CheckResult] = []

    @property
    def interrupted(self) -> bool:
        return self.asked()

    # ------------------------------------------------------------------ set-up

    def _fuzzable(self, check: Check) -> bool:
        client = self.suite.client
        if not check.grades_in(client.mode):
            return False
        claims = self.suite.claims
        if claims.unmet(check, self.vocab, client.mode) or claims.skip_reason(check, self.vocab):
            return False  # (an unmet claim fails in run whatever the cases: nothing to find)
        if client.function is not None and check.input != "stream":
            return False
        return check_strategy(check, self.vocab, self.suite.recordings) is not None

    def _arm(self, check: Check) -> Arm:
        runner = CaseRunner(self.traced, check)
        claims = self.suite.claims
        ctx = Context(computes=claims.computes, summary_only=claims.summary_only)
        strategy = check_strategy(check, self.vocab, self.suite.recordings)
        arm = Arm(check, strategy, runner, ctx, b"")
        arm.key = database_key(check, self.suite)
        if check.judge == "quiet":
            fixtures = self.suite.fixtures_dir or bundled_fixtures_dir()
            self._only_live(runner)
            baseline = runner.run(_fixture_case(check, "minimal_run", self.vocab, fixtures))
            arm.ctx.baseline_stderr_lines = baseline.stderr_lines
        return arm

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
            if self.interrupted or self.clock() >= deadline:
                return
            self._replay(arm, blob, "resumed")
        self._receive(arm, deadline, CORPUS_CAP)  # a fresh worker starts from theirs

    def _replay(self, arm: Arm, blob: bytes, origin: str) -> None:
        if blob in arm.known:
            return
        arm.known.add(blob)
        choices = choices_from_bytes(blob)
        if choices is None:
            return
        self.parent = None
        self._one(arm, choices, origin=origin)

    def _seed(self, arm: Arm, deadline: float) -> None:
        """One case from each recording (``--seed-corpus``), kept where it does something
        new: the fuzzer's seed corpus, run first as fuzzers run theirs."""
        if not self.suite.recordings or arm.check.input != "stream":
            return
        for index in range(len(self.suite.recordings)):
            if self.interrupted or self.clock() >= deadline:
                return
            self.parent = None
            self.kept = False
            self._one(arm, recording_prefix(index))
            self.seeds_kept += self.kept

    # ------------------------------------------------------------------ sharing

    def _receive(self, arm: Arm, deadline: float, limit: int) -> None:
        """Take in what the other workers shared since the last look: their failures (run
        here: a bug one worker found is known to all at once), their corpus inputs (kept
        where they would reach something new here, by what their records say they found:
        no case is spent on them), and their energy (how often the others mutated each
        input, what it found)."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase):
            return
        picked: Counter[bytes] = Counter()
        found: dict[bytes, int] = {}
        for record in db.fetch_shared(arm.key + ENERGY_SUB_KEY):
            digest, worker, novel, times = _ENERGY.unpack(record)
            if worker != self.worker:
                picked[digest] += times
                found[digest] = max(found.get(digest, 0), novel)
        for key in (arm.key, arm.key + UNSHRUNK):  # shrunk, and as found
            for blob in db.fetch_shared(key):
                if blob in arm.known or self.interrupted or self.clock() >= deadline:
                    continue
                self.sharing.ran += 1
                self._replay(arm, blob, "failure")
        strangers: list[tuple[bytes, bytes]] = []
        for record in db.fetch_shared(arm.key + SHARED_SUB_KEY):
            digest = _digest(record)
            if digest in arm.looked:
                continue
            arm.looked.add(digest)
            parsed = _parse_shared(record)
            if parsed is None or parsed[2] in arm.known:
                continue
            client, features, blob = parsed
            self.sharing.received += 1
            if client == self.client_digest:
                self._adopt(arm, blob, features)
            else:
                strangers.append((_digest(blob), blob))
        # a worker on another client: its inputs are run, the most promising first (what
        # they found, less how often they were mutated), within a share of the cases
        strangers.sort(key=lambda item: (-found.get(item[0], 1), picked[item[0]], item[1]))
        for _, blob in strangers[:limit]:
            if self.interrupted or self.clock() >= deadline:
                break
            self.sharing.ran += 1
            self.kept = False
            self._replay(arm, blob, "shared")
            if self.kept:
                self.sharing.adopted += 1
        if picked:
            for entry in arm.corpus:
                if entry.digest in picked:
                    entry.shared_picked = picked[entry.digest]
                    entry.novel = max(entry.novel, found[entry.digest])

    def _adopt(self, arm: Arm, blob: bytes, features: frozenset[int]) -> None:
        """Keep another worker's input, unrun, if what it found is not all seen here.

        The same client, run and measured the same way, reaches the same code on the
        same input, so the record says what running it would: replaying every input the
        others kept cost a worker up to a fifth of its cases, and the bugs found within
        the first few hundred cases were found later sharing than alone.
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
        self._keep(arm, drawn[0], len(fresh), reached, "shared", True)
        assert self.sharing is not None
        self.sharing.adopted += 1

    def _tell(self, arm: Arm) -> None:
        """Write the inputs this worker kept since it last said, and its energy of the
        inputs it mutated (each time their picks have doubled: the others need the order
        of magnitude), in a round trip each."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        if arm.outbox:
            db.shared.replace(arm.key + SHARED_SUB_KEY, [], arm.outbox)
            self.sharing.sent += len(arm.outbox)
            arm.outbox = []
        old: list[bytes] = []
        new: list[bytes] = []
        for entry in arm.corpus:
            if entry.picked == 0 or (entry.told > 0 and entry.picked < 2 * entry.told):
                continue
            if entry.told >= 0:
                old.append(self._energy(entry, entry.told))
            new.append(self._energy(entry, entry.picked))
            entry.told = entry.picked
        if new:
            db.shared.replace(arm.key + ENERGY_SUB_KEY, old, new)

    def _energy(self, entry: Entry, picked: int) -> bytes:
        return _ENERGY.pack(entry.digest, self.worker, min(entry.novel, 2**32 - 1), picked)

    def _sync(self, deadline: float, *, final: bool = False) -> None:
        """Every few seconds: what this worker learnt out, what the others found in."""
        if self.sharing is None:
            return
        now = self.clock()
        if not final and now < self.next_sync:
            return
        self.next_sync = now + self.config.sync_seconds
        self._roll_call()
        if not final:
            self._read_team()
        for arm in self.arms:
            self._tell(arm)
            if not final:
                self._receive(arm, deadline, max(1, int(RECEIVE_SHARE * arm.since_sync)))
            arm.since_sync = 0

    def _team_digest(self) -> bytes:
        """What workers that divide the checks among them have in common: the client (as
        :attr:`client_digest` names it) and the checks."""
        keys = sorted(arm.key for arm in self.arms)
        return hashlib.sha256(b"".join([self.client_digest, *keys])).digest()[:8]

    def _roll_call(self) -> None:
        """Say in the shared database that this worker is fuzzing (its team and its seed),
        every :data:`ROLL_CALL_SECONDS`."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        now = time.time()
        if now < self.next_roll_call:
            return
        self.next_roll_call = now + ROLL_CALL_SECONDS
        record = _WORKER.pack(self.worker, self._team_digest(), _seed_word(self.suite.seed), now)
        db.shared.replace(WORKERS_KEY, [self.roll_record] if self.roll_record else [], [record])
        self.roll_record = record

    def _read_team(self) -> None:
        """Who else fuzzes this client's checks (the roll call): this worker's team, and
        its place in it by seed (at its first case and at every look).

        Two workers on one seed draw the same cases, and every input one shares the other
        has run already: one of them is wasted, which no report would otherwise show (the
        seed's default, 0, makes it the easy mistake): warned once.
        """
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        now = time.time()
        team = self._team_digest()
        me = (_seed_word(self.suite.seed), self.worker)
        members = {me}
        for entry in db.fetch_shared(WORKERS_KEY):
            worker, theirs, seed, said = _WORKER.unpack(entry)
            if worker != self.worker and theirs == team and now - said < ROLL_CALL_STALE:
                members.add((seed, worker))
        ranked = sorted(members)
        self.team = (ranked.index(me), len(ranked))
        self.sharing.place, self.sharing.team = self.team
        self.sharing.checks = len(self.arms)
        twins = sum(1 for seed, _ in members if seed == me[0]) - 1
        if twins and not self.sharing.same_seed:
            self.sharing.same_seed = twins
            db.shared.warn(
                f"warning: {twins} other fuzz worker(s) on {db.shared.shown} have this "
                f"worker's seed ({self.suite.seed}) and checks: they draw the same cases and "
                "cannot build on each other; give each worker its own --seed"
            )

    def _close_sharing(self) -> None:
        """One last attempt at what the shared database missed, and what it never got."""
        db = self.database
        if self.sharing is None or not isinstance(db, KitDatabase) or db.shared is None:
            return
        shared = db.shared
        if self.roll_record is not None:
            shared.delete(WORKERS_KEY, self.roll_record)  # this worker is gone
        shared.close()
        if shared.loss is not None:
            self.sharing.lost_after = max(0.0, shared.loss.since - self.started)
            self.sharing.lost_error = shared.loss.error
            self.sharing.answered_again = shared.loss.back
        kinds: Counter[str] = Counter()
        for key, count in shared.unshared().items():
            if key.endswith(SHARED_SUB_KEY):
                kinds["corpus inputs"] += count
            elif key.endswith(ENERGY_SUB_KEY):
                kinds["energy records"] += count
            elif key == b"":
                kinds["writes given up"] += count
            else:
                kinds["failures"] += count
        self.sharing.not_shared = dict(kinds)
        # ``sent`` counted every input given to it: the ones it never got were not sent
        self.sharing.sent = max(0, self.sharing.sent - kinds["corpus inputs"])

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
            final_pass = self._final_pass(deadline)
            self._close_sharing()
        except stopping.Stopped as stop:
            fuzz_seconds = self.clock() - self.started
            self.stopped = f"stopped by {stop.name}"
            self._close_sharing()
            stop.partial = [self._outcome(self._partial_results(), fuzz_seconds, None)]
            raise
        return self._outcome(self.graded, fuzz_seconds, final_pass)

    def _outcome(
        self, results: list[CheckResult], seconds: float, final_pass: str | None
    ) -> FuzzOutcome:
        return FuzzOutcome(
            results=results,
            seconds=seconds,
            cases=self.cases,
            features=self._features(),
            stopped=self.stopped,
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
            seeds_kept=self.seeds_kept,
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

    # The loop in two parts, so that benchmarks/shared_fuzz.py can drive several fuzzers
    # case by case in lockstep (within :func:`shared_sessions`, ``started`` set).

    def begin(self, deadline: float) -> None:
        """Arm the checks, resume the corpus the database holds, run the seed corpus."""
        self.arms = [self._arm(c) for c in self.checks if self._fuzzable(c)]
        self._roll_call()
        for arm in self.arms:
            self._resume(arm, deadline)
        for arm in self.arms:
            self._seed(arm, deadline)
        self.next_sync = self.clock() + self.config.sync_seconds

    def step(self, deadline: float) -> None:
        """One case (and, when it is time, a look at the shared database)."""
        if not self.team_read:
            # as it starts: the workers started with it have said so (lockstep: all of them)
            self.team_read = True
            self._read_team()
        arm = self._choose()
        self._one(arm, self._mutant(arm))
        self._sync(deadline)

    def _final_reserve(self) -> float:
        """The part of the budget the final pass is likely to need: each check's fixtures,
        a generated case and a database replay, a few shrinking runs per failure found,
        at what a case has cost so far (with a margin); at most half the budget."""
        if not self.timed or math.isinf(self.config.seconds):
            return 0.0
        per_case = self.case_seconds / self.timed
        runs = sum(len(c.fixtures) + 2 for c in self.checks) + 10 * len(self.found)
        return min(FINAL_PASS_SHARE_CAP * self.config.seconds, 1.5 * per_case * runs)

    def _done(self, deadline: float) -> bool:
        if self.interrupted:
            self.stopped = "interrupted"
            return True
        if self.clock() >= deadline - self._final_reserve():
            self.stopped = "time"
            return True
        if self.config.max_cases is not None and self.cases >= self.config.max_cases:
            self.stopped = f"{self.cases} cases"
            return True
        if self.config.max_failures is not None and len(self.found) >= self.config.max_failures:
            self.stopped = f"{len(self.found)} failure(s) found"
            return True
        if all(arm.retired for arm in self.arms):
            self.stopped = "every check failed"
            return True
        return False

    def _choose(self) -> Arm:
        """The check for the next case: the one whose recent cases found most (UCB1).

        Workers sharing a database that fuzz one client's checks divide them, as HypoFuzz
        spreads tests over its workers: worker P of a team of N (by seed, from the roll
        call) spends :data:`TEAM_SHARE` of its cases on the checks P, P + N, P + 2N, ...
        (and the rest on every check), so the team's cases are not spread thin over every
        check on every worker; each check's finds reach the others at their next look.
        """
        live = [a for a in self.arms if not a.retired]
        mine = self._own(live)
        if mine and self.random.random() < TEAM_SHARE:
            live = mine
        scores = [a.score(self.cases) for a in live]
        best = max(scores)
        return self.random.choice([a for a, s in zip(live, scores, strict=True) if s == best])

    def _own(self, live: list[Arm]) -> list[Arm]:
        """This worker's share of the live checks in its team (none alone, or when its
        share is all of them or none of them: then it spreads over every check)."""
        place, size = self.team
        if size < 2:
            return []
        mine = [a for i, a in enumerate(self.arms) if i % size == place and not a.retired]
        return mine if 0 < len(mine) < len(live) else []

    def _fresh_share(self) -> float:
        """How many of this worker's cases start from scratch (the rest mutate its corpus).

        A team divides its checks (:meth:`_choose`), and each worker takes its share deep
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
        place, size = self.team
        return FRESH_SHARE if place < len(self.arms) or size < 2 else 1.0

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

    def _pick(self, arm: Arm) -> Entry:
        """A corpus input: one of the newest, or one drawn by how rare the rarest thing it
        reached still is.

        A new input is where the search just got to, so each gets a burst of mutants
        soon after it arrives.  Otherwise, an input that reached what few cases reach (a
        code edge, two kinds of line side by side, an answer) is where the next
        condition is most likely within reach; as its mutants reach the same thing too,
        the thing stops being rare and the search moves on.  (By rarity alone, the one
        input with a failed tool call and a text side by side drew 1% of the picks among
        a hundred inputs each kept for something rare.)  Weights are recomputed every
        few cases.
        """
        if len(arm.weights) != len(arm.corpus) or arm.cases - arm.weighed_at >= REWEIGH_EVERY:
            arm.weights = [_weight(arm, e) for e in arm.corpus]
            arm.weighed_at = arm.cases
        corpus, weights = arm.corpus, arm.weights
        if self.suite.recordings:
            corpus, weights = self._lineage(arm)
        if self.random.random() < RECENT_SHARE:
            # the newest inputs first: each gets a burst of mutants soon after it arrives
            back = min(int(self.random.expovariate(0.3)), len(corpus) - 1)
            return corpus[-1 - back]
        (entry,) = self.random.choices(corpus, weights=weights)
        return entry

    def _lineage(self, arm: Arm) -> tuple[list[Entry], list[float]]:
        """The inputs a pick is among: those that start from a recording one time in
        :data:`RECORDED_ONE_IN` (as fresh runs are), the generated ones otherwise.

        Mutants of real recordings find new shapes at every turn (real bodies, real
        orders), so they were most of the corpus and of its picks, and the generator's
        own structures that no short recording has (turns after the first) were starved:
        with ``--seed-corpus`` the rule-3 deep bug was found on 3 seeds of 5 in 3,000
        cases, against 5 of 5 without (45 of 60 inputs kept by case 408 started from a
        recording, and 77 of 129 picks).
        """
        recorded = self.random.randrange(RECORDED_ONE_IN) == 0
        picked = [
            (e, w) for e, w in zip(arm.corpus, arm.weights, strict=True) if e.recorded == recorded
        ]
        if not picked or len(picked) == len(arm.corpus):
            return arm.corpus, arm.weights
        return [e for e, _ in picked], [w for _, w in picked]

    def _mutant(self, arm: Arm) -> Choices | None:
        """A prefix of choices to replay (Hypothesis draws the rest), or None for fresh."""
        self.parent = None
        if not arm.corpus or self.random.random() < self._fresh_share():
            return None
        rnd = self.random
        entry = self._pick(arm)
        entry.picked += 1
        self.parent = entry
        choices = entry.choices
        n = len(choices)
        if n == 0:
            return None
        i = rnd.randrange(n)
        op = rnd.randrange(8)
        if op <= 1 and entry.parts:
            # keep the first part of the case (for a stream: the valid run) and draw the
            # later ones (its mutations, where they apply) afresh; or keep more parts
            return choices[: entry.parts[0] if op == 0 else rnd.choice(entry.parts)]
        if op == 7 and entry.pieces:
            # drop one piece of a later part (one of two mutations, say), keep the rest
            start, end = rnd.choice(entry.pieces)
            return (*choices[:start], *choices[end:])
        if op <= 2:  # keep a prefix, regenerate the rest
            return choices[:i]
        if op == 3:  # change one choice
            kind, constraints = entry.shapes[i]
            try:
                index = rnd.randrange(1 << rnd.randrange(1, 12))
                value = choice_from_index(index, kind, constraints)  # type: ignore[arg-type]
            except Exception:  # out of range for this choice: regenerate instead
                return choices[:i]
            return (*choices[:i], value, *choices[i + 1 :])
        if op == 4 and len(arm.corpus) > 1:  # splice with another input
            other = rnd.choice(arm.corpus).choices
            j = rnd.randrange(len(other)) if other else 0
            return (*choices[:i], *other[j:])
        j = min(n, i + 1 + rnd.randrange(min(64, n - i)))
        if op == 5:  # repeat a run of choices (another event, another step)
            return (*choices[:j], *choices[i:j], *choices[j:])
        return (*choices[:i], *choices[j:])  # drop a run of choices

    def _draw(self, arm: Arm, prefix: Choices | None) -> tuple[ConjectureData, Any] | None:
        data = ConjectureData(random=self.random, prefix=prefix)
        drawing_recorded(reset=True)
        try:
            with BuildContext(data, is_final=False, wrapped_test=_fuzz_target):
                case = data.draw(arm.strategy)
        except (StopTest, UnsatisfiedAssumption, Frozen):
            return None
        except HypothesisException:
            return None
        data.freeze()
        self.drawn_recorded = drawing_recorded(reset=True)
        return data, case

    def _one(self, arm: Arm, prefix: Choices | None, *, origin: str = "here") -> None:
        drawn = self._draw(arm, prefix)
        if drawn is None:
            return
        data, case = drawn
        parent = self.parent
        from_shared = origin in ("shared", "failure") or (parent is not None and parent.from_shared)
        if self.sharing is not None and parent is not None and parent.from_shared:
            self.sharing.reused += 1
        g = graded_case(case, self.vocab, self.suite.claims.reads)
        if not _claimed(g, self.suite.claims):
            return  # a shape the client does not read: not a case for it
        self._only_live(arm.runner)
        self.feedback.start_case()
        began = self.clock()
        obs = arm.runner.run(g)
        self.case_seconds += self.clock() - began
        self.timed += 1
        session = arm.runner.session
        coverage = self.feedback.end_case(session.proc if session is not None else None)
        if obs.status in STOPPED_MID_CASE:
            # what the client ran before the kit's kill landed is a matter of scheduling,
            # so it is not this input's: its shapes and the answer stand for it
            coverage = frozenset()
        j = judge(arm.check, g, obs, arm.ctx)
        self.cases += 1
        arm.cases += 1
        arm.since_sync += 1
        answer = (arm.check.id, obs.status, obs.verdict, j.verdict)
        # the code the case reached in the client (if it says), the input's own shape
        # (which kinds of line it puts side by side), and the client's answer
        shapes = shape_features(g.stream, self.vocab) if g.kind == "stream" else frozenset()
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
            self._keep(arm, data, len(new), reached, origin, from_shared, frozenset(new))
            if self.sharing is not None and origin == "here" and from_shared:
                self.sharing.built_on += 1
        if j.verdict in ("fail", "crash", "error"):
            recording = getattr(getattr(case, "run", None), "recording", None)
            self._failed(arm, g, j, obs, data, from_shared, recording, origin == "failure")

    def _only_live(self, runner: CaseRunner) -> None:
        """At most one client process alive: the checks share one persistent session
        (:func:`shared_sessions`), and one with a session of its own (a quiet check,
        which counts its client's stderr from its own start) pauses the other's."""
        session = runner.session
        if self.live is not None and self.live is not session:
            self.live.pause()
        self.live = session

    def _shape(self, kind: str, constraints: Any) -> tuple[str, Any]:
        """One choice's shape, the same object for every equal one: an input's shapes are
        one per choice and repeat across the corpus (a few distinct among thousands)."""
        try:
            key: Hashable = (kind, repr(sorted(constraints.items())))
        except (AttributeError, TypeError):
            return kind, constraints
        found = self._shapes.get(key)
        if found is None:
            found = self._shapes[key] = (kind, constraints)
        return found

    def _compact(self, reached: frozenset[int]) -> Reached:
        """What an input reached, kept for its weight in a fraction of the memory: the
        code edges and input shapes (hundreds an input) as 8-byte integers.  A 10-minute
        session kept a frozenset of Python integers for every input: 17 KiB an input,
        growing by 2 MiB a minute."""
        keys = sorted(reached)
        try:
            return Reached(array("q", keys))
        except OverflowError:
            return Reached(tuple(keys))

    def _keep(
        self,
        arm: Arm,
        data: ConjectureData,
        novel: int,
        reached: frozenset[int],
        origin: str = "here",
        from_shared: bool = False,
        found: frozenset[int] = frozenset(),
    ) -> Entry:
        """Add an input to the corpus (``found``: what it found that no case had, which
        its record in the shared database says)."""
        shape = self._shape
        shapes = tuple(shape(node.type, node.constraints) for node in data.nodes)
        parts, pieces = _parts(data)
        entry = Entry(tuple(data.choices), shapes, novel, parts, pieces, self._compact(reached))
        entry.origin, entry.from_shared = origin, from_shared
        entry.recorded = self.drawn_recorded  # the case just drawn
        entry.blob = choices_to_bytes(data.choices)
        entry.digest = _digest(entry.blob)
        self.kept = True
        if origin in ("shared", "failure"):
            # among the oldest: the bursts of mutants for the newest inputs stay with this
            # worker's own finds (the other worker gave its find its burst already); the
            # picks by rarity reach it wherever it stands
            arm.corpus.insert(0, entry)
        else:
            arm.corpus.append(entry)
        blob = entry.blob
        arm.known.add(blob)
        db = self.database
        key = arm.key + CORPUS_SUB_KEY
        if isinstance(db, KitDatabase) and origin in ("here", "resumed"):
            # the local directory resumes from its choices; the others get its record at
            # this worker's next look (an earlier session's input is shared now too)
            if origin == "here" and db.local is not None:
                db.local.save(key, blob)
            if db.shared is not None:
                entry.record = _shared_record(self.client_digest, found, blob)
                arm.outbox.append(entry.record)
        elif db is not None and origin == "here":
            db.save(key, blob)
        if len(arm.corpus) > CORPUS_CAP:
            # drop the least productive of the older half
            half = arm.corpus[: CORPUS_CAP // 2]
            worst = min(half, key=lambda e: (e.novel, -(e.picked + e.shared_picked)))
            arm.corpus.remove(worst)
            self._forget(arm, worst)
        return entry

    def _forget(self, arm: Arm, entry: Entry) -> None:
        """Drop an input from the local database; from the shared one only if it was this
        worker's own (another worker's input may still be worth something to it)."""
        db = self.database
        if db is None:
            return
        key = arm.key + CORPUS_SUB_KEY
        if not isinstance(db, KitDatabase):
            db.delete(key, entry.blob)
            return
        if db.local is not None:
            db.local.delete(key, entry.blob)
        if entry.record in arm.outbox:
            arm.outbox.remove(entry.record)  # never written
        elif entry.record and db.shared is not None:
            db.shared.delete(arm.key + SHARED_SUB_KEY, entry.record)
        if entry.record and entry.told >= 0 and db.shared is not None:
            db.shared.delete(arm.key + ENERGY_SUB_KEY, self._energy(entry, entry.told))

    def _failed(
        self,
        arm: Arm,
        g: GradedCase,
        j: Judgment,
        obs: Observation,
        data: ConjectureData,
        from_shared: bool = False,
        recording: str | None = None,
        replayed: bool = False,
    ) -> None:
        signature = reaction(arm.check, j, obs)
        arm.known.add(choices_to_bytes(data.choices))  # not replayed from the database
        if signature in arm.failures:
            return
        if self.config.stop_on_first:
            arm.retired = True
        if len(arm.failures) >= FAILURES_PER_CHECK:
            return
        failure = _failure(g, j, obs)
        failure.source = "fuzzed"
        _save_failure(self.suite, arm.check, g, failure)  # bounded in _merge (keep_bounded)
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
            db.save(arm.key + UNSHRUNK, choices_to_bytes(data.choices))

    # ------------------------------------------------------------------ the report

    def _final_pass(self, deadline: float) -> str | None:
        """Every check graded as ``run`` grades it (fixtures, then the database, shrunk),
        within what is left of the budget; what it could not grade in full says so."""
        replay = dataclasses.replace(self.suite, examples=1)
        if not math.isinf(self.config.seconds):
            left = max(0.0, deadline - self.clock())
            replay = dataclasses.replace(
                replay,
                deadline=time.monotonic() + left,
                time_budget=self.config.seconds,
                budget_option="--for",
            )
        by_id = {arm.check.id: arm for arm in self.arms}
        with shared_sessions():
            for check in self.checks:
                result = run_check(check, replay)
                arm = by_id.get(check.id)
                if arm is not None:
                    passed = result.outcome in ("pass", "skip")
                    again = self._replayed(arm, replay) if passed else None
                    _merge(result, arm, check, again, self.suite.client.env)
                self.graded.append(result)
        cut = sum(1 for r in self.graded if r.cut_short)
        if not cut:
            return None
        return (
            f"cut short by --for: {cut} of {len(self.checks)} check(s) not graded in full "
            "(give fuzz more time to grade them)"
        )

    def _partial_results(self) -> list[CheckResult]:
        """What a stopped command reports: the checks the final pass graded, and every
        other check that failed while fuzzing (its failures are saved and replayable)."""
        results = list(self.graded)
        done = {r.id for r in results}
        for arm in self.arms:
            if arm.check.id in done or not arm.failures:
                continue
            found = sorted(arm.failures.values(), key=lambda f: f.seconds)
            check = arm.check
            result = CheckResult(
                check.id, check.name, check.rule, check.tier, check.failing_outcome,
                f"failed while fuzzing (not replayed: the kit was stopped): {found[0].message}",
                cases=arm.cases, failures=[f.failure for f in found], failed_cases=len(found),
            )  # fmt: skip
            keep_bounded(result.failures)
            results.append(result)
        order = {c.id: i for i, c in enumerate(self.checks)}
        return sorted(results, key=lambda r: order.get(r.id, len(order)))

    def _replayed(self, arm: Arm, config: SuiteConfig) -> Found | str | None:
        """The first fuzzed failure that fails again when run once more on its own, or why
        none was run again (the budget ran out).

        ``run_check`` replays a session's failures from the example database; without one
        (``--no-database``) it never sees them, so each is run again here, within the final
        pass's budget (``config``), on a client process of its own (a persistent session
        shared with the final pass is restarted for it): a deterministic client fails them
        again, and only a failure that does not come back is one that depended on earlier
        cases or on time.
        """
        if self.database is not None:
            return None
        for found in sorted(arm.failures.values(), key=lambda f: f.seconds):
            if found.case is None:
                continue
            if config.deadline is not None and time.monotonic() > config.deadline:
                return (
                    f"not replayed: the {config.budget_option} of {config.time_budget:g} s ran out"
                )
            runner = CaseRunner(config, arm.check)
            if runner.session is not None and not runner.owns_session:
                runner.session.pause()  # on its own: no earlier case in the process
            try:
                obs = runner.run(found.case)
            finally:
                if runner.session is not None and not runner.owns_session:
                    runner.session.pause()  # nor this one in the next check's
                runner.close()
            if judge(arm.check, found.case, obs, arm.ctx).verdict in ("fail", "crash", "error"):
                return found
        return None


def _digest(blob: bytes) -> bytes:
    return hashlib.sha256(blob).digest()[:12]


_STABLE: dict[Hashable, int] = {}


def _stable(feature: Hashable) -> int:
    """A feature that is not the client's code (a shape, an answer) as a 62-bit digest
    with :data:`_HASHED` set, the same in every process (memoised, within a bound)."""
    known = _STABLE.get(feature)
    if known is None:
        digest = hashlib.blake2b(repr(feature).encode(), digest_size=8).digest()
        known = _HASHED | (int.from_bytes(digest, "big") & (_HASHED - 1))
        if len(_STABLE) < 65_536:
            _STABLE[feature] = known
    return known


def _shared_record(client: bytes, found: frozenset[int], blob: bytes) -> bytes:
    """An input as workers share it: a version, the digest of the client it was run on
    (``Fuzzer.client_digest``), what it found when it was kept (the non-code features
    first, then the code's, at most :data:`SHARED_FEATURES_CAP`), its choices."""
    ordered = sorted(found, reverse=True)[:SHARED_FEATURES_CAP]
    head = _SHARED_HEAD.pack(_SHARED_VERSION, client, len(ordered))
    return head + struct.pack(f">{len(ordered)}Q", *ordered) + blob


def _parse_shared(record: bytes) -> tuple[bytes, frozenset[int], bytes] | None:
    """A shared record's client digest, features and choices; None if it is not one."""
    if len(record) < _SHARED_HEAD.size:
        return None
    version, client, count = _SHARED_HEAD.unpack_from(record)
    end = _SHARED_HEAD.size + 8 * count
    if version != _SHARED_VERSION or count > SHARED_FEATURES_CAP or len(record) < end:
        return None
    blob = record[end:]
    if choices_from_bytes(blob) is None:
        return None
    features = frozenset(struct.unpack_from(f">{count}Q", record, _SHARED_HEAD.size))
    return client, features, blob


register_record(SHARED_SUB_KEY, lambda record: _parse_shared(record) is not None)


def _weight(arm: Arm, entry: Entry) -> float:
    """How rare the rarest thing this input reached is, less for inputs mutated often.

    A rare thing that the input's own mutants do not reach again (the client's
    start-up code, reached by its first case only) is no lead: it counts as reached
    by at least a quarter as many cases as the input has had mutants.
    """
    rarest = min((arm.hits[k] for k in entry.reached), default=1)
    picked = entry.picked + entry.shared_picked  # other workers' mutants count too
    return 1.0 / (max(rarest, 1 + picked // 4) * (1 + picked))


def _parts(data: ConjectureData) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    """Where each part of the case's top-level structure starts (the first part aside),
    and the pieces the later parts are made of.

    The top level is the first span, from the outermost draw down, that splits into
    more than one part: for a generated stream, the valid run and then the list of
    mutations and what each draws.  Cutting at a part keeps the parts before it whole;
    a piece of a later part is one drawn item (one mutation of the list, say), which
    can be dropped on its own.
    """
    spans = data.spans
    if len(spans) == 0:
        return (), ()
    span = spans[0]
    while True:
        children = span.children
        if len(children) == 1 and children[0].choice_count == span.choice_count:
            span = children[0]
            continue
        break
    later = [c for c in children[1:] if 0 < c.start < len(data.choices)]
    pieces = tuple((g.start, g.end) for c in later for g in c.children if g.end > g.start)
    return tuple(sorted({c.start for c in later})), pieces


def _merge(
    result: CheckResult,
    arm: Arm,
    check: Check,
    replayed: Found | str | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Fold what fuzzing did for one check into its graded result.

    ``replayed``: a fuzzed failure that failed again on its own (the session had no example
    database for the final grading to replay it from), or why none was run again; ``env``:
    what the session set in the client's environment (its hash seed), said when a failure
    did not come back.
    """
    result.cases += arm.cases
    found = sorted(arm.failures.values(), key=lambda f: f.seconds)
    if not found:
        if result.outcome == "pass":
            result.message = f"{result.cases} case(s), {arm.cases} of them fuzzed"
        return
    if result.outcome in ("pass", "skip"):
        first = replayed if isinstance(replayed, Found) else found[0]
        verdict = first.failure.verdict  # a crash is the client's crash, an error an error
        result.outcome = verdict if verdict in ("crash", "error") else check.failing_outcome
        if isinstance(replayed, Found):
            result.message = f"found while fuzzing, and again when replayed: {replayed.message}"
            found = [replayed, *(f for f in found if f is not replayed)]
        elif replayed is not None:
            result.message = f"failed while fuzzing ({replayed}): {found[0].message}"
        else:
            same = "".join(f", replayed with {k}={v} as fuzzed" for k, v in (env or {}).items())
            result.message = (
                f"failed while fuzzing but not when replayed (the client may depend on "
                f"earlier cases or on time{same}): {found[0].message}"
            )
    elif result.cut_short and result.outcome == "error" and not result.failures:
        # not graded in full in the final pass, but fuzzing found a failure: that is its
        # outcome (the case is saved and replays), with the budget's words after it
        result.outcome = check.failing_outcome
        result.message = f"{found[0].message} (failed while fuzzing; {result.message})"
    shown = {f.saved for f in result.failures}
    for f in found:
        if f.failure.saved not in shown and len(result.failures) < FAILURES_PER_CHECK + 1:
            result.failures.append(f.failure)
            result.failed_cases += 1
    # every case fuzzing saved (the fuzz section lists those the check's failures leave
    # out): the smallest generated whole, any other over 256 KiB listed by size and sha256
    listed = {id(f) for f in result.failures}
    keep_bounded([*result.failures, *(f.failure for f in found if id(f.failure) not in listed)])


def _fuzz_target() -> None:
    """Stands in for the test function Hypothesis expects behind a build context."""


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


@dataclass
class FuzzReport(Report):
    """``run``'s report, plus what the fuzzing did (in every format)."""

    fuzz: FuzzOutcome | None = None

    def to_json(self) -> dict[str, Any]:
        doc = super().to_json()
        if self.fuzz is not None:
            doc["fuzz"] = self.fuzz.to_json()
        return doc

    def summary_lines(self) -> list[str]:
        f = self.fuzz
        if f is None:
            return []
        rate = f.cases / f.seconds if f.seconds else 0.0
        lines = [
            f"fuzzed {f.cases:,} case(s) in {f.seconds:.0f} s ({rate:.0f}/s), stopped: {f.stopped}",
            f"feedback: {f.feedback}; coverage features: {f.features:,}",
        ]
        if f.final_pass:
            lines.append(f"final pass: {f.final_pass}")
        for found in f.failures:
            where = []
            if found.recording is not None:
                where.append(f"on the recording {found.recording}")
            if found.replayed:
                where.append("another worker's find, failing here too")
            elif found.from_shared:
                where.append("built on another worker's input")
            lines.append(
                f"found after {found.seconds:.1f} s ({found.cases:,} cases): {found.check}: "
                f"{found.message}" + (f" [{'; '.join(where)}]" if where else "")
            )
        if f.sharing is not None:
            lines.extend(f.sharing.lines())
        return lines

    def _terminal(self, verbose: bool) -> str:
        return "\n".join([super()._terminal(verbose), "", *self.summary_lines()])

    def markdown(self) -> str:
        lines = self.summary_lines()
        extra = "\n".join(f"- {line}" for line in lines)
        return super().markdown() + ("\n" + extra + "\n" if extra else "")
