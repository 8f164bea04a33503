"""Grade one client on a set of checks: fixtures first, then generated cases.

Each check runs its curated fixtures, then generated cases that carry only that
check's mutations: its strata, then random examples the kit draws from the check's
Hypothesis strategy itself (:mod:`~stella_conform.generators.engine.drawing`: no engine run
around each).  A failing generated case is handed to the check's Hypothesis property,
which shrinks it (within a budget of client runs, since every shrink step starts the
client again); it is saved in the fixture format, and reported with the command that
replays it.  Checks run in parallel worker
processes with ``-j``; each check's cases are drawn from its own seed, so
results do not depend on ``-j``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import itertools
import math
import os
import re
import shlex
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from random import Random
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import (
    BackgroundWriteDatabase,
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
    choices_from_bytes,
    choices_to_bytes,
)
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.internal.conjecture.choice import ChoiceT
from hypothesis.strategies import SearchStrategy

from stella_conform import stopping
from stella_conform.conformance.checks import (
    Check,
    Context,
    GradedCase,
    Judgment,
    combine,
    expected_text,
    judge,
)
from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.clients.protocol import COMMAND_ENV
from stella_conform.conformance.clients.runner import (
    LINES,
    Client,
    Feed,
    Observation,
    PersistentSession,
    run_once,
)
from stella_conform.conformance.clients.wrapper import staged
from stella_conform.conformance.report.excerpt import decisive_lines, digested_values
from stella_conform.conformance.store.casecache import (
    CacheDamaged,
    CachedCases,
    CacheWriter,
    cache_key,
    discard,
    open_cached,
)
from stella_conform.conformance.store.database import ENTRY_CAP, KEY_ENTRIES_CAP, valid_entry
from stella_conform.conformance.suite.travel import (
    fixture_name,
    kit_command,
    portable_path,
    program_inside,
)
from stella_conform.generators.cases import Case, cases
from stella_conform.generators.engine.drawing import drawn, redrawn
from stella_conform.generators.envelopes import EnvelopeCase, envelope_cases
from stella_conform.generators.journals import JournalCase, journal_cases
from stella_conform.generators.mutations import applicable
from stella_conform.generators.runs import Run
from stella_conform.generators.scenarios import ScenarioCase, scenario_cases
from stella_conform.generators.strata import Stratum
from stella_conform.oracle.corpus import (
    EXPECT_SUFFIX,
    SCENARIO_SUFFIX,
    TraceFixture,
    bundled_fixtures_dir,
    expectation_from,
    read_envelope_fixture,
    read_jsonl_fixture,
    read_scenario,
    write_envelope_fixture,
    write_fixture,
    write_scenario,
    write_trace_fixture,
)
from stella_conform.oracle.decoder import Decoded, Kind
from stella_conform.oracle.envelope import envelope_parts
from stella_conform.oracle.readings import also_conforming, careful_default
from stella_conform.safe_files import remove_written
from stella_conform.safe_text import clip, json_safe, no_surrogates
from stella_conform.schemas.vocabulary import Vocabulary

#: The longest failure message a report keeps (the rest is cut, and says so).
MESSAGE_CAP = 2000

#: A failing case's stream is kept for its excerpt up to this size (the excerpt itself is
#: short; the saved case file always has the whole stream).
STREAM_KEPT = 1024 * 1024

#: A failing case other than a check's smallest is saved whole up to this size; a larger
#: one is listed by its size and sha256 (the smallest, the one replayed, is always saved
#: whole): a client that fails on every long line must not fill the failures folder and
#: the report with megabytes per case.
SAVED_WHOLE = 256 * 1024

#: Client runs a shrink may spend after the first failure of a check.
SHRINK_BUDGET = 150

#: The failing cases a check keeps in full (every fixture of the largest check, and more);
#: more are counted, not kept.
FAILURES_KEPT = 20

#: The inputs whose generated cases the case cache keeps (a wrapper's scenarios drive the
#: fake stella: they are generated every time).
CACHED_INPUTS = ("stream", "envelope", "journal")


@dataclass
class CaseFailure:
    """One failing case, as reported."""

    case: str
    source: str
    message: str
    expected: dict[str, Any]
    observed: dict[str, Any]
    saved: str | None = None
    replay: str | None = None
    mutations: tuple[str, ...] = ()
    stream: bytes | None = None
    #: The stream lines that decide the judgment (always shown in an excerpt).
    decisive: tuple[int, ...] = ()
    #: The case's judgment: ``fail``, ``crash`` (the client died) or ``error``.
    verdict: str = "fail"
    #: The case's size in bytes (failures are listed smallest first).
    size: int = 0
    #: A protocol error's words without the output they quote: the same mistake in every
    #: case and every check (one report of it, not one per check).
    cause: str | None = None
    #: More strata that failed with this message and these mutations (the one flaw
    #: again): counted here, not listed one by one.
    alike: int = 0
    #: The sha256 of the case's stream (hex): names a case that is not saved.
    sha256: str = ""
    #: Why the case is not in the failures folder (too large, and not the smallest); its
    #: ``replay`` is then the smallest's.  ``None``: saved (or a fixture).
    not_saved: str | None = None
    #: The files this run wrote for the case (removed again if it is not kept whole).
    written: tuple[str, ...] = ()

    def to_json(self, whole: bool = True) -> dict[str, Any]:
        """The failure as a report lists it; ``whole=False`` (any but a check's first, its
        smallest): every expected string over 4096 characters is excerpted and digested."""
        skipped = ("stream", "decisive", "written", "not_saved")
        out = {k: v for k, v in self.__dict__.items() if k not in skipped}
        out["mutations"] = list(self.mutations)
        out["decisive_lines"] = list(self.decisive)
        if not whole:
            out["expected"] = digested_values(self.expected)
        if self.not_saved is not None:
            out["not_saved"] = self.not_saved
        return out


@dataclass
class CheckResult:
    id: str
    name: str
    rule: str
    tier: str
    outcome: str
    message: str
    cases: int = 0
    failures: list[CaseFailure] = field(default_factory=list)
    known_failure: str | None = None
    seconds: float = 0.0
    #: ``point=A`` / ``point=B``: the registered readings the client took in cases it
    #: passed (docs/contract-readings.md), with how many cases each. Information only.
    readings: dict[str, int] = field(default_factory=dict)
    #: The time budget ran out before the check was graded in full (not in the JSON: the
    #: message says so).
    cut_short: bool = False
    #: How many distinct cases failed (crashed, errored); ``failures`` keeps at most
    #: :data:`FAILURES_KEPT` of them, the smallest first.
    failed_cases: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "rule": self.rule,
            "tier": self.tier,
            "outcome": self.outcome,
            "message": self.message,
            "cases": self.cases,
            "known_failure": self.known_failure,
            "seconds": round(self.seconds, 3),
            "readings": dict(sorted(self.readings.items())),
            "failed_cases": self.failed_cases,
            "failures": [f.to_json(whole=i == 0) for i, f in enumerate(self.failures)],
        }


@dataclass(frozen=True)
class SuiteConfig:
    client: Client
    examples: int = 25
    seed: int = 0
    failures_dir: Path = Path(".stella-conform/failures")
    database_dir: Path | None = Path(".stella-conform/hypothesis")
    wire_schema: str | None = None
    fixtures_dir: Path | None = None
    #: Client runs a check may spend shrinking after its first generated failure.
    shrink_budget: int = SHRINK_BUDGET
    #: An example database to use instead of ``database_dir`` (the pytest plugin passes
    #: Hypothesis's configured one, e.g. a GitHub-artifact database shared by CI).
    database: Any = None
    #: Keep each check's generated cases for the next client graded on it in this process
    #: (a matrix); off for one client, whose checks never share cases.
    share_generation: bool = False
    #: ``time.monotonic()`` after which no new case starts (``run --time-budget``).
    deadline: float | None = None
    #: The budget in seconds, as the user gave it (for messages).
    time_budget: float | None = None
    #: The option that set the budget, as messages name it (``fuzz`` sets ``--for``).
    budget_option: str = "--time-budget"
    #: What the client claims to know, read and compute (see ``claims.py``).
    claims: Claims = field(default_factory=Claims)
    #: Grade each check on at most its first N fixtures (the catalogue lists the most
    #: basic first); ``None``: every fixture.  For a quick run of a client's other modes
    #: when one of its runs grades every fixture: each check still runs, in this mode.
    fixtures_per_check: int | None = None
    #: Real recordings a generated stream case may start from instead of a generated run
    #: (``--seed-corpus``, :mod:`recordings`): the same in ``fuzz`` and in the ``run``
    #: that replays what it found.
    recordings: tuple[Any, ...] = ()
    #: Why the client runs in its mode, when ``--mode auto`` chose it (reports say so).
    mode_reason: str | None = None
    #: A folder of generated cases kept between runs (:mod:`casecache`); ``None``: none.
    case_cache: Path | None = None
    #: Grade a check's strata and no random examples (the plugin's fuzz targets, whose
    #: random cases Hypothesis draws for them): failures listed and shrunk as in ``run``.
    strata_only: bool = False

    def stella_vocabulary(self) -> Vocabulary:
        """What the stella under test writes."""
        return Vocabulary.load(self.wire_schema)

    def vocabulary(self) -> Vocabulary:
        """The vocabulary as this client sees it: the stella's, narrowed to what it knows."""
        return self.claims.vocabulary(self.stella_vocabulary())

    def with_claims(self, claims: Claims) -> SuiteConfig:
        """This configuration for a client making ``claims`` (a summary-only one is fed whole)."""
        client = replace(self.client, summary_only=claims.summary_only)
        return replace(self, claims=claims, client=client)


def check_seed(seed: int, check_id: str) -> int:
    """A per-check seed, stable across runs and independent of ``-j``."""
    return seed * 1_000_003 + zlib.crc32(check_id.encode())


def replay_command(
    path: str, client: Client, check: Check | None = None, config: SuiteConfig | None = None
) -> str | None:
    """The command that re-runs one saved case; ``None`` when it cannot be written.

    An in-process parser is named by module and function (``--parser``), with the
    exception types that mean reject; one that cannot be imported again (a lambda,
    a function defined inside a test) has no replay command.  The environment the kit
    gave the client (fuzz's ``PYTHONHASHSEED``) goes in front, as assignments.
    """
    # a line that works where it is pasted (conformance/suite/travel.py): fixture:NAME, paths
    # relative to the working folder, the kit as it can be started here
    parts = [*kit_command(), "replay", portable_path(path)]
    if check is not None and check.profile != "reader":
        parts += ["--check", check.id]
    if config is not None:  # the same oracle: the same vocabulary, the same claims
        if config.wire_schema is not None:
            schema = config.wire_schema
            parts += ["--wire-schema", portable_path(schema) if os.sep in schema else schema]
        parts += config.claims.as_options()
    if client.function is None:
        argv = list(client.argv)
        if client.cwd is not None:  # the command's relative paths are relative to it
            parts += ["--cwd", portable_path(client.cwd)]
            argv[0] = program_inside(argv[0], client.cwd)
        parts += ["--mode", client.mode]
        if client.reject_exit_codes != frozenset({1}):
            parts += ["--reject-exit-codes", ",".join(map(str, sorted(client.reject_exit_codes)))]
        if not client.detect_crashes:
            parts.append("--no-crash-detection")
        return _assignments(client.env) + shlex.join([*parts, "--", *argv])
    from stella_conform.conformance.clients.inprocess import replay_args

    found = replay_args(client.function)
    if found is None:
        return None
    args, pythonpath = found
    env = {**client.env, **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    return _assignments(env) + shlex.join([*parts, *args])


def _assignments(env: Mapping[str, str]) -> str:
    """``NAME=value `` for each variable, quoted for a POSIX shell, to go before a command."""
    return "".join(f"{name}={shlex.quote(value)} " for name, value in sorted(env.items()))


class _SharedSession:
    """The persistent client process the checks graded in this process share.

    Starting a client is not free: about 45 ms of CPU for the Python reference client and
    110 ms for the Node.js one, as much as grading 40 or 100 of their cases.  With a
    process per check, a default run spent a third of its CPU (Node.js) starting clients.
    While sharing is on (:func:`shared_sessions`, and in every ``-j`` worker), the checks
    of a run take turns on one client process; it is restarted only after a crash or a
    timeout, as within a check.  ``R3.no-loud-warning`` gets a process no check has used
    (which the checks after it go on sharing): a client that warns once per process would
    otherwise pass or fail it by what earlier checks made it write, and its verdict would
    move with the checks run before it in a worker (``--only``, ``-j``, ``--shard``).  A run
    grades it first (:func:`grading_order`), so that is the run's first process; graded
    after another check, it starts a fresh one.  It counts the stderr lines the process
    writes after its own baseline case, every line, not only the capped part of stderr
    kept.  (It had a process of its own, and the shared one was stopped and started again
    around it: two more client starts a run than now.)
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
    was = _SharedSession.on
    _SharedSession.on = True
    try:
        yield
    finally:
        _SharedSession.on = was
        _SharedSession.close()


class CaseRunner:
    """Runs cases for one check in one worker, reusing a persistent client if asked."""

    def __init__(self, config: SuiteConfig, check: Check) -> None:
        self.config = config
        self.check = check
        persistent = config.client.mode == "persistent" and config.client.function is None
        shared = _SharedSession.for_check(config.client, check) if persistent else None
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
        fail-fast stops the check at its first timeout, see :class:`_Pace`.)
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
        client = self.config.client
        if case.kind == "scenario":
            with staged(case.scenario, case.stream, base_env=client.environment()) as stage:
                obs = run_once(client, b"", Feed("none", stage.env))
                try:
                    obs.invocations = stage.invocations()
                except OSError as exc:  # a FIFO, device or link planted as the log
                    if obs.ok:
                        obs.status = "crash"
                        obs.detail = f"the fake stella's invocation log: {getattr(exc, 'why', exc)}"
            return obs
        if case.kind == "envelope":
            feed = Feed("document", {COMMAND_ENV: case.command})
        elif case.kind == "journal":
            feed = Feed("document")
        elif self.check.profile == "recorder":
            feed = Feed(record=True)
        else:
            feed = LINES
        obs = self._stream(case.stream, feed)
        twin = paired_stream(self.check, case)
        if twin is not None and obs.ok:
            obs.paired = self._stream(twin, feed)
        return obs

    def _stream(self, stream: bytes, feed: Feed) -> Observation:
        if self.session is not None:
            return self.session.run(stream, feed)
        return run_once(self.config.client, stream, feed)

    def close(self) -> None:
        if self.session is not None and self.owns_session:
            self.session.close()


def paired_stream(check: Check, case: GradedCase) -> bytes | None:
    """The stream a self-comparing check also feeds the client, or ``None``.

    ``R6.unterminated-last-line-read`` compares the client's reading of a stream whose last
    line lacks its newline with its reading of the same bytes plus ``\\n``;
    ``R6.torn-line-adds-nothing`` compares a stream ending on a torn line with the same
    stream without it.  Any other flaw reads both the same, so only this one fails.
    """
    if case.kind != "stream":
        return None
    if check.judge == "last-line-content":
        return None if case.stream.endswith(b"\n") else case.stream + b"\n"
    if check.judge == "legacy-content":
        return self_describing(case)
    if check.judge == "torn-adds-nothing":
        torn = [o.line for o in case.outcomes if o.kind is Kind.TORN]
        if not torn:
            return None
        return b"".join(line + b"\n" for line in case.stream.split(b"\n")[: torn[0] - 1])
    return None


def self_describing(case: GradedCase) -> bytes | None:
    """The case's stream with every legacy field spelling of a known event replaced by its
    self-describing name (the legacy field dropped where both are present), or ``None``
    when it has none: what ``R4.legacy-spelling-fits`` compares a client's reading with.

    Nothing else of a line may change, or the pair differs for another reason than the
    spelling: the line is written back compact and in UTF-8 as stella writes it (a lone
    surrogate as an escape, never as invalid UTF-8; an escaped U+2028, U+2029 or U+0085,
    a line end to some readers, stays an escape), keeps its own terminator (a CRLF line
    stays one) and its keys' order (the self-describing name where the legacy one stood).
    A line whose value JSON cannot write back as it was read (``1e400`` read as infinity;
    ``-0`` in an integer field, read as 0, written back without the registered point
    ``negative-zero`` that a client may reject the line for) leaves the case unpaired
    (``None``).
    """
    import json

    from stella_conform.generators.grammar import scan

    vocab = case.vocab or Vocabulary.default()
    lines = case.stream.split(b"\n")
    changed = False
    for outcome in case.outcomes:
        raw = outcome.raw
        if outcome.kind is not Kind.KNOWN or not isinstance(raw, dict):
            continue
        alias = vocab.home(str(outcome.tag)).aliases.get(str(outcome.tag))
        if alias is None or alias.legacy not in raw:
            continue
        if alias.field in raw:  # both: the field's value is the one read
            plain = {k: v for k, v in raw.items() if k != alias.legacy}
        else:
            plain = {(alias.field if k == alias.legacy else k): v for k, v in raw.items()}
        if _has_non_finite(plain):
            return None
        old = lines[outcome.line - 1]
        if "num.negative-zero-integer" in scan(old + b"\n", "stream"):
            return None
        try:  # compact and in UTF-8, as stella writes; a lone surrogate as an escape
            text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
            for char in _LINE_ENDS_TO_SOME:  # raw only where the line had it raw
                if char.encode() not in old:
                    text = text.replace(char, f"\\u{ord(char):04x}")
            written = text.encode()
        except UnicodeEncodeError:
            written = json.dumps(plain, separators=(",", ":")).encode()
        lines[outcome.line - 1] = written + (b"\r" if old.endswith(b"\r") else b"")
        changed = True
    return b"\n".join(lines) if changed else None


#: Characters JSON writes raw in a string that some readers end a line at (U+2028 for
#: ``str.splitlines``): an escape of one stays an escape in the paired stream.
_LINE_ENDS_TO_SOME = ("\u2028", "\u2029", "\x85")


def _has_non_finite(value: Any) -> bool:
    """Whether a decoded value holds a float JSON cannot write (a number beyond f64)."""
    import math

    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def fixture_path(check: Check, name: str, directory: Path) -> Path:
    """Where a check's named fixture lives: streams at the top, the others in subfolders."""
    if check.input == "envelope":
        return directory / "envelopes" / f"{name}.json"
    if check.input == "scenario":
        return directory / "scenarios" / f"{name}{SCENARIO_SUFFIX}"
    if check.input == "journal":
        return directory / "trace" / f"{name}.jsonl"
    return directory / f"{name}.jsonl"


def load_case(
    path: Path, vocab: Vocabulary | None = None, *, data: bytes | None = None
) -> GradedCase:
    """A fixture file of any kind (stream, envelope, scenario) as a case, validated.

    The case file is read once (its expectation file beside it once too); ``data`` is its
    bytes where the caller has read them already (``replay``, through the safe reader,
    refusing a link): then the file is not read again, so what is graded is what was
    checked, never a file swapped in between."""
    if path.name.endswith(SCENARIO_SUFFIX):
        scenario = read_scenario(path, data)
        name = scenario.name
        return GradedCase(
            name, scenario.stream, "fixture", vocab=vocab, kind="scenario",
            scenario=dict(scenario.scenario),
        )  # fmt: skip
    if path.suffix == ".json":
        envelope = read_envelope_fixture(path)
        return GradedCase(
            envelope.name, envelope.data if data is None else data, "fixture", vocab=vocab,
            kind="envelope", command=envelope.command,
        )  # fmt: skip
    fixture = _read_jsonl_fixture(path)  # validates the expectation too
    if isinstance(fixture, TraceFixture):
        journal = fixture.data if data is None else data
        return GradedCase(fixture.name, journal, "fixture", vocab=vocab, kind="journal")
    stream = fixture.stream if data is None else data
    # also_conforming is the oracle's to compute (tests/oracle/test_fixture_corpus.py holds the
    # file to it), so a fixture cannot widen what passes
    decoded, touched = _careful_reading(stream, vocab)
    return GradedCase(
        fixture.name, stream, "fixture", vocab=vocab, decoded=decoded, touched=touched
    )


def _read_jsonl_fixture(path: Path) -> Any:
    """:func:`read_jsonl_fixture`, once per file and version: every check of a run loads
    its fixtures, the same few dozen files, each validated against the expectation schema
    (a millisecond a file) and decoded carefully, once per check."""
    try:
        st = path.stat()
    except OSError:
        return read_jsonl_fixture(path)  # says what is wrong with it
    return _fixture_file(str(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _fixture_file(path: str, inode: int, size: int, mtime_ns: int) -> Any:
    return read_jsonl_fixture(Path(path))


def _careful_reading(
    stream: bytes, vocab: Vocabulary | None
) -> tuple[Decoded | None, frozenset[str] | None]:
    """The oracle's careful reading of a fixture's stream, once per stream and vocabulary."""
    # recognized, not known: a claimed type this stella never writes (complete) is read
    # as the stella that wrote it defined it, where a fixture holds one
    key = (vocab.ident, vocab.recognized) if vocab is not None else None
    found = _CAREFUL_READINGS.get((stream, key))
    if found is None:
        decoded, touched = careful_default(stream, vocab)
        found = (decoded, frozenset(touched))
        if len(_CAREFUL_READINGS) >= 256:
            _CAREFUL_READINGS.clear()
        _CAREFUL_READINGS[(stream, key)] = found
    return found


#: Fixture streams' careful readings, by stream and vocabulary (see _careful_reading).
_CAREFUL_READINGS: dict[tuple[bytes, Any], tuple[Decoded, frozenset[str]]] = {}


def _fixture_case(
    check: Check, name: str, vocab: Vocabulary, directory: Path, claims: Claims | None = None
) -> GradedCase:
    case = load_case(fixture_path(check, name, directory), vocab)
    if claims is not None:
        case.reads = claims.reads
    return case


def _claimed(case: GradedCase, claims: Claims) -> bool:
    """Whether the case is of a kind the client claims to read (envelope shapes)."""
    if case.kind != "envelope" or claims.reads is None:
        return True
    return claims.reads_parts(envelope_parts(case.stream, case.command))


def _save_failure(
    config: SuiteConfig, check: Check, case: GradedCase, failure: CaseFailure
) -> CaseFailure:
    """Save a failing case in the fixture format into ``failure``: its path, the replay
    command, and the files written for it (which :func:`keep_bounded` may remove again,
    the only way a case is saved: every caller's failures are bounded alike); no path and
    no replay when it cannot be written (the failure is still reported, with a warning: a
    full disk, or a client that swapped the failures folder for a link)."""
    failure.saved, failure.replay, failure.written = _saved(config, check, case)
    return failure


def _saved(
    config: SuiteConfig, check: Check, case: GradedCase
) -> tuple[str | None, str | None, tuple[str, ...]]:
    try:
        return _write_case(config, check, case)
    except OSError as exc:
        import sys

        said = str(exc) if getattr(exc, "why", None) else (exc.strerror or str(exc))
        print(f"stella-conform: warning: a failing case of {check.id} was not saved: {said}",
              file=sys.stderr)  # fmt: skip
        return None, None, ()


def _write_case(
    config: SuiteConfig, check: Check, case: GradedCase
) -> tuple[str, str | None, tuple[str, ...]]:
    """Write the case: (its path, the replay command, the files this wrote that were not
    there before)."""
    digest = hashlib.sha256(case.stream + case.command.encode() + repr(case.scenario).encode())
    name = f"{check.id}-{digest.hexdigest()[:10]}"
    directory = config.failures_dir
    description = f"counterexample for {check.id} ({check.name})"
    if case.kind == "scenario":
        files = [directory / f"{name}{SCENARIO_SUFFIX}"]
    else:
        suffix = ".json" if case.kind == "envelope" else ".jsonl"
        files = [directory / f"{name}{suffix}", directory / f"{name}{EXPECT_SUFFIX}"]
    fresh = tuple(str(f) for f in files if not os.path.lexists(f))
    if _written is not None:
        _written.extend(fresh)  # before they are: a stop may come while they are written
    if case.kind == "envelope":
        reading = case.envelope.to_json()
        expect = {"description": description, "command": case.command, **reading}
        path = str(write_envelope_fixture(directory, name, case.stream, expect))
    elif case.kind == "scenario":
        scenario = {"description": description, **case.scenario, "expect": case.wrapper}
        path = str(write_scenario(directory, name, scenario, case.stream))
    elif case.kind == "journal":
        path = str(write_trace_fixture(directory, name, case.stream, description))
    else:
        expect = expectation_from(
            case.expected,
            rules=[check.rule],
            mutations=case.mutations,
            description=description,
            seed=config.seed,
            also_conforming=also_conforming(case.readings),
        )
        write_fixture(directory, name, case.stream, expect)
        path = str(directory / f"{name}.jsonl")
    path = portable_path(path)  # relative to the working folder when inside it
    return path, replay_command(path, config.client, check, config), fresh


_NUMBERS = re.compile(r"\d+")
_QUOTES = re.compile(r"'[^']*'|\"[^\"]*\"")


def without_particulars(text: str) -> str:
    """``text`` with a case's particulars (its numbers, its quoted values) replaced: what
    is left tells one bug from another, in a run's failures and in fuzz's finds alike."""
    return _NUMBERS.sub("N", _QUOTES.sub("…", text))


def distinct_failure(failure: CaseFailure) -> tuple[str, str]:
    """What tells a check's failures apart: the client's reaction (the verdict and the
    judge's words, their numbers and quoted values aside, as fuzz tells its finds apart).
    Two failures alike are one bug shown twice; two unlike are two, each replayed by its
    own case."""
    return failure.verdict, without_particulars(failure.message)


def keep_bounded(failures: Sequence[CaseFailure]) -> None:
    """A check's failures as saved: the smallest generated case of each distinct failure
    (:func:`distinct_failure`) whole, with its own replay line; any other case of that
    failure that this run wrote and that is larger than :data:`SAVED_WHOLE` removed from
    the failures folder again, and listed as not saved, by its size and sha256, its replay
    line the smallest one's of its kind (a fixture's, where none was generated).  A check
    lists a bounded number of distinct failures (:data:`FAILURES_KEPT`; fuzz's
    ``FAILURES_PER_CHECK`` beside them), so what a failing client did costs the folder
    that many whole cases and a bounded part of the rest, by ``run``, ``fuzz``, the matrix
    and the pytest plugin alike; in any order the failures come."""
    kinds: dict[tuple[str, str], list[CaseFailure]] = {}
    for failure in failures:
        kinds.setdefault(distinct_failure(failure), []).append(failure)
    for alike in kinds.values():
        saved = [f for f in alike if f.source != "fixture" and f.saved is not None]
        smallest = min(saved, key=lambda f: (f.size, f.stream or b"")) if saved else alike[0]
        for failure in alike:
            if failure is smallest or failure.source == "fixture":
                continue
            if failure.saved is not None and failure.saved == smallest.saved:
                continue  # the same case, listed twice (by fuzz and by its final pass)
            if failure.not_saved is None:  # (one bounded before, by fuzz's final pass: re-pointed)
                if failure.size <= SAVED_WHOLE or not failure.written:
                    continue
                for path in failure.written:
                    with contextlib.suppress(OSError):
                        remove_written(Path(path))
                failure.written = ()
                failure.saved = None
            failure.not_saved = (
                f"{failure.size} bytes, over {SAVED_WHOLE // 1024} KiB: only the smallest "
                f"generated case of this failure is saved whole; the replay line replays it "
                f"({smallest.saved})"
            )
            failure.replay = smallest.replay


def _failure(case: GradedCase, j: Judgment, obs: Observation) -> CaseFailure:
    # What the client wrote is kept only within limits: a 4 MB preview or a summary nested
    # a thousand deep would otherwise be copied into every report (docs/reliability.md).
    return CaseFailure(
        case=case.name,
        source=case.source,
        message=clip(no_surrogates(j.message), MESSAGE_CAP),
        expected=expected_text(case),
        observed=json_safe(obs.to_json()),
        mutations=case.mutations,
        stream=case.stream if len(case.stream) <= STREAM_KEPT else None,
        decisive=decisive_lines(case, obs, j.message),
        verdict=j.verdict,
        size=len(case.stream),
        cause=clip(no_surrogates(obs.cause), MESSAGE_CAP) if obs.cause else None,
        sha256=hashlib.sha256(case.stream).hexdigest(),
    )


def _stopped(obs: Observation, reason: str) -> Judgment:
    """The judgment that ends a check the client never answered: its own crash, or an error."""
    return Judgment("crash" if obs.status == "crash" else "error", reason)


def smallest_first(failures: list[CaseFailure], outcome: str) -> list[CaseFailure]:
    """Each distinct failing case once, those of the check's outcome first, smallest first
    (the first is shown in full; the others one line each)."""
    seen: set[tuple[Any, ...]] = set()
    distinct = []
    for f in failures:
        key = (f.size, f.stream) if f.stream is not None else (f.size, f.case, f.saved)
        if key not in seen:
            seen.add(key)
            distinct.append(f)
    wanted = "fail" if outcome in ("fail", "warn") else outcome
    return sorted(distinct, key=lambda f: (f.verdict != wanted, f.size))


#: Crashes (or protocol errors) in a row, before any answer, that stop a check.
FAIL_FAST_CRASHES = 3


class _ShrinkBudgetSpent(BaseException):
    """Ends shrinking when the budget of client runs is spent (a ``BaseException`` for the
    same reason as :class:`_StopCheck`); the last failure found is the result."""


class _StopCheck(BaseException):
    """Ends a check at once, from inside the Hypothesis property too.

    A ``BaseException``: Hypothesis treats an ``Exception`` as a failure to shrink,
    and there is nothing to shrink in "the client never answers" or "time is up".
    """


@dataclass
class _Pace:
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


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Keep the objects alive before a check out of the garbage collector's full passes.

    A check allocates fast (every example's draws, events and decoded lines), so the
    collector runs its full pass, over every object of the process (the imports, the
    vocabulary, Hypothesis's strategies and caches), about twice per check: 40 ms each,
    5 % of a reader run's CPU. Frozen, those objects are skipped until the check ends,
    when they go back to the collector (nothing stays uncollectable). A caller that froze
    the heap itself keeps its own freeze.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        # The check's own garbage (Hypothesis's examples and their cycles) is collected
        # while the heap is still frozen, so the pass visits only what the check made:
        # unfrozen, it would join the oldest generation, whose full passes are rare, and
        # a run would keep every check's garbage (about 8,000 objects a check).
        gc.collect()
        gc.unfreeze()


#: Why an in-process parser read as ``read(lines)`` skips the checks of line observations
#: (it has no mode to change: its signature decides).
IN_PROCESS_SKIP = (
    "needs line observations: the in-process parser takes no report argument "
    "(read(lines, report) reports each line; docs/pytest-plugin.md)"
)


def run_check(check: Check, config: SuiteConfig) -> CheckResult:
    """Grade one check (called in a worker process, or inline for ``-j 1``).

    A stop (Ctrl-C, SIGTERM) mid-check bounds what the check had saved as a finished one
    does (:func:`keep_bounded`), inline or in a worker: its report lists no such check,
    but the folder, uploaded whatever happened, must not keep every large case it wrote."""
    global _written
    result = CheckResult(check.id, check.name, check.rule, check.tier, "skip", "")
    before, _written = _written, []
    written = _written
    try:
        with _heap_frozen(), stopping.on_worker_stop(lambda: _bounded(result, written)):
            return _run_check(check, config, result)
    except stopping.Stopped:
        _bounded(result, written)
        raise
    finally:
        _written = before


#: The files the check being graded wrote to the failures folder (:func:`run_check`).
_written: list[str] | None = None


def _bounded(result: CheckResult, written: list[str]) -> None:
    """A stopped check's failures folder as a finished check leaves it: its failures
    bounded, and any file it wrote that no failure of it names (a case saved the moment
    the stop came, before it was listed) removed."""
    keep_bounded(result.failures)
    kept = {path for f in result.failures if f.saved is not None for path in f.written}
    for path in written:
        if path not in kept:
            with contextlib.suppress(OSError):
                remove_written(Path(path))


def _run_check(check: Check, config: SuiteConfig, result: CheckResult) -> CheckResult:
    started = time.monotonic()
    vocab = config.vocabulary()
    if not check.grades_in(config.client.mode):
        result.message = (
            IN_PROCESS_SKIP
            if config.client.function is not None
            else check.skip_reason(config.client.mode)
        )
        return result
    unmet = config.claims.unmet(check, vocab, config.client.mode)
    if unmet is not None:
        # not a skip: the client computes what it cannot know. Graded as if it knew the
        # types, so the failure comes with the cases it gets wrong (and replays as such).
        config = config.with_claims(config.claims.knowing(unmet[1]))
        vocab = config.vocabulary()
    not_claimed = config.claims.skip_reason(check, vocab)
    if not_claimed is not None:
        result.message = not_claimed
        return result
    if config.client.function is not None and check.input != "stream":
        result.message = f"an in-process client cannot be graded on the {check.profile} profile"
        return result
    pace = _Pace(config)
    if pace.out_of_time():
        result.outcome = "error"
        result.cut_short = True
        result.message = (
            f"not graded: the {config.budget_option} of {config.time_budget:g} s ran out "
            "before it started"
        )
        return result
    runner = CaseRunner(config, check)
    judgments: list[Judgment] = []
    try:
        claims = config.claims
        ctx = Context(computes=claims.computes, summary_only=claims.summary_only)
        fixtures_dir = config.fixtures_dir or bundled_fixtures_dir()
        stopped = False
        if check.judge == "quiet":
            baseline = runner.run(_fixture_case(check, "minimal_run", vocab, fixtures_dir))
            ctx.baseline_stderr_lines = baseline.stderr_lines
            stop = pace.stop_message(baseline)
            if stop is not None:
                judgments.append(_stopped(baseline, stop))
                stopped = True
        for name in () if stopped else check.fixtures_for(bool(vocab.learnt)):
            if config.fixtures_per_check is not None and result.cases >= config.fixtures_per_check:
                break
            if pace.out_of_time():
                judgments.append(Judgment("error", pace.budget_message()))
                stopped = True
                break
            case = _fixture_case(check, name, vocab, fixtures_dir, claims)
            if not _claimed(case, claims):
                continue
            obs = runner.run(case)
            j = judge(check, case, obs, ctx)
            stop = pace.stop_message(obs)
            if stop is not None:
                j = _stopped(obs, stop)
            judgments.append(j)
            result.cases += 1
            if j.verdict in ("fail", "crash", "error"):
                result.failed_cases += 1
            if j.verdict in ("fail", "crash", "error") and (
                len(result.failures) < FAILURES_KEPT or stop
            ):
                failure = _failure(case, j, obs)
                path = fixture_path(check, name, fixtures_dir)
                failure.saved = fixture_name(path) or str(path)  # fixture:NAME, where bundled
                failure.replay = replay_command(failure.saved, config.client, check, config)
                result.failures.insert(0 if stop else len(result.failures), failure)
            if stop is not None:
                stopped = True
                break
        if not stopped and (check.mutations or check.valid_runs) and config.examples > 0:
            judgments.extend(_generated(check, config, vocab, runner, ctx, result, pace))
    finally:
        runner.close()
    result.outcome, result.message = combine(check, judgments)
    if not judgments and not_drawable(check, vocab):
        result.message = not_drawable(check, vocab) or ""
    if unmet is not None and result.outcome not in ("crash", "error"):  # whatever the cases say
        result.outcome = check.failing_outcome
        result.message = unmet[0] + (f"; {result.message}" if result.failures else "")
    for j in judgments:
        for point, reading in j.readings.items():
            label = f"{point}={reading}"
            result.readings[label] = result.readings.get(label, 0) + 1
    result.message = clip(no_surrogates(result.message), MESSAGE_CAP)
    kept = len(result.failures)
    result.failures = smallest_first(result.failures, result.outcome)
    result.failed_cases -= kept - len(result.failures)  # the same case twice is one
    keep_bounded(result.failures)
    if result.outcome in ("crash", "error") and pace.reason is not None:
        result.message = clip(no_surrogates(pace.reason), MESSAGE_CAP)
    elif result.outcome in ("fail", "warn", "crash", "error") and result.failures:
        # the smallest case, shown first (after the claim that makes it a failure, if any)
        result.message = (f"{unmet[0]}; " if unmet else "") + result.failures[0].message
    result.seconds = time.monotonic() - started
    result.cut_short = pace.ran_out
    return result


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


GeneratedCase = Case | EnvelopeCase | ScenarioCase | JournalCase


def check_strategy(
    check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
) -> SearchStrategy[GeneratedCase] | None:
    """The generated cases a check grades: only its own mutations (or valid runs).

    A stream case's run is generated, or one of ``recordings`` (real streams, whose
    events the mutations then change).  None when none of its mutations can be made
    with the types the client knows.
    """
    mutations = tuple(m for m in check.mutations if applicable(m, vocab))
    if check.input == "envelope":
        return envelope_cases(vocab, variants=check.mutations)
    if check.input == "scenario":
        return scenario_cases(vocab, kinds=check.mutations)
    if check.input == "journal":
        return journal_cases(variants=check.mutations)
    base = None
    if recordings:
        from stella_conform.conformance.store.recordings import recorded_or_generated, tolerant

        base = recorded_or_generated(vocab, recordings)
    if mutations and check.valid_runs:
        strategy = cases(vocab, mutations=mutations, max_mutations=2, run_strategy=base)
    elif mutations:
        strategy = cases(vocab, mutations=mutations, min_mutations=1, run_strategy=base)
    elif check.valid_runs:
        return cases(vocab, max_mutations=0, run_strategy=base)
    else:
        return None
    # a mutation that does not fit a recording's events skips that case, not the kit
    return tolerant(strategy) if base is not None else strategy


#: Runs of at least this many examples (the default) grade every check's strata too.
STRATA_FROM_EXAMPLES = 25


def check_stratum_list(check: Check, vocab: Vocabulary) -> Iterator[Stratum]:
    """The strata a check grades in every run before its random ones (:mod:`strata`):
    the simplest case of each of its mutations (and of each option a mutation's strata
    list), so no rare option is graded on some seeds only.  Not drawn yet: each is drawn
    when graded, and dropped after."""
    from stella_conform.generators import strata

    if check.input == "envelope":
        return strata.envelope_stratum_list(vocab, check.mutations)
    if check.input == "journal":
        return strata.journal_stratum_list(check.mutations)
    if check.input != "stream":
        return iter(())
    return strata.stream_stratum_list(vocab, check.mutations)


def check_strata(check: Check, vocab: Vocabulary) -> list[GeneratedCase]:
    """The cases of :func:`check_stratum_list`, drawn (all at once: for tests and audits)."""
    found = (stratum.draw() for stratum in check_stratum_list(check, vocab))
    return [got.case for got in found if got is not None]


def not_drawable(check: Check, vocab: Vocabulary) -> str | None:
    """Why a check's generated cases cannot be made for this client (``None``: they can).

    Each mutation says whether it can be made with the types the client knows
    (:func:`~stella_conform.generators.mutations.applicable`); a check none of whose
    mutations can, and that grades no valid runs, has nothing to draw under the claims.
    """
    if check.input != "stream" or check_strategy(check, vocab) is not None:
        return None
    if not check.mutations:
        return None
    return (
        "no case of this check can be made with the types the client knows "
        f"({', '.join(sorted(vocab.known)) or 'none'}): its mutations "
        f"({', '.join(check.mutations)}) each need another"
    )


def graded_case(
    case: GeneratedCase, vocab: Vocabulary, reads: frozenset[str] | None = None
) -> GradedCase:
    """A generated case as the grader sees it (``reads``: the envelope parts claimed)."""
    if isinstance(case, EnvelopeCase):
        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab,
            kind="envelope", command=case.command, reads=reads,
        )  # fmt: skip
    if isinstance(case, JournalCase):
        return GradedCase(
            "generated", case.data, "generated", (case.variant,), vocab=vocab, kind="journal"
        )
    if isinstance(case, ScenarioCase):
        return GradedCase(
            "generated", case.stream, "generated", (case.kind,), vocab=vocab,
            kind="scenario", scenario=dict(case.scenario),
        )  # fmt: skip
    marked = sorted({n for m in case.mutations for n in case.marks.get(m, ())})
    recording = case.run.recording if case.run is not None else None
    return GradedCase(
        f"recording {recording}" if recording else "generated",
        case.stream, "generated", case.mutations, vocab=vocab,
        decoded=case.decoded, touched=case.touched, marked=tuple(marked),
    )  # fmt: skip


def example_database(config: SuiteConfig) -> ExampleDatabase | None:
    """The example database a run (and a fuzz session) reads and writes, if any."""
    database: ExampleDatabase | None = config.database
    if database is None and config.database_dir is not None:
        database = DirectoryBasedExampleDatabase(str(config.database_dir))
    return database


#: Hypothesis's phases for a check's random examples, and for shrinking a case drawn
#: outside them (:func:`shrink_drawn`: it is replayed from the database, then shrunk).
GENERATING = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
SHRINKING = (Phase.reuse, Phase.shrink)


def check_property(
    check: Check,
    config: SuiteConfig,
    strategy: SearchStrategy[GeneratedCase],
    body: Callable[[GeneratedCase], None],
    *,
    phases: Sequence[Phase] = GENERATING,
    database: ExampleDatabase | bool | None = True,
) -> Any:
    """The Hypothesis property a check's generated cases run under.

    ``run`` and ``fuzz`` both build their property here, so they share its example
    database key: a failure ``fuzz`` saves is the first thing the next ``run`` replays.
    ``database``: ``True`` for the run's own (:func:`example_database`), or the one given.
    """

    @hypothesis_seed(check_seed(config.seed, check.id))
    @settings(
        max_examples=max(1, config.examples),
        deadline=None,
        derandomize=False,
        phases=list(phases),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(strategy)
    def property_(case: GeneratedCase) -> None:
        body(case)

    # @seed switches the example database off; the kit wants both, a reproducible draw
    # and the failures of earlier runs (and fuzz sessions) replayed first.
    property_._hypothesis_internal_use_settings = settings(  # type: ignore[attr-defined]
        property_._hypothesis_internal_use_settings,  # type: ignore[attr-defined]
        database=example_database(config) if database is True else database or None,
    )
    # A stable database key per (check, client) so a failure replays first next run.
    fn = getattr(config.client.function, "read", config.client.function)  # inprocess.Parser
    who = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else shlex.join(config.client.argv)
    name = f"{check.id}|{who}|{config.client.mode}"
    if config.recordings and check.input == "stream":
        from stella_conform.conformance.store.recordings import digest

        name += f"|recordings {digest(config.recordings)}"  # their cases' own keys
    key = name.encode()
    property_.hypothesis.inner_test._hypothesis_internal_add_digest = key  # type: ignore[attr-defined]
    return property_


def random_examples(
    check: Check, config: SuiteConfig, strategy: SearchStrategy[GeneratedCase]
) -> Iterator[tuple[GeneratedCase, tuple[ChoiceT, ...]]]:
    """The random examples a run grades for a check (after its strata and a budget of what
    the example database holds for it: :func:`held_entries`): ``config.examples`` of them,
    drawn by the kit itself (:func:`drawing.drawn`, seeded by the run's seed and the
    check), each with the choices Hypothesis replays (and shrinks) if the client fails it."""
    for one in drawn(strategy, check_seed(config.seed, check.id), config.examples):
        yield one.case, one.choices


#: Where a failure found and not shrunk is kept, by ``run`` (``--max-shrinks 0``, a
#: timeout) and by ``fuzz`` alike: Hypothesis's secondary corpus, which it replays and
#: then shrinks (a primary entry it takes for a case it shrank before: one that replays
#: exactly is not shrunk again).  What a shrink passed over is kept there too.
UNSHRUNK = b".secondary"
#: The sub-keys of a check's key whose entries a run replays before drawing anything: the
#: shrunk failures (the key itself), :data:`UNSHRUNK`, and Hypothesis's pareto front
#: (which the kit does not write; an entry found there is replayed like the others).
HELD_SUB_KEYS = (b"", UNSHRUNK, b".pareto")


def database_key(check: Check, config: SuiteConfig) -> bytes:
    """The example-database key under which ``run`` keeps (and replays) a check's failures."""
    from hypothesis.internal.reflection import function_digest
    from hypothesis.strategies import nothing

    prop = check_property(check, config, nothing(), lambda case: None)
    return bytes(function_digest(prop.hypothesis.inner_test))


class HandedOver(ExampleDatabase):
    """The example database of a shrink (:func:`shrink_drawn`): Hypothesis reads from it
    one case drawn outside its engine, as the check's *secondary* entry, and nothing
    else; what it writes (the shrunk case, the ones it passed over) goes to the run's own
    database (``kept``).

    Secondary, not primary: Hypothesis replays its primary entries as cases it shrank
    before, and does not shrink one that replays exactly.  Nothing else read: the run
    has replayed what ``kept`` holds for the check (:func:`held_entries`: every primary
    entry) before it hands a case over, and those still held passed (a read-only
    database keeps them).  Read through, Hypothesis's reuse phase graded each primary
    one again before the handed-over case, and with as many as the run's examples
    (its reuse phase's size when it does not generate) never reached it: the failure
    was reported as "not deterministic".  With no ``kept`` database nothing is kept (a
    stratum's choices replay only under its own strategy, not the check's, so the
    check's key must not hold them).
    """

    def __init__(self, key: bytes, choices: Sequence[Any], kept: ExampleDatabase | None) -> None:
        super().__init__()
        self.secondary = key + b".secondary"
        self.entry = choices_to_bytes(choices)
        self.kept = kept

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return [self.entry] if key == self.secondary else []

    def save(self, key: bytes, value: bytes) -> None:
        if self.kept is not None:
            self.kept.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        if self.kept is not None and not (key == self.secondary and value == self.entry):
            self.kept.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if self.kept is not None:
            self.kept.move(src, dest, value)


def shrink_drawn(
    check: Check,
    config: SuiteConfig,
    strategy: SearchStrategy[GeneratedCase],
    body: Callable[[GeneratedCase], None],
    choices: Sequence[Any],
    *,
    kept: ExampleDatabase | None,
) -> None:
    """Hand a failing case drawn outside Hypothesis's engine (its choice sequence for
    ``strategy``) to Hypothesis to shrink: replayed first, then shrunk, ``body`` judging
    each candidate as it judges every case; the failure Hypothesis ends with raises from
    here as any property's does.  The one way the kit hands a drawn case over (a failing
    stratum: :func:`_generated`)."""
    key = database_key(check, config)
    database = HandedOver(key, choices, kept)
    check_property(check, config, strategy, body, phases=SHRINKING, database=database)()


@dataclass(frozen=True)
class HeldEntry:
    """One entry an example database holds for a check: its bytes, its choices, and the
    sub-keys (:data:`HELD_SUB_KEYS`) it is under."""

    value: bytes
    choices: tuple[ChoiceT, ...]
    subs: tuple[bytes, ...]

    @property
    def primary(self) -> bool:
        """Under the key itself: a failure Hypothesis shrank (or an older kit's unshrunk one)."""
        return b"" in self.subs


def held_budget(examples: int) -> int:
    """How many of the entries an example database holds for a check a run replays, the
    shrunk ones aside (each of those is replayed, as Hypothesis's reuse phase does: each
    is a flaw seen, and few): ``max(2, ⌈examples / 10⌉)``, the size of Hypothesis's reuse
    phase in a run that also generates (``desired_size`` in its engine).  A bound, because
    where a passing entry cannot be dropped (a read-only artifact; a shared Redis, which
    keeps what other machines' clients may still fail) every run meets the same entries
    again, up to
    :data:`~stella_conform.conformance.store.database.KEY_ENTRIES_CAP` under each sub-key: a
    fleet or a CI restoring an old artifact would grade its whole backlog each run."""
    return max(2, math.ceil(0.1 * max(1, examples)))


def held_entries(database: ExampleDatabase, check: Check, config: SuiteConfig) -> list[HeldEntry]:
    """The entries of ``database`` a run replays for ``check``, as Hypothesis's reuse
    phase chooses them: every primary one (failures shrunk, each a flaw seen: a budget
    here would leave a still-failing flaw unreplayed behind fixed ones), smallest first;
    then, if :func:`held_budget` is not spent, a sample of the
    others (:data:`UNSHRUNK`: failures not shrunk, what a shrink passed over; the pareto
    front) drawn with the check's seed, smallest first.  Those left out stay where they
    are, for a run with a budget to spare (the held ones that pass are dropped where they
    may be: :class:`_Dropping`) or another seed.

    Entries are input (another run, machine or fuzz session wrote them): at most
    :data:`~stella_conform.conformance.store.database.KEY_ENTRIES_CAP` are read under a sub-key,
    and only those that are what the kit stores there (a choice sequence of at most
    :data:`~stella_conform.conformance.store.database.ENTRY_CAP` bytes) are replayed."""
    budget = held_budget(config.examples)
    key = database_key(check, config)
    found: dict[bytes, list[bytes]] = {}
    for sub in HELD_SUB_KEYS:
        for value in itertools.islice(database.fetch(key + sub), KEY_ENTRIES_CAP):
            if isinstance(value, bytes) and len(value) <= ENTRY_CAP:
                found.setdefault(value, []).append(sub)
    primary = sorted((v for v, subs in found.items() if b"" in subs), key=_shortlex)
    others = sorted(v for v, subs in found.items() if b"" not in subs)  # the server's order aside
    Random(check_seed(config.seed, check.id)).shuffle(others)
    entries: list[HeldEntry] = []
    for value in itertools.chain(primary, others):
        subs = found[value]
        if b"" not in subs and len(entries) >= budget:
            break
        choices = choices_from_bytes(value) if valid_entry(key + subs[0], value) else None
        if choices is not None:
            entries.append(HeldEntry(value, choices, tuple(subs)))
    return sorted(entries, key=lambda e: (not e.primary, *_shortlex(e.value)))


def _shortlex(value: bytes) -> tuple[int, bytes]:
    return len(value), value


def _writable(database: ExampleDatabase) -> list[ExampleDatabase]:
    """The parts of ``database`` a run drops a passing entry from: every one but a
    read-only one (a GitHub artifact)."""
    if isinstance(database, ReadOnlyDatabase | GitHubArtifactDatabase):
        return []
    if isinstance(database, MultiplexedDatabase):
        return [part for wrapped in database._wrapped for part in _writable(wrapped)]
    if isinstance(database, BackgroundWriteDatabase):
        return _writable(database._db)
    return [database]


class _Dropping:
    """Drops the held entries a client passes from every part of the database that is
    written (:func:`_writable`): the user's own directory, a shared Redis, a database the
    kit does not know; not a read-only one.  No more than Hypothesis's reuse phase would
    drop: the run replays every primary entry and the others up to :func:`held_budget`
    in all, as Hypothesis does, and drops each that passes."""

    def __init__(self, database: ExampleDatabase, key: bytes) -> None:
        self.written = _writable(database)
        self.key = key

    def drop(self, entry: HeldEntry) -> None:
        for database in self.written:
            for sub in entry.subs:
                database.delete(self.key + sub, entry.value)


def _generated(
    check: Check,
    config: SuiteConfig,
    vocab: Vocabulary,
    runner: CaseRunner,
    ctx: Context,
    result: CheckResult,
    pace: _Pace,
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
        if not _claimed(g, config.claims):
            return None  # a shape the client does not read: not a case for it
        obs = runner.run(g)
        ran["cases"] += 1
        j = judge(check, g, obs, ctx)
        stop = pace.stop_message(obs)
        if stop is not None:
            stopped.append((g, _stopped(obs, stop), obs))
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
            shown = _save_failure(config, check, g, _failure(g, j, obs))
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
        (:class:`_Dropping`), the first that fails is handed to Hypothesis and the ones
        after it are kept for later.  True when none failed: the run then grades the
        seed's own random examples, as on an empty database (or has graded them from the
        case cache), and keeps them there."""
        assert database is not None and strategy is not None
        dropping = _Dropping(database, database_key(check, config))
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
            failure = _save_failure(config, check, case, _failure(case, j, obs))
            result.failures.insert(0, failure)
            result.failed_cases += 1
            result.cases += ran["cases"]
            return [*judgments, j]
        if last_failure:  # out of time while shrinking: report the smallest failure so far
            case, j, obs = min(last_failure, key=lambda f: (len(f[0].stream), f[0].stream))
            failure = _save_failure(config, check, case, _failure(case, j, obs))
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
        failure = _save_failure(config, check, case, _failure(case, j, obs))
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


@dataclass
class Preflight:
    """The client's answer to a trivially valid stream, before any check runs."""

    observation: Observation
    replay: str | None

    @property
    def cannot_start(self) -> bool:
        """It ended without an answer (crash, no hello, a protocol error): nothing to grade."""
        return self.observation.status in ("crash", "protocol-error")

    @property
    def hangs(self) -> bool:
        return self.observation.status == "timeout"

    def message(self) -> str:
        from stella_conform.conformance.report.render import terminal_line

        obs = self.observation
        if self.cannot_start:
            head = (
                "the client cannot be graded: it does not answer a trivially valid stream "
                f"({obs.describe()})"
            )
        else:
            head = (
                "stella-conform: warning: the client did not answer a trivially valid stream "
                f"({obs.describe()}); each check stops at its first timeout"
            )
        lines = [head]
        tail = [line for line in obs.stderr_tail.splitlines() if line.strip()][-10:]
        if tail:
            lines.append("client stderr:")
            lines.extend(f"  {terminal_line(line)}" for line in tail)
        if self.replay:
            lines.append(f"replay: {self.replay}")
        return "\n".join(lines)


def preflight(checks: Sequence[Check], config: SuiteConfig) -> Preflight | None:
    """Run the client once on ``minimal_run.jsonl``, so one that cannot start says so once.

    Only for stream clients (a wrapper or an envelope reader is not fed streams); an
    in-process parser has no start-up to fail.  Without this, a missing script gave one
    "no hello" error per check and never showed the interpreter's own message.
    """
    mode = config.client.mode
    check = next((c for c in checks if c.grades_in(mode) and c.input == "stream"), None)
    if check is None or config.client.function is not None:
        return None
    fixtures_dir = config.fixtures_dir or bundled_fixtures_dir()
    case = _fixture_case(check, "minimal_run", config.vocabulary(), fixtures_dir)
    runner = CaseRunner(config, check)
    try:
        obs = runner.run(case)
    finally:
        runner.close()
    if obs.ok:
        return None
    path = str(fixture_path(check, "minimal_run", fixtures_dir))
    return Preflight(obs, replay_command(path, config.client, check, config))


ProgressFn = Callable[[int, int, CheckResult], None]


def grading_order(checks: Sequence[Check]) -> list[Check]:
    """The checks in the order a run grades them: the quiet ones first, the others as given.

    A quiet check (``R3.no-loud-warning``) wants a client process no earlier check has
    made write anything (:class:`_SharedSession`); graded first, it gets the run's first
    process fresh, and the checks after it go on sharing that one: one client start a
    run instead of two (110 ms of CPU for the Node.js reference client, a tenth of a warm
    run's).  Its verdict is the same either way.  Results and reports keep the catalogue
    order.
    """
    return sorted(checks, key=lambda check: check.judge != "quiet")


def run_suite(
    checks: Sequence[Check],
    config: SuiteConfig,
    *,
    jobs: int = 1,
    progress: ProgressFn | None = None,
) -> list[CheckResult]:
    """Grade every check; results in catalogue order (graded in :func:`grading_order`)."""
    results: dict[str, CheckResult] = {}
    total = len(checks)
    try:
        if jobs <= 1 or total <= 1:
            with shared_sessions():
                for check in grading_order(checks):
                    results[check.id] = run_check(check, config)
                    if progress:
                        progress(len(results), total, results[check.id])
        else:
            with worker_pool(jobs) as pool:
                futures = {
                    pool.submit(run_check, check, config): check for check in grading_order(checks)
                }
                for future, result in stopping.finished(futures):  # a lost worker: Stopped
                    check = futures[future]
                    results[check.id] = result
                    if progress:
                        progress(len(results), total, results[check.id])
    except stopping.Stopped as stop:
        stop.partial = [results[c.id] for c in checks if c.id in results]  # what was graded
        raise
    return [results[c.id] for c in checks]


def _before_fork() -> None:
    """Work every forked worker would otherwise repeat, done once in the parent.

    Hypothesis reads the constants of every module outside site-packages (the kit's own,
    in an editable install) on its first draw, caching them under ``.hypothesis/`` in the
    working directory: in a fresh directory that is 0.3 CPU-s per process.  Collected here,
    the workers inherit it.  An internal API: if it moves, workers simply pay it again.
    """
    with contextlib.suppress(Exception):
        from hypothesis.internal.conjecture.providers import _get_local_constants

        _get_local_constants()


def _worker_init() -> None:
    """A ``-j`` worker (:func:`stopping.worker_pool`): its checks share its client; the
    shared client is shut down when the worker exits (multiprocessing runs its finalizers)."""
    from multiprocessing import util

    _SharedSession.on = True
    _SharedSession.session = None  # a forked parent's client is not this worker's
    util.Finalize(None, _SharedSession.close, exitpriority=10)


@contextlib.contextmanager
def worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """The pool of ``-j`` workers that grade checks: :func:`stopping.worker_pool` (stopped
    at once by a stop signal; a worker killed from outside is a :class:`stopping.Stopped`
    too), each worker sharing its client between its checks."""
    stopping.supervise()
    _before_fork()
    with stopping.worker_pool(jobs, _worker_init) as pool:
        yield pool
