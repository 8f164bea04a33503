"""Checks over a whole trace journal: defects an outcome-graded benchmark cannot see.

Each check is a pure function of the journal's recognized entries (and, for
sequence integrity, every entry): it returns an outcome (``pass``, ``fail``,
or ``skip`` when the journal holds nothing the check can see) and evidence
naming the ``seq`` where the journal broke the rule.  Facts that are not
failures (a journal that ends without ``session_end`` records a crash; calls
a crash left open) are reported beside the outcome.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


def sequence_integrity(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """Dense increasing seq from 1; one session; RFC 3339 UTC times; balanced turns; an end."""
    problems: list[Evidence] = []
    expected = 1
    sessions: dict[str, int] = {}
    for entry in entries:
        seq = _seq(entry)
        if seq is None:
            problems.append(Evidence(None, f"an entry without an integer seq after {expected - 1}"))
            continue
        if seq != expected:
            what = "a gap" if seq > expected else "out of order or repeated"
            problems.append(Evidence(seq, f"seq {seq} where {expected} was next ({what})"))
        expected = seq + 1
        session = entry.get("session")
        if isinstance(session, str):
            sessions.setdefault(session, seq)
        at = entry.get("at")
        if not isinstance(at, str) or not _well_formed_time(at):
            problems.append(Evidence(seq, f"'at' is not an RFC 3339 UTC timestamp: {at!r}"))
    if len(sessions) > 1:
        (first, _), (other, where) = list(sessions.items())[:2]
        problems.append(Evidence(where, f"a second session {other!r} in the journal of {first!r}"))
    open_turn: int | None = None
    ended_at: int | None = None
    for index, entry in enumerate(known):
        seq, tag, turn = _seq(entry), entry["event"], entry.get("turn")
        if index == 0 and tag != "session_start":
            problems.append(Evidence(seq, f"the journal opens with {tag}, not session_start"))
        if ended_at is not None:
            problems.append(Evidence(seq, f"{tag} after session_end (seq {ended_at})"))
        if tag == "session_end":
            ended_at = seq
        if tag == "resume":
            open_turn = None  # a resume closes any open turn
        if tag == "turn_start":
            if open_turn is not None:
                problems.append(Evidence(seq, f"turn_start while turn {open_turn} is open"))
            if turn is None:
                problems.append(Evidence(seq, "turn_start without a turn number"))
            open_turn = turn
            continue
        if tag == "turn_end":
            if open_turn is None:
                problems.append(Evidence(seq, "turn_end with no open turn"))
            elif turn != open_turn:
                problems.append(
                    Evidence(seq, f"turn_end for turn {turn}; turn {open_turn} is open")
                )
            open_turn = None
            continue
        if open_turn is not None and turn != open_turn and tag != "resume":
            problems.append(Evidence(seq, f"{tag} carries turn {turn} inside turn {open_turn}"))
        elif open_turn is None and turn is not None and tag not in ("resume",):
            problems.append(Evidence(seq, f"{tag} carries turn {turn} outside any turn"))
    last = _seq(entries[-1]) if entries else None
    crashed = ended_at is None
    facts: dict[str, Any] = {"crashed": crashed}
    if crashed:
        facts["crash"] = f"no session_end: the journal stops at seq {last} (a crash)"
    return _result(
        "T.sequence-integrity",
        "dense seq, one session, well-formed times, balanced turns, nothing after the end",
        problems,
        bool(entries),
        **facts,
    )


def _well_formed_time(text: str) -> bool:
    if not _RFC3339.match(text):
        return False
    try:
        moment = _dt.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return moment.utcoffset() == _dt.timedelta(0)


def turn_loop_pairing(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """Each requested call resolved exactly once before the next prompt; nothing phantom."""
    problems: list[Evidence] = []
    requested: dict[str, int] = {}  # call id -> seq of the request
    pending: dict[str, int] = {}
    resolved: dict[str, int] = {}
    executing: set[str] = set()
    orphaned_by_crash: list[str] = []
    seen = False
    ended = False
    for entry in known:
        seq, tag = _seq(entry), entry["event"]
        if tag == "model_response":
            seen = True
            for call_id in entry["tool_calls"]:
                if call_id in requested:
                    problems.append(
                        Evidence(
                            seq,
                            f"call {call_id!r} requested again (first at seq {requested[call_id]})",
                        )
                    )
                    continue
                requested[call_id] = seq or 0
                pending[call_id] = seq or 0
        elif tag == "tool_call":
            seen = True
            call_id = entry["call_id"]
            if call_id not in requested:
                problems.append(
                    Evidence(
                        seq, f"tool_call {call_id!r} the model never requested (phantom execution)"
                    )
                )
            elif call_id in resolved:
                problems.append(Evidence(seq, f"tool_call {call_id!r} after it was resolved"))
            executing.add(call_id)
        elif tag == "tool_result":
            seen = True
            call_id = entry["call_id"]
            if call_id not in requested:
                problems.append(
                    Evidence(seq, f"tool_result for {call_id!r}, never requested (orphan)")
                )
            elif call_id in resolved:
                problems.append(
                    Evidence(
                        seq,
                        f"a second tool_result for {call_id!r} (first at seq {resolved[call_id]})",
                    )
                )
            else:
                resolved[call_id] = seq or 0
                pending.pop(call_id, None)
        elif tag == "prompt_assembled" and pending:
            left = ", ".join(sorted(pending))
            problems.append(Evidence(seq, f"prompt_assembled with call(s) {left} still unresolved"))
            pending.clear()
        elif tag == "resume":
            orphaned_by_crash.extend(sorted(pending))  # expected: the crash left them open
            pending.clear()
        elif tag == "session_end":
            ended = True
            if pending:
                left = ", ".join(sorted(pending))
                problems.append(Evidence(seq, f"session_end with call(s) {left} never resolved"))
                pending.clear()
    facts: dict[str, Any] = {}
    if orphaned_by_crash:
        facts["orphaned_by_resume"] = orphaned_by_crash
    if pending and not ended:
        facts["open_at_crash"] = sorted(pending)
    return _result(
        "T.turn-loop-pairing",
        "every requested call resolved exactly once before the next prompt; no phantom calls",
        problems,
        seen,
        **facts,
    )


def assembly_budget_honesty(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """Per-frame costs add up to the declared total, which fits the budget."""
    problems: list[Evidence] = []
    prompts = [e for e in known if e["event"] == "prompt_assembled"]
    for entry in prompts:
        seq = _seq(entry)
        frames = entry["frames"]
        total = sum(int(f["token_cost"]) for f in frames)
        declared, budget = entry["declared_total_tokens"], entry["budget_tokens"]
        if total != declared:
            problems.append(
                Evidence(seq, f"frames cost {total} tokens; declared_total_tokens says {declared}")
            )
        if declared > budget:
            problems.append(Evidence(seq, f"declared {declared} tokens over a budget of {budget}"))
        for index, frame in enumerate(frames):
            if frame.get("representation") == "reference" and frame["token_cost"] != 0:
                problems.append(
                    Evidence(seq, f"frames[{index}] is a reference yet costs {frame['token_cost']}")
                )
    return _result(
        "T.assembly-budget-honesty",
        "per-frame costs sum to the declared total, within the budget",
        problems,
        bool(prompts),
    )


def staleness_at_use(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """No frame identity rendered after a verify said it was stale or gone."""
    problems: list[Evidence] = []
    dead: dict[tuple[str, str, str], tuple[int | None, str]] = {}
    seen = False
    for entry in known:
        seq, tag = _seq(entry), entry["event"]
        if tag == "verify_observed":
            seen = True
            identity = _identity(entry["frame"])
            status = entry["verdict"]["status"]
            if status in ("stale", "gone"):
                dead[identity] = (seq, status)
            else:
                dead.pop(identity, None)  # observed valid again
        elif tag == "prompt_assembled":
            for frame in entry["frames"]:
                identity = _identity(frame["frame"])
                if identity in dead:
                    when, status = dead[identity]
                    problems.append(
                        Evidence(
                            seq,
                            f"frame {identity[1]!r} ({identity[2]}) rendered after it was "
                            f"observed {status} at seq {when} (citing dead evidence)",
                        )
                    )
    return _result(
        "T.staleness-at-use",
        "no frame rendered after a verify said it was stale or gone",
        problems,
        seen,
    )


def citation_at_use(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """Every rendered frame carries a non-empty citation label."""
    problems: list[Evidence] = []
    prompts = [e for e in known if e["event"] == "prompt_assembled"]
    for entry in prompts:
        for index, frame in enumerate(entry["frames"]):
            if not str(frame["citation_label"]).strip():
                name = frame["frame"]["frame_id"]
                problems.append(
                    Evidence(_seq(entry), f"frames[{index}] ({name!r}) has an empty citation label")
                )
    return _result(
        "T.citation-at-use",
        "every rendered frame carries a non-empty citation label",
        problems,
        any(e["frames"] for e in prompts),
    )


def deterministic_composition(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """An unchanged frame set reproduces the same composition_digest."""
    problems: list[Evidence] = []
    first: dict[str, tuple[int | None, str]] = {}
    seen = False
    for entry in known:
        if entry["event"] != "prompt_assembled" or entry.get("composition_digest") is None:
            continue
        seen = True
        # the frame set exactly as rendered (identity, cost, label, representation)
        key = json.dumps(entry["frames"], sort_keys=True)
        digest = entry["composition_digest"]
        if key in first and first[key][1] != digest:
            problems.append(
                Evidence(
                    _seq(entry),
                    f"the frame set of seq {first[key][0]} composed again with digest {digest}, "
                    f"not {first[key][1]}",
                )
            )
        first.setdefault(key, (_seq(entry), digest))
    return _result(
        "T.deterministic-composition",
        "an unchanged frame set reproduces the same composition_digest",
        problems,
        seen,
    )


def effect_exactly_once(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """No effect_id performed twice, within a run or across a resume."""
    problems: list[Evidence] = []
    done: dict[str, int | None] = {}
    resumed_since: dict[str, bool] = {}
    seen = False
    for entry in known:
        tag = entry["event"]
        if tag == "resume":
            resumed_since = dict.fromkeys(done, True)
        if tag != "side_effect":
            continue
        seen = True
        effect = entry["effect_id"]
        if effect in done:
            across = (
                " across a resume (the crash-replay double effect)"
                if resumed_since.get(effect)
                else ""
            )
            problems.append(
                Evidence(
                    _seq(entry),
                    f"effect {effect!r} performed again{across}; first at seq {done[effect]}",
                )
            )
        else:
            done[effect] = _seq(entry)
    return _result(
        "T.effect-exactly-once",
        "no effect_id performed twice, within a run or across a resume",
        problems,
        seen,
    )


def resume_integrity(entries: Sequence[Entry], known: Sequence[Entry]) -> TraceResult:
    """A resume recovered everything the journal recorded before it."""
    problems: list[Evidence] = []
    lost_total = 0
    previous: int | None = None
    seen = False
    for entry in entries:
        seq = _seq(entry)
        if entry.get("event") == "resume" and isinstance(entry.get("last_seq_seen"), int):
            seen = True
            recorded = previous or 0
            claimed = entry["last_seq_seen"]
            if claimed < recorded:
                lost = recorded - claimed
                lost_total += lost
                problems.append(
                    Evidence(
                        seq,
                        f"resumed from seq {claimed}, but the journal recorded up to {recorded}: "
                        f"{lost} event(s) of work lost (seq {claimed + 1}..{recorded})",
                    )
                )
            elif claimed > recorded:
                problems.append(
                    Evidence(seq, f"resumed from seq {claimed}, beyond the {recorded} recorded")
                )
        if seq is not None:
            previous = seq
    facts = {"work_lost_events": lost_total} if seen else {}
    return _result(
        "T.resume-integrity",
        "resume.last_seq_seen equals what the journal recorded before it",
        problems,
        seen,
        **facts,
    )


CheckFn = Callable[[Sequence[Entry], Sequence[Entry]], TraceResult]

TRACE_CHECKS: tuple[tuple[str, CheckFn], ...] = (
    ("T.sequence-integrity", sequence_integrity),
    ("T.turn-loop-pairing", turn_loop_pairing),
    ("T.assembly-budget-honesty", assembly_budget_honesty),
    ("T.staleness-at-use", staleness_at_use),
    ("T.citation-at-use", citation_at_use),
    ("T.deterministic-composition", deterministic_composition),
    ("T.effect-exactly-once", effect_exactly_once),
    ("T.resume-integrity", resume_integrity),
)
TRACE_CHECK_IDS = tuple(cid for cid, _ in TRACE_CHECKS)


def check_journal(entries: Sequence[Entry], known: Sequence[Entry]) -> list[TraceResult]:
    """Every check over one journal's entries (all of them) and its recognized ones."""
    return [fn(entries, known) for _, fn in TRACE_CHECKS]


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
    from stella_conform.journal import read_journal

    journal = read_journal(data)
    if journal.verdict != "accept":
        return JournalReport(journal.summary(), [])
    return JournalReport(journal.summary(), check_journal(journal.entries, journal.known))
