"""Hypothesis strategies for trace journals: valid ones, and one defect per check.

A valid journal opens with ``session_start``, runs turns of the loop
``prompt_assembled`` → ``model_response`` → (``tool_call`` →
``side_effect``? → ``tool_result``)* with ``verify_observed`` answers between
them, may crash in the middle of a turn and ``resume`` (which closes the turn
and orphans its open calls), and ends with ``session_end`` or, for a crash at
the end, without it.  Frames are rendered only while alive (a frame observed
stale or gone is never rendered again), costs add up, digests are a function
of the frame set, and every ``effect_id`` is new.

:data:`DEFECTS` breaks exactly one check each: the property test in
``tests/conformance/test_trace.py`` finds the injected defect and nothing else.

Entries are built without ``seq``/``at``/``session`` and numbered last
(:func:`number`), so a defect that inserts or removes a line leaves the
sequence dense; a ``resume`` without ``last_seq_seen`` gets the seq recorded
just before it.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from stella_conform.oracle.journal import TRACE_FORMAT

Entry = dict[str, Any]
TOOLS = ("read_file", "edit_file", "bash", "search")
EFFECT_KINDS = ("file_write", "network", "command")
START = _dt.datetime(2026, 11, 1, 10, 0, 0, tzinfo=_dt.UTC)


@dataclass
class Journal:
    """A journal under construction: entries without envelope numbers, then numbered."""

    entries: list[Entry]
    session: str = "s1"
    ended: bool = True
    crashed_mid_run: bool = False
    #: Set by a defect that works on numbered lines (sequence and resume defects).
    numbered: list[Entry] | None = field(default=None, repr=False)
    defect: str | None = None

    def lines(self) -> list[Entry]:
        return self.numbered if self.numbered is not None else number(self.entries, self.session)

    def to_bytes(self) -> bytes:
        return b"".join(
            json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for e in self.lines()
        )


def number(entries: list[Entry], session: str = "s1") -> list[Entry]:
    """Give every entry its envelope: dense seq from 1, a time, the session."""
    out = []
    for index, body in enumerate(entries):
        seq = index + 1
        at = (START + _dt.timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
        entry: Entry = {"seq": seq, "at": at, "session": session}
        if "turn" in body:
            entry["turn"] = body["turn"]
        entry["event"] = body["event"]
        entry.update({k: v for k, v in body.items() if k not in ("turn", "event")})
        if entry["event"] == "resume" and entry.get("last_seq_seen") is None:
            entry["last_seq_seen"] = seq - 1
        out.append(entry)
    return out


def digest(frames: list[Entry]) -> str:
    """The composition digest: a function of the rendered frames, as the contract asks."""
    canonical = json.dumps(frames, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(canonical).hexdigest()[:16]


FRAMES = [
    {"provider_id": "repo", "frame_id": f"f{i}", "content_digest": f"sha256:{i:02x}{i:02x}"}
    for i in range(1, 7)
]
LABELS = ("src/app.py L1-40", "README.md", "tests/test_app.py L10-30", "docs/api.md §2")


@st.composite
def _prompt(draw: st.DrawFn, turn: int, alive: list[Entry]) -> Entry:
    chosen = (
        draw(st.lists(st.sampled_from(alive), unique_by=lambda f: f["frame_id"], max_size=3))
        if alive
        else []
    )
    frames = []
    for frame in chosen:
        reference = draw(st.integers(0, 4)) == 0
        rendered: Entry = {
            "frame": dict(frame),
            "token_cost": 0 if reference else draw(st.integers(1, 800)),
            "citation_label": draw(st.sampled_from(LABELS)),
        }
        if reference:
            rendered["representation"] = "reference"
        elif draw(st.booleans()):
            rendered["representation"] = "inline"
        frames.append(rendered)
    total = sum(f["token_cost"] for f in frames)
    entry: Entry = {
        "event": "prompt_assembled",
        "turn": turn,
        "budget_tokens": total + draw(st.integers(0, 4000)),
        "declared_total_tokens": total,
        "frames": frames,
    }
    if draw(st.integers(0, 3)) > 0:
        entry["composition_digest"] = digest(frames)
    return entry


@st.composite
def journals(
    draw: st.DrawFn,
    *,
    crash: bool | None = None,
    ended: bool | None = None,
    max_turns: int = 3,
) -> Journal:
    """Valid journals (public strategy)."""
    session = draw(st.sampled_from(("s1", "sess-7f3a", "2026-11-01-a")))
    entries: list[Entry] = [
        {
            "event": "session_start",
            "agent": draw(st.sampled_from(("demo-agent", "example-agent"))),
            "harness": "stella/0.9",
            "model": draw(st.none() | st.just("anthropic/claude-fable-5")),
            "trace_format": TRACE_FORMAT,
        }
    ]
    alive = list(FRAMES)
    counters = {"call": 0, "effect": 0}
    will_crash = draw(st.booleans()) if crash is None else crash
    n_turns = draw(st.integers(1, max_turns))
    crash_turn = draw(st.integers(1, n_turns)) if will_crash else None
    turn = 0
    for t in range(n_turns):
        turn += 1
        entries.append({"event": "turn_start", "turn": turn})
        steps = draw(st.integers(1, 3))
        for step in range(steps):
            entries.append(draw(_prompt(turn, alive)))
            last_step = step == steps - 1
            calls = [] if last_step else draw(st.lists(st.just(0), max_size=2))
            ids = []
            for _ in calls:
                counters["call"] += 1
                ids.append(f"call_{counters['call']}")
            entries.append({"event": "model_response", "turn": turn, "tool_calls": ids})
            crashing_here = crash_turn == t + 1 and ids and step == 0
            for index, call_id in enumerate(ids):
                if crashing_here and index == len(ids) - 1:
                    break  # the crash leaves this call open
                status = draw(st.sampled_from(("ok", "ok", "error", "rejected")))
                if status != "rejected":
                    entries.append(
                        {"event": "tool_call", "turn": turn, "call_id": call_id,
                         "tool": draw(st.sampled_from(TOOLS))}
                    )  # fmt: skip
                    if draw(st.booleans()):
                        counters["effect"] += 1
                        entries.append(
                            {"event": "side_effect", "turn": turn,
                             "effect_id": f"eff_{counters['effect']}",
                             "kind": draw(st.sampled_from(EFFECT_KINDS)), "call_id": call_id}
                        )  # fmt: skip
                entries.append(
                    {"event": "tool_result", "turn": turn, "call_id": call_id, "status": status}
                )
            if alive and draw(st.integers(0, 2)) == 0:
                frame = draw(st.sampled_from(alive))
                status = draw(st.sampled_from(("valid", "valid", "stale", "gone")))
                entries.append(
                    {"event": "verify_observed", "turn": turn, "frame": dict(frame),
                     "verdict": {"status": status}}
                )  # fmt: skip
                if status != "valid":
                    alive = [f for f in alive if f is not frame]
            if crashing_here:
                break
        if crash_turn == t + 1:
            entries.append({"event": "resume", "last_seq_seen": None})
            continue  # the resume closed the turn; the work goes on in a new one
        entries.append({"event": "turn_end", "turn": turn})
    is_ended = draw(st.booleans()) if ended is None else ended
    if is_ended:
        entries.append({"event": "session_end", "outcome": "completed"})
    return Journal(entries, session, ended=is_ended, crashed_mid_run=will_crash)


# ------------------------------------------------------------------ defects


def turn_at(entries: list[Entry], index: int) -> int | None:
    """The turn open just before position ``index``."""
    open_turn: int | None = None
    for entry in entries[:index]:
        if entry["event"] == "turn_start":
            open_turn = entry.get("turn")
        elif entry["event"] in ("turn_end", "resume"):
            open_turn = None
    return open_turn


def _insert(entries: list[Entry], index: int, body: Entry) -> None:
    turn = turn_at(entries, index)
    body = dict(body)
    body.pop("turn", None)
    if turn is not None:
        body["turn"] = turn
    entries.insert(index, body)


def _indexes(entries: list[Entry], event: str) -> list[int]:
    return [i for i, e in enumerate(entries) if e["event"] == event]


def _inside_turns(entries: list[Entry]) -> list[int]:
    """Insertion points inside an open turn, after at least one entry of it."""
    return [i for i in range(1, len(entries) + 1) if turn_at(entries, i) is not None]


Defect = Callable[[st.DrawFn, Journal], None]


def sequence_defect(draw: st.DrawFn, journal: Journal) -> None:
    lines = number(journal.entries, journal.session)
    kinds = ["gap", "time", "session"]
    if any(e["event"] == "turn_end" for e in lines):
        kinds.append("turn-mismatch")
    if journal.ended:
        kinds.append("after-end")
    kind = draw(st.sampled_from(kinds))
    if kind == "gap":
        at = draw(st.integers(1, len(lines) - 1)) if len(lines) > 1 else 0
        for entry in lines[at:]:
            entry["seq"] += 1
            if entry["event"] == "resume" and entry["last_seq_seen"] >= lines[at]["seq"] - 1:
                entry["last_seq_seen"] += 1  # the resume still saw everything recorded
    elif kind == "time":
        entry = draw(st.sampled_from(lines))
        entry["at"] = draw(
            st.sampled_from(("2026-11-01 10:00:00", "yesterday", "2026-11-01T12:00:00+02:00",
                             "1730455200", "2026-13-01T10:00:00Z"))
        )  # fmt: skip
    elif kind == "session":
        entry = draw(st.sampled_from(lines[1:] or lines))
        entry["session"] = journal.session + "-other"
    elif kind == "turn-mismatch":
        entry = draw(st.sampled_from([e for e in lines if e["event"] == "turn_end"]))
        entry["turn"] += 100
    else:
        lines.append(
            {"seq": len(lines) + 1, "at": lines[-1]["at"], "session": journal.session,
             "event": "verify_observed", "frame": dict(FRAMES[0]),
             "verdict": {"status": "valid"}}
        )  # fmt: skip
    journal.numbered = lines


def pairing_defect(draw: st.DrawFn, journal: Journal) -> None:
    entries = journal.entries
    kinds = ["phantom", "orphan-result"]
    results = _indexes(entries, "tool_result")
    if results:
        kinds.append("duplicate-result")
    unresolvable = [i for i in results if _next_prompt_before_resume(entries, i) is not None]
    if unresolvable:
        kinds.append("unresolved")
    kind = draw(st.sampled_from(kinds))
    points = _inside_turns(entries)
    if kind == "phantom":
        _insert(entries, draw(st.sampled_from(points)),
                {"event": "tool_call", "call_id": "phantom_1", "tool": "bash"})  # fmt: skip
    elif kind == "orphan-result":
        _insert(entries, draw(st.sampled_from(points)),
                {"event": "tool_result", "call_id": "orphan_1", "status": "ok"})  # fmt: skip
    elif kind == "duplicate-result":
        index = draw(st.sampled_from(results))
        entries.insert(index + 1, copy.deepcopy(entries[index]))
    else:
        del entries[draw(st.sampled_from(unresolvable))]


def _next_prompt_before_resume(entries: list[Entry], index: int) -> int | None:
    for j in range(index + 1, len(entries)):
        event = entries[j]["event"]
        if event == "resume":
            return None
        if event == "prompt_assembled":
            return j
    return None


def budget_defect(draw: st.DrawFn, journal: Journal) -> None:
    prompts = [journal.entries[i] for i in _indexes(journal.entries, "prompt_assembled")]
    prompt = draw(st.sampled_from(prompts))
    if prompt["declared_total_tokens"] > 0 and draw(st.booleans()):
        prompt["budget_tokens"] = prompt["declared_total_tokens"] - 1
    else:
        prompt["declared_total_tokens"] += draw(st.integers(1, 500))
        prompt["budget_tokens"] = max(prompt["budget_tokens"], prompt["declared_total_tokens"])


def staleness_defect(draw: st.DrawFn, journal: Journal) -> None:
    entries = journal.entries
    rendering = [i for i in _indexes(entries, "prompt_assembled") if entries[i]["frames"]]
    if not rendering:
        index = _indexes(entries, "prompt_assembled")[0]
        frame = {"frame": dict(FRAMES[0]), "token_cost": 10, "citation_label": "README.md"}
        entries[index]["frames"] = [frame]
        entries[index]["declared_total_tokens"] = 10
        entries[index]["budget_tokens"] = max(entries[index]["budget_tokens"], 10)
        entries[index].pop("composition_digest", None)
        rendering = [index]
    index = draw(st.sampled_from(rendering))
    frame = draw(st.sampled_from(entries[index]["frames"]))["frame"]
    status = draw(st.sampled_from(("stale", "gone")))
    _insert(entries, index, {"event": "verify_observed", "frame": dict(frame),
                             "verdict": {"status": status}})  # fmt: skip


def citation_defect(draw: st.DrawFn, journal: Journal) -> None:
    entries = journal.entries
    rendering = [i for i in _indexes(entries, "prompt_assembled") if entries[i]["frames"]]
    if not rendering:
        staleness_free = _indexes(entries, "prompt_assembled")[0]
        entries[staleness_free]["frames"] = [
            {"frame": dict(FRAMES[-1]), "token_cost": 0, "citation_label": "x",
             "representation": "reference"}
        ]  # fmt: skip
        entries[staleness_free].pop("composition_digest", None)
        rendering = [staleness_free]
    prompt = entries[draw(st.sampled_from(rendering))]
    frame = draw(st.sampled_from(prompt["frames"]))
    frame["citation_label"] = draw(st.sampled_from(("", " ", "\t")))
    if "composition_digest" in prompt:
        prompt["composition_digest"] = digest(prompt["frames"])


def composition_defect(draw: st.DrawFn, journal: Journal) -> None:
    entries = journal.entries
    index = draw(st.sampled_from(_indexes(entries, "prompt_assembled")))
    prompt = entries[index]
    prompt["composition_digest"] = digest(prompt["frames"])
    again = copy.deepcopy(prompt)
    again["composition_digest"] = "sha256:" + "0" * 15 + "1"
    entries.insert(index + 1, again)


def effect_defect(draw: st.DrawFn, journal: Journal) -> None:
    entries = journal.entries
    effects = _indexes(entries, "side_effect")
    points = _inside_turns(entries)
    if not effects:
        at = draw(st.sampled_from(points))
        _insert(entries, at, {"event": "side_effect", "effect_id": "eff_x", "kind": "command"})
        effects = [at]
        points = _inside_turns(entries)
    index = draw(st.sampled_from(effects))
    later = [p for p in points if p > index] or [index + 1]
    body = copy.deepcopy(entries[index])
    body.pop("call_id", None)  # a replay of the effect, outside the call that did it
    _insert(entries, draw(st.sampled_from(later)), body)


def resume_defect(draw: st.DrawFn, journal: Journal) -> None:
    lines = number(journal.entries, journal.session)
    resumes = [e for e in lines if e["event"] == "resume"]
    entry = draw(st.sampled_from(resumes))
    entry["last_seq_seen"] -= draw(st.integers(1, max(1, entry["last_seq_seen"])))
    journal.numbered = lines


DEFECTS: dict[str, Defect] = {
    "T.sequence-integrity": sequence_defect,
    "T.turn-loop-pairing": pairing_defect,
    "T.assembly-budget-honesty": budget_defect,
    "T.staleness-at-use": staleness_defect,
    "T.citation-at-use": citation_defect,
    "T.deterministic-composition": composition_defect,
    "T.effect-exactly-once": effect_defect,
    "T.resume-integrity": resume_defect,
}


@st.composite
def defective_journals(draw: st.DrawFn, check_id: str) -> Journal:
    """A valid journal with one defect that trips ``check_id`` and no other check."""
    journal = draw(journals(crash=True if check_id == "T.resume-integrity" else None))
    DEFECTS[check_id](draw, journal)
    journal.defect = check_id
    return journal


# ------------------------------------------------------------------ reader cases

READER_VARIANTS = ("unknown-event", "extra-fields", "bad-body", "torn-tail", "corrupt-line")
UNKNOWN_EVENTS = ("context_compacted", "budget_warning", "tool_call_v2", "frame_evicted")


@dataclass(frozen=True)
class JournalCase:
    """Journal bytes for grading a journal *reader* (the ``trace`` profile)."""

    variant: str
    data: bytes


def _dumps(entry: Entry) -> bytes:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()


@st.composite
def journal_cases(draw: st.DrawFn, variants: tuple[str, ...] = READER_VARIANTS) -> JournalCase:
    """Journals that exercise a reader's forward-compatibility rules (public strategy)."""
    from stella_conform.generators.journal_edges import JOURNAL_VARIANTS, edge_entries

    unknown = [v for v in variants if v not in READER_VARIANTS and v not in JOURNAL_VARIANTS]
    if unknown:
        raise ValueError(f"unknown journal variant {unknown[0]!r}")
    variant = draw(st.sampled_from(variants))
    journal = draw(journals(max_turns=2))
    if variant == "unknown-event":
        for _ in range(draw(st.integers(1, 2))):
            at = draw(st.integers(1, len(journal.entries)))
            tag = draw(st.sampled_from(UNKNOWN_EVENTS))
            _insert(journal.entries, at, {"event": tag, "detail": {"n": 1}})
    lines = number(journal.entries, journal.session)
    if variant in JOURNAL_VARIANTS:  # the edge cells of generators/journal_edges.py
        edge_entries(draw, lines, variant)
    if variant == "extra-fields":
        for entry in draw(st.lists(st.sampled_from(lines), min_size=1, max_size=3)):
            entry["x_vendor"] = draw(st.sampled_from((None, 7, "v", [1], {"deep": True})))
            for frame in entry.get("frames", [])[:1]:
                frame["score"] = 0.5
    elif variant == "bad-body":
        entry = draw(st.sampled_from(lines))
        required = [k for k in _REQUIRED[entry["event"]] if k in entry]
        name = draw(st.sampled_from(["seq", "at", "session", *required]))
        if draw(st.booleans()):
            del entry[name]
        else:
            integers = ("seq", "budget_tokens", "declared_total_tokens", "last_seq_seen")
            entry[name] = "12" if name in integers else {"session": None}.get(name, 12345)
    raw = [_dumps(e) for e in lines]
    if draw(st.integers(0, 2)) == 0:  # a third re-spelled: whitespace, key order, escapes
        spelled = _journal_spelling(draw)
        raw = [spelled(e).encode("utf-8") for e in lines]
    if variant == "torn-tail":
        # cut inside the object itself, never in a spelling's whitespace around it: a cut
        # in the leading whitespace leaves a blank line, one in the trailing a whole entry
        last = raw[-1]
        first = len(last) - len(last.lstrip(b" \t")) + 1
        end = len(last.rstrip(b" \t")) - 1
        raw[-1] = last[: draw(st.integers(first, end))]
        return JournalCase(variant, _framed(draw, raw, final_newline=False))
    if variant == "corrupt-line":
        at = draw(st.integers(0, len(raw) - 1))
        if at + 2 < len(raw) and draw(st.integers(0, 3)) == 0:
            # two entries on one line (a lost newline): not one JSON object, not the last
            raw[at : at + 2] = [raw[at] + draw(st.sampled_from((b"", b" "))) + raw[at + 1]]
        else:
            corrupt = (b'{"seq":', b"not json", b'{"event":"turn_start",}')
            raw.insert(at, draw(st.sampled_from(corrupt)))
    return JournalCase(variant, _framed(draw, raw))


def _framed(draw: st.DrawFn, raw: list[bytes], final_newline: bool = True) -> bytes:
    """The lines joined as a writer may end them: a third of journals with CRLF on every
    line or some, and blank lines between lines (never after the last: a torn last line
    stays unterminated)."""
    if draw(st.integers(0, 2)) != 0:
        return b"\n".join(raw) + (b"\n" if final_newline else b"")
    from stella_conform.generators.content import SEEDS, Content

    c = Content(draw(SEEDS))
    every = c.chance(0.3)
    out = []
    for index, line in enumerate(raw):
        if index and c.chance(0.15):
            out.append(c.pick((b"", b"  ", b"\t", b"\r")) + b"\n")
        end = b"\r\n" if every or c.chance(0.3) else b"\n"
        out.append(line + (end if final_newline or index < len(raw) - 1 else b""))
    return b"".join(out)


def _journal_spelling(draw: st.DrawFn) -> Callable[[Entry], str]:
    """Another way to write each line that JSON allows (no newline: a line is one object)."""
    from stella_conform.generators.hazards import KEY_ORDERS, Spelling, string_writer

    string = string_writer(draw)
    order = draw(st.sampled_from(("as-is", "reversed", "sorted")))
    spelling = Spelling(
        draw(st.sampled_from((": ", " : ", ":\t", ":\r"))),
        draw(st.sampled_from((", ", ",", ",\t", "\r,"))),
        KEY_ORDERS[order],
        inner=draw(st.sampled_from(("", " ", "\t"))),
        string=string,
    )
    lead, trail = draw(st.sampled_from(("", " ", "\t"))), draw(st.sampled_from(("", " ", "\t")))
    return lambda entry: lead + spelling.write(entry) + trail


#: Required body fields per event (the schema's), for the bad-body variant.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "session_start": ("agent", "harness"),
    "session_end": ("outcome",),
    "resume": ("last_seq_seen",),
    "turn_start": (),
    "turn_end": (),
    "prompt_assembled": ("budget_tokens", "declared_total_tokens", "frames"),
    "model_response": ("tool_calls",),
    "tool_call": ("call_id", "tool"),
    "tool_result": ("call_id", "status"),
    "verify_observed": ("frame", "verdict"),
    "side_effect": ("effect_id", "kind"),
}

__all__ = [
    "DEFECTS",
    "READER_VARIANTS",
    "Journal",
    "JournalCase",
    "defective_journals",
    "journal_cases",
    "journals",
    "number",
]
