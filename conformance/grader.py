"""Observed against expected, per check.

The expected side is always the reference decoder's reading of the case's
bytes (or a fixture's expectation file, which the decoder is tested to agree
with).  A judge answers ``pass``, ``fail`` with what differed, ``n/a`` (this
case says nothing about the check, usually because another check already
failed it), ``crash`` (the client died on the case: an uncaught exception, a
panic, a signal; the client's own failure, as a rejected valid stream is), or
``error`` (the case could not be judged: the client hung or broke the adapter
protocol, or the kit ran out of time).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from stella_conform.conformance.checks import Check
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.clients.wrapper import expected_outcome
from stella_conform.oracle.decoder import Decoded, Kind, LineOutcome, RunSummary, decode_all
from stella_conform.oracle.envelope import EnvelopeReading, read_envelope
from stella_conform.oracle.journal import Journal, read_journal
from stella_conform.oracle.readings import (
    Alternative,
    Readings,
    read_envelope_readings,
    read_stream,
)
from stella_conform.schemas.vocabulary import Vocabulary

Verdict = Literal["pass", "fail", "n/a", "crash", "error"]


@dataclass
class GradedCase:
    """A case as the grader sees it: bytes, where it came from, and the oracle's reading."""

    name: str
    stream: bytes
    source: str  # "fixture" or "generated"
    mutations: tuple[str, ...] = ()
    vocab: Vocabulary | None = field(default=None, repr=False)
    #: "stream" (reader, dashboard, recorder), "envelope" or "scenario" (wrapper).
    kind: str = "stream"
    #: Envelope cases: the stella command that printed the document.
    command: str = "stella run --output-format json"
    #: Wrapper cases: how the fake stella ends the run (exit, reason, die_mid_line, ...).
    scenario: dict[str, Any] = field(default_factory=dict)
    #: Envelope cases: the parts the client claims to read (``None``: all of them).
    reads: frozenset[str] | None = None

    #: The oracle's reading when the generator already made it (decoded once per case).
    decoded: Decoded | None = field(default=None, repr=False, compare=False)
    #: With ``decoded``: the registered points that careful decode noted.
    touched: frozenset[str] | None = field(default=None, repr=False, compare=False)
    #: The registered reading this view of the case follows ("" for the default).
    reading_id: str = ""
    #: Generated cases: the lines the generator's mutations touched (shown in excerpts).
    marked: tuple[int, ...] = ()

    @cached_property
    def readings(self) -> Readings:
        """Every conforming reading of a stream case (the default first).

        A generated case comes with its careful decode (the default reading and the
        points it touched), so the stream is decoded again only for an alternative.
        """
        if self.decoded is not None and self.touched is not None:
            return read_stream(self.stream, self.vocab, decoded=(self.decoded, self.touched))
        return read_stream(self.stream, self.vocab)

    @cached_property
    def _decoded(self) -> tuple[list[LineOutcome], RunSummary]:
        if self.decoded is not None:
            return self.decoded.outcomes, self.decoded.summary
        default = self.readings.default
        return default.outcomes, default.summary

    @property
    def alternatives(self) -> tuple[Alternative, ...]:
        """The other conforming readings of a stream or an envelope's events (empty when the
        contract is plain)."""
        if self.reading_id:
            return ()
        if self.kind == "envelope":
            return self._envelope_alternatives
        if self.kind != "stream":
            return ()
        return self.readings.alternatives

    @cached_property
    def _envelope_alternatives(self) -> tuple[Alternative, ...]:
        return read_envelope_readings(self.stream, self.command, self.vocab, self.reads)

    def under(self, alternative: Alternative) -> GradedCase:
        """This case as the oracle reads it when the client takes ``alternative``."""
        view = copy.copy(self)
        if alternative.document is not None:
            view.__dict__["envelope"] = alternative.document
        else:
            view.__dict__["_decoded"] = (alternative.outcomes, alternative.summary)
        view.reading_id = alternative.reading
        return view

    @cached_property
    def envelope(self) -> EnvelopeReading:
        return read_envelope(self.stream, self.command, self.vocab, self.reads)

    @cached_property
    def wrapper(self) -> dict[str, Any]:
        return expected_outcome(self.scenario)

    @cached_property
    def journal(self) -> Journal:
        return read_journal(self.stream)

    def reading(self) -> dict[str, Any]:
        """The oracle's reading of this case, whatever its kind, as JSON."""
        if self.kind == "envelope":
            return self.envelope.to_json()
        if self.kind == "scenario":
            return dict(self.wrapper)
        if self.kind == "journal":
            return self.journal.summary()
        return self.expected.to_json()

    @property
    def expected_verdict(self) -> str:
        if self.kind == "envelope":
            return self.envelope.verdict
        if self.kind == "scenario":
            return str(self.wrapper["verdict"])
        if self.kind == "journal":
            return self.journal.verdict
        return self.expected.verdict

    @property
    def expected(self) -> RunSummary:
        return self._decoded[1]

    @property
    def outcomes(self) -> list[LineOutcome]:
        return self._decoded[0]


@dataclass
class Judgment:
    verdict: Verdict
    message: str = ""
    #: The message without the client's own words (the reason it gave for a rejection
    #: names the case's particulars: the unknown type, the JSON error): what tells one
    #: bug from another (``fuzz``); empty when the message has none.
    signature: str = ""
    #: Registered points of the case and the reading (A or B) the client took at each,
    #: when a pass tells (information only, never a verdict).
    readings: dict[str, str] = field(default_factory=dict)
    #: The conforming reading this judgment was made under (its label; "" the default):
    #: of a pass, the first reading the client matches; of a fail, the one whose verdict
    #: it matched (what ``replay --check`` compares the client's reading with).
    reading: str = ""


@dataclass
class Context:
    """Facts about the client measured once per check (e.g. its usual stderr)."""

    baseline_stderr_lines: int = 0
    #: The summary fields the check compares (set per check by :func:`judge`).
    fields: tuple[str, ...] = ()
    #: Whether the client can report a summary in the mode it runs in.
    reporting: bool = True
    #: The summary fields the client claims to compute (``None``: every field).
    computes: frozenset[str] | None = None
    #: The client reports a summary only, no line observations.
    summary_only: bool = False
    #: How a self-comparing judge names the paired stream in its message.
    paired_words: str = ""


def judge(check: Check, case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Judge under every conforming reading: a client passes if it matches any one of them.

    The judge runs under the default reading and under each registered
    alternative the case reaches.  A pass records, per registered point, the
    reading (``A`` or ``B``) every passing reading agrees on: what the client
    took, as information.  A failure reports the reading whose verdict the
    client matched (so the message is about what it got wrong *within* that
    reading), else the default's.
    """
    if not obs.ok and check.judge != "lockstep":
        return unanswered(obs)
    if obs.summary is not None and case.kind == "stream":
        summaries = [case.expected, *(a.summary for a in case.alternatives)]
        obs.summary = expand_digests(obs.summary, summaries)
    ctx.fields = check.fields
    if ctx.computes is not None:
        ctx.fields = tuple(f for f in check.fields if _summary_key(f) in ctx.computes)
    return _under_readings(JUDGES[check.judge], case, obs, ctx)


def judge_verdict(case: GradedCase, obs: Observation) -> Judgment:
    """The client's verdict alone, judged as :func:`judge` judges it: under every conforming
    reading (what ``replay`` without ``--check`` and ``smoke`` judge, so that a stream
    ``run`` passes a client on is one they pass it on too)."""
    if not obs.ok:
        return unanswered(obs)
    return _under_readings(_verdict, case, obs, Context())


def _under_readings(
    fn: Callable[[GradedCase, Observation, Context], Judgment],
    case: GradedCase,
    obs: Observation,
    ctx: Context,
) -> Judgment:
    """``fn`` under the default reading, then under each alternative (see :func:`judge`)."""
    first = fn(case, obs, ctx)
    alternatives = case.alternatives
    if first.verdict in ("crash", "error") or not alternatives:
        return first
    results = [(None, first)] + [(a, fn(case.under(a), obs, ctx)) for a in alternatives]
    for a, j in results:
        j.reading = a.reading if a is not None else ""
    passing = [a for a, j in results if j.verdict == "pass"]
    if passing or first.verdict == "pass":
        chosen = next(j for _, j in results if j.verdict == "pass")
        chosen.readings = _agreed(passing, alternatives, _default_touched(case))
        return chosen
    fails = [(a, j) for a, j in results if j.verdict == "fail"]
    matched = [
        j
        for a, j in fails
        if obs.verdict == (a.verdict if a is not None else case.expected_verdict)
    ]
    return (matched or [j for _, j in fails] or [first])[0]


def _default_touched(case: GradedCase) -> frozenset[str] | None:
    """The points the default reading of a stream case reached (``None``: not known)."""
    if case.kind != "stream":
        return None
    return case.readings.default.touched


def _agreed(
    passing: Sequence[Alternative | None],
    alternatives: Sequence[Alternative],
    default_touched: frozenset[str] | None = None,
) -> dict[str, str]:
    """Per point that has a reading B: ``A`` or ``B`` when every passing reading takes it.

    A passing reading that never reaches the point (it rejected the stream first) leaves
    the client's choice there open: nothing is said about that point."""
    points = sorted({p for a in alternatives for p in a.taken})
    out = {}
    for point in points:
        taken, open_ = set(), False
        for a in passing:
            took = a is not None and point in a.taken
            reached = a.touched if a is not None else default_touched
            if took or reached is None or point in reached:
                taken.add("B" if took else "A")
            else:
                open_ = True
        if len(taken) == 1 and not open_:
            out[point] = taken.pop()
    return out


def unanswered(obs: Observation) -> Judgment:
    """A case the client gave no verdict on: ``crash`` when it died (its own failure, on any
    rule: a crash on an unknown type breaks rule 3 as surely as a rejection does), else
    ``error`` (a hang, a protocol error: nothing to judge)."""
    if obs.status == "crash":
        detail = obs.detail.removeprefix("crashed: ")
        return Judgment("crash", f"client crash: {detail}")
    return Judgment("error", f"client {obs.describe()}")


def _summary_key(name: str) -> str:
    return "texts" if name == "texts-unordered" else name


def expand_digests(summary: dict[str, Any], readings: Sequence[RunSummary]) -> dict[str, Any]:
    """A summary with each ``{"sha256": HEX}`` long text replaced by the text it stands for.

    A digest of a text some conforming reading of the case holds becomes that text, so
    every judge compares strings as usual; any other digest becomes a string that says
    what it was (and matches nothing).
    """
    texts = summary.get("texts")
    values = [summary.get("final_text"), summary.get("preview")]
    values += texts if isinstance(texts, list) else []
    if not any(isinstance(v, dict) for v in values):
        return summary
    known: dict[str, str] = {}
    for reading in readings:
        for t in [*reading.texts, reading.preview]:
            if t is not None:
                known.setdefault(_sha256(t), t)

    def text(value: Any) -> Any:
        if not isinstance(value, dict) or "sha256" not in value:
            return value
        return known.get(value["sha256"], f"<a text whose sha256 is {value['sha256']}>")

    out = dict(summary)
    for key in ("final_text", "preview"):
        if key in out:
            out[key] = text(out[key])
    if isinstance(out.get("texts"), list):
        out["texts"] = [text(v) for v in out["texts"]]
    return out


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _verdict_ok(case: GradedCase, obs: Observation) -> bool:
    return obs.verdict == case.expected.verdict


def expected_verdict_text(case: GradedCase) -> str:
    """``accept``, or ``reject at line N (why)``, then ``or ...`` per other conforming
    reading: a correct client's verdict, as ``run``, ``replay`` and ``smoke`` print it."""
    exp = case.expected
    text = (
        f"reject at line {exp.rejected_line} ({exp.reason})"
        if exp.verdict == "reject"
        else "accept"
    )
    others = [
        ("accept" if a.summary.verdict == "accept" else f"reject at line {a.summary.rejected_line}")
        + f" (reading {a.reading})"
        for a in case.alternatives
    ]
    return " or ".join([text, *others])


def _wrong_verdict(expected: str, obs: Observation) -> Judgment:
    """A fail for the client's verdict: what was expected, then what the client said, in
    its own words (signed without them)."""
    return Judgment(
        "fail",
        f"{expected}; client: {obs.describe()}",
        signature=f"{expected}; client: {obs.describe(own_words=False)}",
    )


def _verdict(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _verdict_ok(case, obs):
        return Judgment("pass")
    return _wrong_verdict(f"expected {expected_verdict_text(case)}", obs)


def _lockstep(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if obs.stalled_at is not None:
        return Judgment(
            "fail",
            f"no observation for line {obs.stalled_at} within the line timeout after it was "
            "written: the client reads ahead or buffers the whole stream",
        )
    if not obs.ok:
        return unanswered(obs)
    return Judgment("pass")


def _count(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    if "unrecognized_events" not in summary:
        return Judgment("fail", "the summary has no unrecognized_events count")
    want, got = case.expected.unrecognized_events, summary["unrecognized_events"]
    if got != want:
        return Judgment("fail", _count_message(case, want, got, summary))
    return Judgment("pass")


def _count_message(case: GradedCase, want: int, got: Any, summary: dict[str, Any]) -> str:
    """Name the types behind a wrong count, so the author sees which events it misjudged."""
    unknown = list(dict.fromkeys(str(o.tag) for o in case.outcomes if o.kind is Kind.UNKNOWN))
    text = f"expected {want} unrecognized event(s)"
    if unknown:
        text += f" ({', '.join(map(repr, unknown))})"
    text += f"; client counted {got}"
    listed = summary.get("unrecognized_types")
    if isinstance(listed, list):
        extra = [t for t in listed if isinstance(t, str) and t not in unknown]
        missing = [t for t in unknown if t not in listed]
        if extra:
            text += f"; its unrecognized_types also lists {', '.join(map(repr, extra))}"
        if missing:
            text += f"; its unrecognized_types misses {', '.join(map(repr, missing))}"
    return text


def _line_disagreements(case: GradedCase, obs: Observation, *, unknown_only: bool) -> list[str]:
    problems = []
    for outcome in case.outcomes:
        if outcome.kind in (Kind.BLANK, Kind.TORN, Kind.REJECT):
            continue
        if unknown_only and outcome.kind is not Kind.UNKNOWN:
            continue
        seen = obs.lines.get(outcome.line)
        if seen is None:
            problems.append(f"line {outcome.line}: no observation")
            continue
        if seen["outcome"] != outcome.kind.value:
            tag = f" {outcome.tag!r}" if outcome.tag is not None else ""
            got_type = f" as {seen.get('type')!r}" if seen.get("type") else ""
            problems.append(
                f"line {outcome.line}:{tag} is {outcome.kind.value}; client read it "
                f"{seen['outcome']}{got_type}"
            )
        elif outcome.kind is Kind.KNOWN and seen.get("type") not in (
            None,
            outcome.tag,
            _raw_type(outcome),
        ):
            problems.append(
                f"line {outcome.line}: type {outcome.tag!r}; client read it as {seen['type']!r}"
            )
    return problems


def _raw_type(outcome: LineOutcome) -> Any:
    """The type the line itself spells (an old name read as today's: ``judge_verdict``)."""
    return outcome.raw.get("type") if isinstance(outcome.raw, dict) else None


def _no_guessing(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    problems = [] if ctx.summary_only else _line_disagreements(case, obs, unknown_only=True)
    summary = obs.summary or {}
    got, want = summary.get("final_text"), case.expected.final_text
    if isinstance(got, str) and got != want:
        # Only text borrowed from an unknown event is guessing; text garbled some other way
        # (previews appended, order from ts) is the dashboard profile's business.
        borrowed = [
            t
            for o in case.outcomes
            if o.kind is Kind.UNKNOWN
            for t in _strings(o.raw)
            if t and t in got and t not in (want or "")
        ]
        if borrowed:
            problems.append(
                f"final text {json.dumps(got)} (taken from an unrecognized event), expected "
                f"{json.dumps(want)}"
            )
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k != "type" for t in _strings(v)]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def _dispatch(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Each line read as the oracle reads it; in a rejected stream, the lines before the
    rejection (when the client rejected the same line: otherwise that is another check's).
    A client that reports no lines (exit mode) is held to the verdict alone."""
    if not obs.lines:
        return _verdict(case, obs, ctx)
    if not _verdict_ok(case, obs):
        return Judgment("n/a")
    if case.expected.verdict != "accept" and obs.rejected_line != case.expected.rejected_line:
        return Judgment("n/a")
    problems = _line_disagreements(case, obs, unknown_only=False)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _quiet(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.unrecognized_events == 0:
        return Judgment("n/a")
    extra = obs.stderr_lines - ctx.baseline_stderr_lines
    if extra >= 1:
        return Judgment(
            "fail",
            f"{obs.stderr_lines} stderr line(s) for {case.expected.unrecognized_events} "
            f"unrecognized event(s), against {ctx.baseline_stderr_lines} on a run without "
            f"any: {obs.stderr_tail.strip()[:160]!r}",
        )
    return Judgment("pass")


def _rejected_line(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if case.expected.verdict != "reject" or obs.verdict != "reject":
        return Judgment("n/a")
    want, got = case.expected.rejected_line, obs.rejected_line
    if got != want:
        named = f"line {got}" if got is not None else "no line"
        return Judgment("fail", f"rejected {named}; the bad line is {want}")
    return Judgment("pass")


def _last_line_kept(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    real = [o for o in case.outcomes if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    if not real:
        return Judgment("n/a")
    last = real[-1]
    seen = obs.lines.get(last.line)
    if seen is None or seen["outcome"] != last.kind.value:
        got = seen["outcome"] if seen else "nothing"
        return Judgment(
            "fail",
            f"line {last.line} (complete, no trailing newline) is {last.kind.value}; client: {got}",
        )
    return Judgment("pass")


def _content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then (when the client reports) what it read from the lines it kept."""
    if not _verdict_ok(case, obs):
        return _wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    problems = _field_problems(case.reading(), obs.summary, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


#: Line separators a reader may fold or split at: what ``str.splitlines()`` splits at.
SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_FOLD = str.maketrans(dict.fromkeys(SEPARATORS, "\n"))


def _folded(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate(_FOLD)
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


def _separator_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then the texts the client computes, judged for their line separators
    only: a text that differs from the stream's in nothing but its separators (U+2028 shown
    as ``\\n``) fails; one that differs otherwise is another check's finding (n/a)."""
    if not _verdict_ok(case, obs):
        return _wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    want, got = case.reading(), obs.summary
    problems, unrelated = [], False
    for name in ctx.fields:
        key = _summary_key(name)
        if key not in got:
            problems.append(f"the summary has no {key!r}")
        elif got[key] != want.get(key):
            if _folded(got[key]) != _folded(want.get(key)):
                unrelated = True  # wrong for another reason: another check's finding
                continue
            problems.append(
                f"{key}: expected {json.dumps(want.get(key))}, client {json.dumps(got[key])} "
                "(the same text with other line separators)"
            )
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("n/a") if unrelated else Judgment("pass")


def _legacy_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The verdict, then the client's reading against its own reading of the same stream
    spelled with the self-describing names (the paired stream): a legacy spelling read
    differently (the legacy field preferred, or not read) fails; no other flaw can."""
    if not _verdict_ok(case, obs):
        return _wrong_verdict(f"expected {expected_verdict_text(case)}", obs)
    if case.expected.verdict != "accept" or obs.summary is None:
        return Judgment("pass")
    if obs.paired is None:
        return Judgment("pass")  # no legacy spelling in the stream: nothing to pair it with
    return _against_itself(
        obs, ctx, "the self-describing names instead", "with its legacy spellings"
    )


def _self_problems(obs: Observation, ctx: Context) -> list[str] | None:
    """The check's fields where the client read the case and its paired stream differently
    (``None``: nothing to compare)."""
    twin = obs.paired
    if twin is None or not twin.ok or obs.summary is None or twin.summary is None:
        return None
    problems = []
    for name in ctx.fields:
        key = "texts" if name == "texts-unordered" else name
        got, base = obs.summary.get(key), twin.summary.get(key)
        if got != base:
            problems.append(
                f"{key}: {json.dumps(got)}, but {json.dumps(base)} with {ctx.paired_words}"
            )
    return problems


def _against_itself(obs: Observation, ctx: Context, paired: str, as_sent: str) -> Judgment:
    """The client's reading of the case against its reading of the paired variant."""
    ctx.paired_words = paired
    problems = _self_problems(obs, ctx)
    if problems is None:
        return Judgment("n/a")
    if problems:
        return Judgment("fail", f"{as_sent}: " + "; ".join(problems[:3]))
    return Judgment("pass")


def _last_line_content(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client reads a complete last line without ``\\n`` as it reads it with one (n/a when
    the line was not seen at all: R6.complete-last-line-kept fails that).  A client that
    reports only a summary is compared summary against summary: dropping the line shows
    there as well, and no other check can see it."""
    if case.stream.endswith(b"\n"):
        return Judgment("n/a")
    if not ctx.summary_only and _last_line_kept(case, obs, ctx).verdict != "pass":
        return Judgment("n/a")
    return _against_itself(obs, ctx, "the final newline added", "without the final newline")


def _torn_adds_nothing(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client reads a stream ending on a torn line as it reads the stream without it."""
    if not _verdict_ok(case, obs) or not case.expected.torn_final_line:
        return Judgment("n/a")
    return _against_itself(obs, ctx, "the torn line left off", "with the torn final line")


# ------------------------------------------------------------ reading a summary


def _normal(name: str, value: Any) -> Any:
    """Compare readings as values, not spellings: unordered sets sorted, absent scopes empty."""
    if name == "unrecognized_types" and isinstance(value, list):
        return sorted(str(v) for v in value)
    if name == "texts-unordered" and isinstance(value, list):
        return sorted(str(v) for v in value)
    if name == "stages" and isinstance(value, dict):
        return {scope: list(value.get(scope) or []) for scope in ("turn", "run")}
    return value


def _field_problems(
    want: dict[str, Any], summary: dict[str, Any], fields: Sequence[str]
) -> list[str]:
    problems = []
    for name in fields:
        key = "texts" if name == "texts-unordered" else name
        if key not in summary:
            problems.append(f"the summary has no {key!r}")
            continue
        expected, got = _normal(name, want.get(key)), _normal(name, summary[key])
        if expected != got:
            problems.append(f"{key}: expected {json.dumps(expected)}, client {json.dumps(got)}")
    return problems


def _reading(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """The client's summary agrees with the oracle on the check's fields (accepted cases)."""
    if obs.verdict != case.expected_verdict or case.expected_verdict != "accept":
        return Judgment("n/a")
    problems = _field_problems(case.reading(), obs.summary or {}, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


#: Above this, a double (JavaScript's number, a float64 column) no longer holds every integer.
EXACT_IN_A_DOUBLE = 2**53


def _elapsed(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Elapsed time, where a double can hold every ts; D.integers-exact grades the rest."""
    for outcome in case.outcomes:
        ts = outcome.raw.get("ts") if isinstance(outcome.raw, dict) else None
        if isinstance(ts, int) and ts > EXACT_IN_A_DOUBLE:
            return Judgment("n/a")
    return _reading(case, obs, ctx)


def _clock_runs_backwards(case: GradedCase) -> bool:
    """Some ts lower than the one before it: elapsed time then depends on the clamp."""
    last = None
    for outcome in case.outcomes:
        ts = outcome.raw.get("ts") if isinstance(outcome.raw, dict) else None
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            continue
        if last is not None and ts < last:
            return True
        last = ts
    return False


def _reported_fields(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Like :func:`_reading`, on the check's fields the client reports (n/a if none)."""
    if obs.verdict != case.expected_verdict or case.expected_verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    present = tuple(f for f in ctx.fields if f in summary)
    if not present:
        return Judgment("n/a")
    problems = _field_problems(case.reading(), summary, present)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _exact_integers(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """:func:`_reported_fields`, leaving elapsed time out where a ts runs backwards.

    There the right answer turns on the clamp, which is D.elapsed-clamped's rule: a
    dashboard that keeps every unit but does not clamp must fail that check, not this one.
    """
    if "elapsed_ms" in ctx.fields and _clock_runs_backwards(case):
        ctx = replace(ctx, fields=tuple(f for f in ctx.fields if f != "elapsed_ms"))
    return _reported_fields(case, obs, ctx)


def _stream_order(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    """Texts in stream order; n/a when their content already differs (another check's job)."""
    if not _verdict_ok(case, obs) or case.expected.verdict != "accept":
        return Judgment("n/a")
    summary = obs.summary or {}
    if "texts" not in summary:
        return Judgment("fail", "the summary has no 'texts'")
    want, got = case.expected.texts, [str(t) for t in summary["texts"]]
    if sorted(want) != sorted(got):
        return Judgment("n/a")
    if want != got:
        return Judgment(
            "fail",
            f"texts in the order {json.dumps(got)}; the stream's order is {json.dumps(want)}",
        )
    return Judgment("pass")


# ------------------------------------------------------------ envelopes


def _verdict_then_fields(
    want: str, why: str, reading: dict[str, Any], obs: Observation, ctx: Context
) -> Judgment:
    """The verdict on a whole document, then (when the client reports) the check's fields."""
    if obs.verdict != want:
        return _wrong_verdict(f"expected {want}{why}", obs)
    if want != "accept" or obs.summary is None or not ctx.fields:
        return Judgment("pass")
    problems = _field_problems(reading, obs.summary, ctx.fields)
    if problems:
        return Judgment("fail", "; ".join(problems[:3]))
    return Judgment("pass")


def _envelope(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    want = case.envelope
    why = f" ({want.reason})" if want.reason else ""
    return _verdict_then_fields(want.verdict, why, want.to_json(), obs, ctx)


def _journal(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    want = case.journal
    why = f" at line {want.rejected_line} ({want.reason})" if want.rejected_line else ""
    return _verdict_then_fields(want.verdict, why, want.summary(), obs, ctx)


# ------------------------------------------------------------ recorders


def json_equal(a: Any, b: Any) -> bool:
    """Equal as parsed JSON: numbers by value, booleans apart from numbers, key order ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _covers(full: Any, part: Any) -> bool:
    """``part`` is ``full`` with some object keys left out (what a lossy recorder writes)."""
    if isinstance(full, dict) and isinstance(part, dict):
        return all(k in full and _covers(full[k], v) for k, v in part.items())
    if isinstance(full, list) and isinstance(part, list):
        return len(full) == len(part) and all(
            _covers(f, p) for f, p in zip(full, part, strict=True)
        )
    return json_equal(full, part)


def _recorded(case: GradedCase, obs: Observation) -> tuple[list[LineOutcome], str | None]:
    """The recording's events, or why it cannot be graded."""
    if obs.verdict != "accept" or case.expected.verdict != "accept":
        return [], "n/a"
    decoded = decode_all(obs.recording or b"", case.vocab)
    real = [o for o in decoded.outcomes if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    return real, None


def _missing(wanted: list[Any], recorded: list[Any]) -> list[Any]:
    pool = list(recorded)
    lost = []
    for value in wanted:
        index = next((i for i, r in enumerate(pool) if json_equal(value, r)), None)
        if index is None:
            lost.append(value)
        else:
            pool.pop(index)
    return lost


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def _recorded_order(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    real, skip = _recorded(case, obs)
    if skip:
        return Judgment("n/a")
    wanted = [o.raw for o in case.outcomes if o.kind is Kind.KNOWN]
    got = [o.raw for o in real if o.kind is Kind.KNOWN]
    used = [False] * len(wanted)
    last = -1
    for value in got:
        index = next((i for i, w in enumerate(wanted) if not used[i] and _covers(w, value)), None)
        if index is None:
            continue  # an event the recorder added or altered: not this check's business
        if index < last:
            return Judgment(
                "fail",
                f"recorded {_short(value)} after {_short(wanted[last])}; the stream has them "
                "the other way round",
            )
        used[index], last = True, index
    if not all(used):
        lost = wanted[used.index(False)]
        return Judgment(
            "fail", f"{used.count(False)} known event(s) not recorded, e.g. {_short(lost)}"
        )
    return Judgment("pass")


def _recorded_whole(kind: Kind) -> Callable[[GradedCase, Observation, Context], Judgment]:
    def judge_(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
        real, skip = _recorded(case, obs)
        if skip:
            return Judgment("n/a")
        wanted = [o.raw for o in case.outcomes if o.kind is kind]
        if not wanted:
            return Judgment("n/a")
        lost = _missing(wanted, [o.raw for o in real])
        if lost:
            what = "unrecognized" if kind is Kind.UNKNOWN else "known"
            return Judgment(
                "fail",
                f"{len(lost)} {what} event(s) not recorded whole (every field, as parsed JSON), "
                f"e.g. {_short(lost[0])}",
            )
        return Judgment("pass")

    return judge_


def _recorded_torn(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if not case.expected.torn_final_line or obs.verdict != "accept":
        return Judgment("n/a")
    decoded = decode_all(obs.recording or b"", case.vocab)
    if decoded.summary.verdict == "reject":
        return Judgment(
            "fail",
            f"the recording is corrupt at line {decoded.summary.rejected_line} "
            f"({decoded.summary.reason}): the torn tail was written where a reader "
            "cannot forgive it",
        )
    return Judgment("pass")


# ------------------------------------------------------------ wrappers


def _invocation_problem(obs: Observation) -> str | None:
    if not obs.invocations:
        return "the client never launched stella"
    errors = [i.get("parse_error") for i in obs.invocations if i.get("parse_error")]
    return f"stella refused the command line: {errors[0]}" if errors else None


def _wrapper_outcome(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _invocation_problem(obs):
        return Judgment("n/a")  # W.output-format-placement says why
    want = case.wrapper
    code = case.scenario.get("exit", 0)
    if obs.verdict != want["verdict"]:
        exit_ = 0 if want["verdict"] == "accept" else 1
        return _wrong_verdict(
            f"stella exited {code} ({want['outcome']}): the wrapper should exit {exit_}", obs
        )
    if obs.summary is not None and obs.summary.get("outcome") != want["outcome"]:
        return Judgment(
            "fail",
            f"stella exited {code}: expected outcome {want['outcome']!r}, "
            f"client {obs.summary.get('outcome')!r}",
        )
    return Judgment("pass")


def _wrapper_reason(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    if _invocation_problem(obs) or obs.summary is None:
        return Judgment("n/a")
    if not any(i.get("output_format") == "json" for i in obs.invocations):
        return Judgment("n/a")  # the reason is in the json envelope; the client chose another
    want = case.wrapper["reason"]
    got = obs.summary.get("reason")
    if got != want:
        return Judgment("fail", f"stopped on purpose because {want!r}; client read {got!r}")
    return Judgment("pass")


def _wrapper_invocation(case: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    problem = _invocation_problem(obs)
    return Judgment("fail", problem) if problem else Judgment("pass")


JUDGES: dict[str, Callable[[GradedCase, Observation, Context], Judgment]] = {
    "verdict": _verdict,
    "lockstep": _lockstep,
    "count": _count,
    "no-guessing": _no_guessing,
    "dispatch": _dispatch,
    "quiet": _quiet,
    "rejected-line": _rejected_line,
    "last-line-kept": _last_line_kept,
    "last-line-content": _last_line_content,
    "torn-adds-nothing": _torn_adds_nothing,
    "content": _content,
    "separator-content": _separator_content,
    "legacy-content": _legacy_content,
    "reading": _reading,
    "reported-fields": _reported_fields,
    "exact-integers": _exact_integers,
    "elapsed": _elapsed,
    "stream-order": _stream_order,
    "envelope": _envelope,
    "recorded-order": _recorded_order,
    "recorded-unknown": _recorded_whole(Kind.UNKNOWN),
    "recorded-known": _recorded_whole(Kind.KNOWN),
    "recorded-torn": _recorded_torn,
    "wrapper-outcome": _wrapper_outcome,
    "wrapper-reason": _wrapper_reason,
    "wrapper-invocation": _wrapper_invocation,
    "journal": _journal,
}


def combine(check: Check, judgments: Sequence[Judgment]) -> tuple[str, str]:
    """One outcome for a check from its per-case judgments."""
    fails = [j for j in judgments if j.verdict == "fail"]
    crashes = [j for j in judgments if j.verdict == "crash"]
    errors = [j for j in judgments if j.verdict == "error"]
    graded = [j for j in judgments if j.verdict in ("pass", "fail")]
    if fails:
        return check.failing_outcome, fails[0].message
    if crashes:
        return "crash", crashes[0].message
    if errors:
        return "error", errors[0].message
    if not graded:
        return "skip", "no case graded this check (each depended on something another check failed)"
    return "pass", f"{len(graded)} case(s)"


def expected_text(case: GradedCase) -> dict[str, Any]:
    """The parts of the oracle's reading worth printing next to a failure."""
    s = case.reading()
    if case.kind == "envelope":
        keys: tuple[str, ...] = (
            "verdict", "reason", "shape", "status", "files_touched", "rows",
            "cost_usd", "input_tokens", "output_tokens",
        )  # fmt: skip
    elif case.kind == "scenario":
        keys = ("verdict", "outcome", "reason")
    elif case.kind == "journal":
        keys = ("verdict", "rejected_line", "known_events", "unrecognized_events")
    else:
        keys = ("verdict", "rejected_line", "unrecognized_events", "final_text", "terminator")
    out = {k: s[k] for k in keys}
    if case.kind == "stream" and case.alternatives:
        out["also_conforming"] = [
            {"reading": a.reading, **{k: a.summary.to_json()[k] for k in keys}}
            for a in case.alternatives
        ]
    return out
