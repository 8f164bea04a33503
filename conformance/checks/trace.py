"""The trace profile: a harness's trace journal, read by a client and checked whole.

Two kinds of check belong here.  The ``J.*`` checks grade a client that reads
journals, as the reader profile grades a stream client: its verdict and counts
against the reference journal reader's.  The ``T.*`` checks (``trace check``) grade
a journal itself, for defects an outcome-graded benchmark cannot see.  Each ``T.*``
check is a pure function of the journal's recognized entries (and, for sequence
integrity, every entry): it returns an outcome (``pass``, ``fail``, or ``skip`` when
the journal holds nothing the check can see) and evidence naming the ``seq`` where
the journal broke the rule.  Facts that are not failures (a journal that ends
without ``session_end`` records a crash; calls a crash left open) are reported
beside the outcome.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stella_conform.conformance.checks.judging import JudgeFn, verdict_then_fields
from stella_conform.conformance.checks.model import Check, Context, Judgment
from stella_conform.conformance.checks.trace_keys import BATCH, MEMORY, Keys, KeyTable
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.safe_text import clip

TRACE: tuple[Check, ...] = (
    Check(
        "J.unknown-event-inert",
        "skips a journal event it does not recognize, and counts it",
        "trace",
        "journal",
        fixtures=("golden",),
        mutations=("unknown-event",),
        profile="trace",
        fields=("unrecognized_events",),
        why="The journal follows the stream's forward-compatibility rules: an unrecognized "
        "event tag is inert.",
    ),
    Check(
        "J.bad-body-rejected",
        "fails loudly on a recognized journal event whose envelope or body does not fit",
        "trace",
        "journal",
        fixtures=("reader_bad_body",),
        mutations=("bad-body",),
        strata=("journal-edge-values", "journal-bad-edge-values"),
        profile="trace",
        why="A recognized event with a body that does not fit is an error.",
    ),
    Check(
        "J.unknown-fields-ignored",
        "ignores fields it does not know on journal events",
        "trace",
        "journal",
        fixtures=("reader_unknown_fields",),
        mutations=("extra-fields",),
        profile="trace",
        fields=("known_events",),
        why="Unknown fields are ignored.",
    ),
    Check(
        "J.torn-final-line",
        "tolerates the torn last line of a crashed writer",
        "trace",
        "journal",
        fixtures=("reader_torn_tail",),
        mutations=("torn-tail",),
        profile="trace",
        fields=("known_events",),
        why="A journal is appended while the harness works; a crash leaves a partial last "
        "line, and everything before it is still the record.",
    ),
    Check(
        "J.corrupt-line-not-last",
        "rejects a corrupt journal line that is not the last",
        "trace",
        "journal",
        fixtures=("reader_corrupt_middle",),
        mutations=("corrupt-line",),
        profile="trace",
        why="Only the last line may be torn; a corrupt line in the middle is damage.",
    ),
)


def _journal(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    want = case.journal
    why = f" at line {want.rejected_line} ({want.reason})" if want.rejected_line else ""
    return verdict_then_fields(want.verdict, why, want.summary(), obs, ctx)


#: This profile's judges, by the name a check's ``judge`` gives.
JUDGES: dict[str, JudgeFn] = {
    "journal": _journal,
}


# ------------------------------------------------------------------ a whole journal

Entry = dict[str, Any]
Outcome = str  # "pass" | "fail" | "skip"

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass
class Evidence:
    seq: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "message": self.message}


@dataclass
class TraceResult:
    id: str
    name: str
    outcome: Outcome
    evidence: list[Evidence] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "outcome": self.outcome,
            "evidence": [e.to_json() for e in self.evidence],
            "facts": self.facts,
        }


def _seq(entry: Entry) -> int | None:
    seq = entry.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _identity(frame: Any) -> tuple[str, str, str]:
    return (str(frame["provider_id"]), str(frame["frame_id"]), str(frame["content_digest"]))


#: Characters of a journal's string (an id, a digest, a time) quoted in a message: a line
#: may be megabytes, and a thousand messages each quoting one would hold them all.
NAME_CHARS = 200
#: Ids named in one message, and in one fact, before the rest are only counted.
LISTED_IN_MESSAGE = 20
LISTED_IN_FACT = 100


def _named(value: Any) -> str:
    """``repr(value)``, cut past :data:`NAME_CHARS`."""
    return clip(repr(value), NAME_CHARS)


def _listing(table: KeyTable) -> str:
    """A table's smallest keys, comma-separated, and how many more it holds."""
    names = table.first(LISTED_IN_MESSAGE)
    more = len(table) - len(names)
    return ", ".join(clip(name, NAME_CHARS) for name in names) + (
        f", … and {more} more" if more else ""
    )


def _result(
    check_id: str, name: str, problems: list[Evidence], seen: bool, **facts: Any
) -> TraceResult:
    if problems:
        return TraceResult(check_id, name, "fail", problems, facts)
    return TraceResult(check_id, name, "pass" if seen else "skip", [], facts)


# ------------------------------------------------------------------ the checks

#: Evidence kept per check (the rest is counted in its facts): a journal with a gap at
#: every seq would otherwise hold one record per line.
EVIDENCE_CAP = 1000


class _JournalCheck:
    """One check as a fold over the journal, one entry at a time, in journal order.

    :meth:`entry` sees every parsed entry (recognized or not), :meth:`known` the
    recognized ones; :meth:`result` gives the outcome.  A journal is read once, line by
    line, and no check keeps the entries: what a check must remember across the whole
    journal (ids, digests) goes in a table of ``keys``, which moves to disk past a
    memory budget, so memory stays flat whatever the journal's size.
    """

    id = ""
    name = ""

    def __init__(self, keys: Keys) -> None:
        self.problems: list[Evidence] = []
        self.not_kept = 0
        self.seen = False

    def problem(self, seq: int | None, message: str) -> None:
        if len(self.problems) < EVIDENCE_CAP:
            self.problems.append(Evidence(seq, message))
        else:
            self.not_kept += 1

    def entry(self, entry: Entry) -> None:
        return None

    def known(self, entry: Entry) -> None:
        return None

    def facts(self) -> dict[str, Any]:
        return {}

    def result(self) -> TraceResult:
        facts = self.facts()
        if self.not_kept:
            facts["evidence_not_kept"] = self.not_kept
        return _result(self.id, self.name, self.problems, self.seen, **facts)


class _SequenceIntegrity(_JournalCheck):
    """Dense increasing seq from 1; one session; RFC 3339 UTC times; balanced turns; an end."""

    id = "T.sequence-integrity"
    name = "dense seq, one session, well-formed times, balanced turns, nothing after the end"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        #: What the entries show, then what the recognized ones show (the report's order)
        self.of_known: list[Evidence] = []
        self.expected = 1
        self.sessions: dict[str, int] = {}
        self.open_turn: int | None = None
        self.ended_at: int | None = None
        self.index = 0
        self.last: int | None = None

    def entry(self, entry: Entry) -> None:
        self.seen = True
        seq = _seq(entry)
        self.last = seq
        if seq is None:
            self.problem(None, f"an entry without an integer seq after {self.expected - 1}")
            return
        if seq != self.expected:
            what = "a gap" if seq > self.expected else "out of order or repeated"
            self.problem(seq, f"seq {seq} where {self.expected} was next ({what})")
        self.expected = seq + 1
        session = entry.get("session")
        if isinstance(session, str) and len(self.sessions) < 2:
            self.sessions.setdefault(session, seq)
        at = entry.get("at")
        if not isinstance(at, str) or not _well_formed_time(at):
            self.problem(seq, f"'at' is not an RFC 3339 UTC timestamp: {_named(at)}")

    def problem(self, seq: int | None, message: str, *, known: bool = False) -> None:
        if len(self.problems) + len(self.of_known) >= EVIDENCE_CAP:
            self.not_kept += 1
        else:
            (self.of_known if known else self.problems).append(Evidence(seq, message))

    def known(self, entry: Entry) -> None:
        problem = functools.partial(self.problem, known=True)
        seq, tag, turn = _seq(entry), entry["event"], entry.get("turn")
        first, self.index = self.index == 0, self.index + 1
        if first and tag != "session_start":
            problem(seq, f"the journal opens with {tag}, not session_start")
        if self.ended_at is not None:
            problem(seq, f"{tag} after session_end (seq {self.ended_at})")
        if tag == "session_end":
            self.ended_at = seq
        if tag == "resume":
            self.open_turn = None  # a resume closes any open turn
        open_turn = self.open_turn
        if tag == "turn_start":
            if open_turn is not None:
                problem(seq, f"turn_start while turn {open_turn} is open")
            if turn is None:
                problem(seq, "turn_start without a turn number")
            self.open_turn = turn
            return
        if tag == "turn_end":
            if open_turn is None:
                problem(seq, "turn_end with no open turn")
            elif turn != open_turn:
                problem(seq, f"turn_end for turn {turn}; turn {open_turn} is open")
            self.open_turn = None
            return
        if open_turn is not None and turn != open_turn and tag != "resume":
            problem(seq, f"{tag} carries turn {turn} inside turn {open_turn}")
        elif open_turn is None and turn is not None and tag not in ("resume",):
            problem(seq, f"{tag} carries turn {turn} outside any turn")

    def result(self) -> TraceResult:
        if len(self.sessions) > 1:
            (first, _), (other, where) = list(self.sessions.items())[:2]
            self.problems.append(
                Evidence(
                    where, f"a second session {_named(other)} in the journal of {_named(first)}"
                )
            )
        self.problems += self.of_known
        self.of_known = []
        return super().result()

    def facts(self) -> dict[str, Any]:
        crashed = self.ended_at is None
        facts: dict[str, Any] = {"crashed": crashed}
        if crashed:
            facts["crash"] = f"no session_end: the journal stops at seq {self.last} (a crash)"
        return facts


def _well_formed_time(text: str) -> bool:
    if not _RFC3339.match(text):
        return False
    try:
        moment = _dt.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return moment.utcoffset() == _dt.timedelta(0)


class _TurnLoopPairing(_JournalCheck):
    """Each requested call resolved exactly once before the next prompt; nothing phantom."""

    id = "T.turn-loop-pairing"
    name = "every requested call resolved exactly once before the next prompt; no phantom calls"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        #: call id -> (seq of the request, seq of the result or None)
        self.calls = keys.table()
        self.pending = keys.table()  # call id -> (seq of the request,)
        self.orphaned_by_crash: list[str] = []
        self.orphaned_not_listed = 0
        self.ended = False

    def known(self, entry: Entry) -> None:
        seq, tag = _seq(entry), entry["event"]
        pending = self.pending
        if tag == "model_response":
            self.seen = True
            ids = entry["tool_calls"]
            for start in range(0, len(ids), BATCH):
                self._request(seq, ids[start : start + BATCH])
        elif tag in ("tool_call", "tool_result"):
            self.seen = True
            self._resolve(seq, tag, entry["call_id"])
        elif tag == "prompt_assembled" and pending:
            self.problem(seq, f"prompt_assembled with call(s) {_listing(pending)} still unresolved")
            pending.clear()
        elif tag == "resume":
            # expected: the crash left them open
            names = pending.first(LISTED_IN_FACT - len(self.orphaned_by_crash))
            self.orphaned_by_crash.extend(names)
            self.orphaned_not_listed += len(pending) - len(names)
            pending.clear()
        elif tag == "session_end":
            self.ended = True
            if pending:
                self.problem(seq, f"session_end with call(s) {_listing(pending)} never resolved")
                pending.clear()

    def _request(self, seq: int | None, ids: list[str]) -> None:
        """Some of the calls a ``model_response`` requests (looked up and added together)."""
        earlier = self.calls.get_many(ids)
        new: list[tuple[str, tuple[int, None]]] = []
        at = seq or 0
        for call_id in ids:
            first = earlier.get(call_id)
            if first is not None:
                self.problem(
                    seq, f"call {_named(call_id)} requested again (first at seq {first[0]})"
                )
                continue
            earlier[call_id] = (at, None)
            new.append((call_id, (at, None)))
        self.calls.add_many(new)
        self.pending.add_many([(call_id, (at,)) for call_id, _ in new])

    def _resolve(self, seq: int | None, tag: str, call_id: str) -> None:
        """A ``tool_call`` or ``tool_result`` for ``call_id``."""
        call = self.calls.get(call_id)
        named = _named(call_id)
        if tag == "tool_call":
            if call is None:
                self.problem(
                    seq, f"tool_call {named} the model never requested (phantom execution)"
                )
            elif call[1] is not None:
                self.problem(seq, f"tool_call {named} after it was resolved")
        elif call is None:
            self.problem(seq, f"tool_result for {named}, never requested (orphan)")
        elif call[1] is not None:
            self.problem(seq, f"a second tool_result for {named} (first at seq {call[1]})")
        else:
            self.calls.replace(call_id, (call[0], seq or 0))
            self.pending.discard(call_id)

    def facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {}
        if self.orphaned_by_crash:
            facts["orphaned_by_resume"] = self.orphaned_by_crash
            if self.orphaned_not_listed:
                facts["orphaned_by_resume_not_listed"] = self.orphaned_not_listed
        if self.pending and not self.ended:
            facts["open_at_crash"] = names = self.pending.first(LISTED_IN_FACT)
            if len(self.pending) > len(names):
                facts["open_at_crash_not_listed"] = len(self.pending) - len(names)
        return facts


class _AssemblyBudgetHonesty(_JournalCheck):
    """Per-frame costs add up to the declared total, which fits the budget."""

    id = "T.assembly-budget-honesty"
    name = "per-frame costs sum to the declared total, within the budget"

    def known(self, entry: Entry) -> None:
        if entry["event"] != "prompt_assembled":
            return
        self.seen = True
        seq = _seq(entry)
        frames = entry["frames"]
        total = sum(int(f["token_cost"]) for f in frames)
        declared, budget = entry["declared_total_tokens"], entry["budget_tokens"]
        if total != declared:
            self.problem(seq, f"frames cost {total} tokens; declared_total_tokens says {declared}")
        if declared > budget:
            self.problem(seq, f"declared {declared} tokens over a budget of {budget}")
        for index, frame in enumerate(frames):
            if frame.get("representation") == "reference" and frame["token_cost"] != 0:
                self.problem(seq, f"frames[{index}] is a reference yet costs {frame['token_cost']}")


class _StalenessAtUse(_JournalCheck):
    """No frame identity rendered after a verify said it was stale or gone."""

    id = "T.staleness-at-use"
    name = "no frame rendered after a verify said it was stale or gone"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        self.dead = keys.table()  # identity (as JSON) -> (seq, "stale" or "gone")

    def known(self, entry: Entry) -> None:
        seq, tag = _seq(entry), entry["event"]
        if tag == "verify_observed":
            self.seen = True
            key = json.dumps(_identity(entry["frame"]))
            status = entry["verdict"]["status"]
            if status not in ("stale", "gone"):
                self.dead.discard(key)  # observed valid again
            elif self.dead.get(key) is None:
                self.dead.add(key, (seq, status))
            else:
                self.dead.replace(key, (seq, status))
        elif tag == "prompt_assembled" and self.dead:
            for frame in entry["frames"]:
                identity = _identity(frame["frame"])
                dead = self.dead.get(json.dumps(identity))
                if dead is not None:
                    _, frame_id, digest = identity
                    when, status = dead
                    self.problem(
                        seq,
                        f"frame {_named(frame_id)} ({clip(digest, NAME_CHARS)}) rendered after "
                        f"it was observed {status} at seq {when} (citing dead evidence)",
                    )


class _CitationAtUse(_JournalCheck):
    """Every rendered frame carries a non-empty citation label."""

    id = "T.citation-at-use"
    name = "every rendered frame carries a non-empty citation label"

    def known(self, entry: Entry) -> None:
        if entry["event"] != "prompt_assembled":
            return
        self.seen = self.seen or bool(entry["frames"])
        for index, frame in enumerate(entry["frames"]):
            if not str(frame["citation_label"]).strip():
                name = _named(frame["frame"]["frame_id"])
                self.problem(_seq(entry), f"frames[{index}] ({name}) has an empty citation label")


class _DeterministicComposition(_JournalCheck):
    """An unchanged frame set reproduces the same composition_digest."""

    id = "T.deterministic-composition"
    name = "an unchanged frame set reproduces the same composition_digest"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        self.first = keys.table()  # digest of a frame set -> (seq, composition_digest)

    def known(self, entry: Entry) -> None:
        if entry["event"] != "prompt_assembled" or entry.get("composition_digest") is None:
            return
        self.seen = True
        # the frame set exactly as rendered (identity, cost, label, representation), kept
        # as its digest: a journal of many prompts holds one short key per frame set
        text = json.dumps(entry["frames"], sort_keys=True)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        digest = entry["composition_digest"]
        first = self.first.get(key)
        if first is None:
            self.first.add(key, (_seq(entry), digest))
        elif first[1] != digest:
            self.problem(
                _seq(entry),
                f"the frame set of seq {first[0]} composed again with digest "
                f"{clip(str(digest), NAME_CHARS)}, not {clip(str(first[1]), NAME_CHARS)}",
            )


class _EffectExactlyOnce(_JournalCheck):
    """No effect_id performed twice, within a run or across a resume."""

    id = "T.effect-exactly-once"
    name = "no effect_id performed twice, within a run or across a resume"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        self.done = keys.table()  # effect id -> (seq, resumes before it)
        self.resumes = 0

    def known(self, entry: Entry) -> None:
        tag = entry["event"]
        if tag == "resume":
            self.resumes += 1
        if tag != "side_effect":
            return
        self.seen = True
        effect = entry["effect_id"]
        first = self.done.get(effect)
        if first is None:
            self.done.add(effect, (_seq(entry), self.resumes))
            return
        # a resume since the first time: the crash-replay double effect
        across = (
            " across a resume (the crash-replay double effect)" if first[1] < self.resumes else ""
        )
        self.problem(
            _seq(entry),
            f"effect {_named(effect)} performed again{across}; first at seq {first[0]}",
        )


class _ResumeIntegrity(_JournalCheck):
    """A resume recovered everything the journal recorded before it."""

    id = "T.resume-integrity"
    name = "resume.last_seq_seen equals what the journal recorded before it"

    def __init__(self, keys: Keys) -> None:
        super().__init__(keys)
        self.lost_total = 0
        self.previous: int | None = None

    def entry(self, entry: Entry) -> None:
        seq = _seq(entry)
        if entry.get("event") == "resume" and isinstance(entry.get("last_seq_seen"), int):
            self.seen = True
            recorded = self.previous or 0
            claimed = entry["last_seq_seen"]
            if claimed < recorded:
                lost = recorded - claimed
                self.lost_total += lost
                self.problem(
                    seq,
                    f"resumed from seq {claimed}, but the journal recorded up to {recorded}: "
                    f"{lost} event(s) of work lost (seq {claimed + 1}..{recorded})",
                )
            elif claimed > recorded:
                self.problem(seq, f"resumed from seq {claimed}, beyond the {recorded} recorded")
        if seq is not None:
            self.previous = seq

    def facts(self) -> dict[str, Any]:
        return {"work_lost_events": self.lost_total} if self.seen else {}


TRACE_CHECKS: tuple[type[_JournalCheck], ...] = (
    _SequenceIntegrity,
    _TurnLoopPairing,
    _AssemblyBudgetHonesty,
    _StalenessAtUse,
    _CitationAtUse,
    _DeterministicComposition,
    _EffectExactlyOnce,
    _ResumeIntegrity,
)
TRACE_CHECK_IDS = tuple(check.id for check in TRACE_CHECKS)


class JournalChecks:
    """Every check, fed one entry at a time (see :class:`_JournalCheck`), remembering
    what they must in ``keys``."""

    def __init__(self, keys: Keys) -> None:
        self.checks = [check(keys) for check in TRACE_CHECKS]

    def feed(self, entry: Entry, known: bool) -> None:
        for check in self.checks:
            check.entry(entry)
            if known:
                check.known(entry)

    def results(self) -> list[TraceResult]:
        return [check.result() for check in self.checks]


def check_journal(
    entries: Sequence[Entry], known: Sequence[Entry], *, memory: int = MEMORY
) -> list[TraceResult]:
    """Every check over one journal's entries (all of them) and its recognized ones."""
    with Keys(memory) as keys:
        checks = JournalChecks(keys)
        for check in checks.checks:
            for entry in entries:
                check.entry(entry)
            for entry in known:
                check.known(entry)
        return checks.results()


TRACE_REPORT_FORMAT = "stella-conform/trace-report/1"


@dataclass
class JournalReport:
    """A journal read by the reference reader, and every check over it."""

    reading: dict[str, Any]
    results: list[TraceResult]

    @property
    def readable(self) -> bool:
        return bool(self.reading["verdict"] == "accept")

    @property
    def crashed(self) -> bool:
        return any(r.facts.get("crashed") for r in self.results)

    @property
    def exit_code(self) -> int:
        if not self.readable:
            return 2
        return 1 if any(r.outcome == "fail" for r in self.results) else 0

    def to_json(self, source: str | None = None) -> dict[str, Any]:
        return {
            "format": TRACE_REPORT_FORMAT,
            "journal": source,
            "reading": self.reading,
            "crashed": self.crashed if self.readable else None,
            "checks": [r.to_json() for r in self.results],
            "exit_code": self.exit_code,
        }


def grade_journal(data: bytes, *, memory: int = MEMORY) -> JournalReport:
    """Read a journal with the reference reader and, if it is readable, run every check.

    ``memory``: bytes of remembered ids the checks hold before moving them to disk
    (:mod:`stella_conform.conformance.checks.trace_keys`); the outcome is the same."""
    return grade_journal_lines(split_journal(data), memory=memory)


def split_journal(data: bytes) -> Iterable[bytes]:
    """A journal's physical lines, without their newlines (a final newline ends the last)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


@dataclass
class JournalFacts:
    """What a streamed journal showed of its shape (for ``trace check``'s "not a journal")."""

    blank: bool = True
    entries: int = 0
    numbered: bool = False
    typed: bool = False


def grade_journal_lines(
    lines: Iterable[bytes], facts: JournalFacts | None = None, *, memory: int = MEMORY
) -> JournalReport:
    """:func:`grade_journal` over a journal's lines (no newlines) as they come: one pass,
    nothing kept per line, and what the checks remember moved to disk past ``memory``
    bytes, so a journal of any length is read in flat memory.  ``facts`` collects what
    ``trace check`` needs to tell a journal from something else.  Raises
    :class:`~stella_conform.conformance.checks.trace_keys.KeysUnavailable` when the
    remembered ids must move to disk and cannot."""
    from stella_conform.oracle.journal import JournalReader

    shape = facts if facts is not None else JournalFacts()
    with Keys(memory) as keys:
        checks = JournalChecks(keys)

        def on_entry(entry: Entry, known: bool) -> None:
            shape.entries += 1
            shape.numbered = shape.numbered or "seq" in entry or isinstance(entry.get("event"), str)
            shape.typed = shape.typed or isinstance(entry.get("type"), str)
            checks.feed(entry, known)

        reader = JournalReader(keep=False, on_entry=on_entry)
        for line in lines:
            if shape.blank and line.strip(b" \t\r\n"):
                shape.blank = False
            if not reader.feed(line):
                break
        journal = reader.finish()
        if journal.verdict != "accept":
            return JournalReport(journal.summary(), [])
        return JournalReport(journal.summary(), checks.results())
