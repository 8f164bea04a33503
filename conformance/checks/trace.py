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
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.kinds.case import GradedCase

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
    line, and no check keeps the entries: memory stays flat whatever the journal's size.
    """

    id = ""
    name = ""

    def __init__(self) -> None:
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

    def __init__(self) -> None:
        super().__init__()
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
            self.problem(seq, f"'at' is not an RFC 3339 UTC timestamp: {at!r}")

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
                Evidence(where, f"a second session {other!r} in the journal of {first!r}")
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

    def __init__(self) -> None:
        super().__init__()
        self.requested: dict[str, int] = {}  # call id -> seq of the request
        self.pending: dict[str, int] = {}
        self.resolved: dict[str, int] = {}
        self.orphaned_by_crash: list[str] = []
        self.ended = False

    def known(self, entry: Entry) -> None:
        seq, tag = _seq(entry), entry["event"]
        requested, pending, resolved = self.requested, self.pending, self.resolved
        if tag == "model_response":
            self.seen = True
            for call_id in entry["tool_calls"]:
                if call_id in requested:
                    self.problem(
                        seq, f"call {call_id!r} requested again (first at seq {requested[call_id]})"
                    )
                    continue
                requested[call_id] = seq or 0
                pending[call_id] = seq or 0
        elif tag == "tool_call":
            self.seen = True
            call_id = entry["call_id"]
            if call_id not in requested:
                self.problem(
                    seq, f"tool_call {call_id!r} the model never requested (phantom execution)"
                )
            elif call_id in resolved:
                self.problem(seq, f"tool_call {call_id!r} after it was resolved")
        elif tag == "tool_result":
            self.seen = True
            call_id = entry["call_id"]
            if call_id not in requested:
                self.problem(seq, f"tool_result for {call_id!r}, never requested (orphan)")
            elif call_id in resolved:
                self.problem(
                    seq, f"a second tool_result for {call_id!r} (first at seq {resolved[call_id]})"
                )
            else:
                resolved[call_id] = seq or 0
                pending.pop(call_id, None)
        elif tag == "prompt_assembled" and pending:
            left = ", ".join(sorted(pending))
            self.problem(seq, f"prompt_assembled with call(s) {left} still unresolved")
            pending.clear()
        elif tag == "resume":
            self.orphaned_by_crash.extend(sorted(pending))  # expected: the crash left them open
            pending.clear()
        elif tag == "session_end":
            self.ended = True
            if pending:
                left = ", ".join(sorted(pending))
                self.problem(seq, f"session_end with call(s) {left} never resolved")
                pending.clear()

    def facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {}
        if self.orphaned_by_crash:
            facts["orphaned_by_resume"] = self.orphaned_by_crash
        if self.pending and not self.ended:
            facts["open_at_crash"] = sorted(self.pending)
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

    def __init__(self) -> None:
        super().__init__()
        self.dead: dict[tuple[str, str, str], tuple[int | None, str]] = {}

    def known(self, entry: Entry) -> None:
        seq, tag = _seq(entry), entry["event"]
        if tag == "verify_observed":
            self.seen = True
            identity = _identity(entry["frame"])
            status = entry["verdict"]["status"]
            if status in ("stale", "gone"):
                self.dead[identity] = (seq, status)
            else:
                self.dead.pop(identity, None)  # observed valid again
        elif tag == "prompt_assembled":
            for frame in entry["frames"]:
                identity = _identity(frame["frame"])
                if identity in self.dead:
                    when, status = self.dead[identity]
                    self.problem(
                        seq,
                        f"frame {identity[1]!r} ({identity[2]}) rendered after it was "
                        f"observed {status} at seq {when} (citing dead evidence)",
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
                name = frame["frame"]["frame_id"]
                self.problem(_seq(entry), f"frames[{index}] ({name!r}) has an empty citation label")


class _DeterministicComposition(_JournalCheck):
    """An unchanged frame set reproduces the same composition_digest."""

    id = "T.deterministic-composition"
    name = "an unchanged frame set reproduces the same composition_digest"

    def __init__(self) -> None:
        super().__init__()
        self.first: dict[bytes, tuple[int | None, str]] = {}

    def known(self, entry: Entry) -> None:
        if entry["event"] != "prompt_assembled" or entry.get("composition_digest") is None:
            return
        self.seen = True
        # the frame set exactly as rendered (identity, cost, label, representation), kept
        # as its digest: a journal of many prompts holds one short key per frame set
        text = json.dumps(entry["frames"], sort_keys=True)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        digest = entry["composition_digest"]
        first = self.first
        if key in first and first[key][1] != digest:
            self.problem(
                _seq(entry),
                f"the frame set of seq {first[key][0]} composed again with digest {digest}, "
                f"not {first[key][1]}",
            )
        first.setdefault(key, (_seq(entry), digest))


class _EffectExactlyOnce(_JournalCheck):
    """No effect_id performed twice, within a run or across a resume."""

    id = "T.effect-exactly-once"
    name = "no effect_id performed twice, within a run or across a resume"

    def __init__(self) -> None:
        super().__init__()
        self.done: dict[str, int | None] = {}
        self.resumed_since: dict[str, bool] = {}

    def known(self, entry: Entry) -> None:
        tag = entry["event"]
        if tag == "resume":
            self.resumed_since = dict.fromkeys(self.done, True)
        if tag != "side_effect":
            return
        self.seen = True
        effect = entry["effect_id"]
        if effect in self.done:
            across = (
                " across a resume (the crash-replay double effect)"
                if self.resumed_since.get(effect)
                else ""
            )
            self.problem(
                _seq(entry),
                f"effect {effect!r} performed again{across}; first at seq {self.done[effect]}",
            )
        else:
            self.done[effect] = _seq(entry)


class _ResumeIntegrity(_JournalCheck):
    """A resume recovered everything the journal recorded before it."""

    id = "T.resume-integrity"
    name = "resume.last_seq_seen equals what the journal recorded before it"

    def __init__(self) -> None:
        super().__init__()
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
    """Every check, fed one entry at a time (see :class:`_JournalCheck`)."""

    def __init__(self) -> None:
        self.checks = [check() for check in TRACE_CHECKS]

    def feed(self, entry: Entry, known: bool) -> None:
        for check in self.checks:
            check.entry(entry)
            if known:
                check.known(entry)

    def results(self) -> list[TraceResult]:
        return [check.result() for check in self.checks]


def check_journal(entries: Sequence[Entry], known: Sequence[Entry]) -> list[TraceResult]:
    """Every check over one journal's entries (all of them) and its recognized ones."""
    checks = JournalChecks()
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


def grade_journal(data: bytes) -> JournalReport:
    """Read a journal with the reference reader and, if it is readable, run every check."""
    return grade_journal_lines(split_journal(data))


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


def grade_journal_lines(lines: Iterable[bytes], facts: JournalFacts | None = None) -> JournalReport:
    """:func:`grade_journal` over a journal's lines (no newlines) as they come: one pass,
    nothing kept per line, so a journal of any length is read in flat memory.
    ``facts`` collects what ``trace check`` needs to tell a journal from something else."""
    from stella_conform.oracle.journal import JournalReader

    checks = JournalChecks()
    shape = facts if facts is not None else JournalFacts()

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
