"""``corpus diff``: the kit's oracle against any external decoder, case by case.

The external decoder (stella's own reader, another kit's oracle, a client) is a
command run once per case with the stream on stdin.  It answers in one of two
ways, documented in docs/contract-readings.md:

* one JSON object on stdout: ``{"verdict": "accept"|"reject", "rejected_line": N|null,
  "unrecognized_events": N}`` (the line and the count are compared when given);
* nothing on stdout: exit status 0 is ``accept``, 1 is ``reject`` (no line).

Each answer is compared with every conforming reading of the case
(:mod:`stella_conform.oracle.readings`).  Agreeing with the default is agreement;
agreeing only with a registered alternative is a disagreement *explained* by
that reading; one that is what a documented bug of stella's own reader does
(:data:`DOCUMENTED_BUGS`) is grouped apart, as that bug; anything else is
*unexplained*, the only kind that makes the command fail.  Disagreements are
grouped by class with the smallest example.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stella_conform import stopping
from stella_conform.conformance.clients.process import ClientProcess
from stella_conform.oracle.decoder import Kind, RunSummary, iter_physical_lines
from stella_conform.oracle.readings import Readings, read_stream
from stella_conform.safe_text import terminal_safe
from stella_conform.schemas.vocabulary import Vocabulary

UNEXPLAINED = "unexplained"
#: The class of a disagreement a documented bug explains: ``bug:ID``.
BUG = "bug:"


@dataclass(frozen=True)
class OracleAnswer:
    verdict: str | None
    rejected_line: int | None = None
    #: Why the answer could not be read (a crash, a timeout, bad JSON); ``None`` when fine.
    problem: str | None = None
    #: The oracle's count of unrecognized events, when it gave one (compared on accepts).
    unrecognized_events: int | None = None


@dataclass(frozen=True)
class Bug:
    """A documented bug of stella's own reader against its contract: what it does wrong,
    and whether an answer is that (docs/contract-readings.md)."""

    id: str
    title: str
    explains: Callable[[bytes, Readings, OracleAnswer], bool]


def _torn_utf8_rejects_the_stream(stream: bytes, readings: Readings, answer: OracleAnswer) -> bool:
    """The final line is torn inside a UTF-8 character; the whole input, read as UTF-8
    first, is refused."""
    torn = [o for o in readings.default.outcomes if o.kind is Kind.TORN]
    return answer.verdict == "reject" and bool(torn) and "invalid UTF-8" in str(torn[-1].reason)


def _bad_final_record_dropped(stream: bytes, readings: Readings, answer: OracleAnswer) -> bool:
    """The last non-blank line fails, however it fails (not JSON, not an object, no
    ``type``, a known type whose body does not fit), and is dropped silently: the reader
    drops the last non-blank line whenever it fails."""
    if answer.verdict != "accept":
        return False
    last = _last_non_blank(stream)
    for reading in readings.all:
        rejected = [o for o in reading.outcomes if o.kind is Kind.REJECT]
        if rejected and rejected[-1].line == last:
            return True
    return False


def _old_type_name_counted_unrecognized(
    stream: bytes, readings: Readings, answer: OracleAnswer
) -> bool:
    """An event under an old type name the wire schema keeps as an alias (``judge_verdict``)
    is read as the type it names today (its body decides, a bad one rejects) and counted as
    unrecognized as well: serde's variant alias reads it, while the count comes from the
    list of known tags (``KNOWN_TYPE_TAGS``, which the contract names), which does not hold
    the alias."""
    if answer.verdict != "accept" or answer.unrecognized_events is None:
        return False
    for reading in readings.all:
        if reading.summary.verdict != "accept":
            continue
        renamed = sum(
            o.kind is Kind.KNOWN and isinstance(o.raw, dict) and o.raw.get("type") != o.tag
            for o in reading.outcomes
        )
        if renamed and answer.unrecognized_events == reading.summary.unrecognized_events + renamed:
            return True
    return False


def _last_non_blank(stream: bytes) -> int | None:
    """The number of the stream's last physical line that holds more than JSON whitespace."""
    last = None
    for number, (content, _) in enumerate(iter_physical_lines(stream), 1):
        if content.strip(b" \t\r\n"):
            last = number
    return last


#: stella's reader's bugs against its own contract, as the kit documents them (its model:
#: adapters/python/stella_like_reader.py). A disagreement one explains is no new problem.
DOCUMENTED_BUGS: tuple[Bug, ...] = (
    Bug(
        "torn-utf8-rejects-stream",
        "a final line cut inside a multi-byte UTF-8 character rejects the whole stream "
        "(rule 6 says tolerate it)",
        _torn_utf8_rejects_the_stream,
    ),
    Bug(
        "bad-final-record-dropped",
        "a complete final line that fails (not JSON, not an object, no type, a body that "
        "does not fit) is dropped silently (rule 4 says fail loudly)",
        _bad_final_record_dropped,
    ),
    Bug(
        "old-type-name-counted-unrecognized",
        "an event under an old type name the wire schema keeps as an alias is read as the "
        "type it names today and also counted as unrecognized (rule 3 counts the types a "
        "reader does not recognize; this one it reads)",
        _old_type_name_counted_unrecognized,
    ),
)
BUGS_BY_ID = {b.id: b for b in DOCUMENTED_BUGS}


@dataclass(frozen=True)
class DiffCase:
    corpus: str
    name: str
    stream: bytes


@dataclass
class Disagreement:
    case: DiffCase
    kit: str
    oracle: str


@dataclass
class CorpusResult:
    name: str
    cases: int = 0
    agreed: int = 0
    #: class (a reading id, or "unexplained") -> disagreements
    classes: dict[str, list[Disagreement]] = field(default_factory=dict)

    @property
    def unexplained(self) -> int:
        return len(self.classes.get(UNEXPLAINED, []))

    @property
    def documented_bugs(self) -> int:
        return sum(len(v) for k, v in self.classes.items() if k.startswith(BUG))


#: The most of an oracle's stdout the kit keeps: an answer is one small JSON object.
ANSWER_CAP = 1024 * 1024


def ask(command: Sequence[str], stream: bytes, timeout: float) -> OracleAnswer:
    """Run the external decoder on one stream and read its answer.

    The oracle is supervised like any client (:class:`ClientProcess`): its own process
    group, killed with everything it started when the answer is in; a deadline; stdout
    kept up to :data:`ANSWER_CAP` and stderr bounded, the rest counted and dropped.
    """
    try:
        proc = ClientProcess(command, keep_stdout=ANSWER_CAP, collect_lines=False)
    except OSError as exc:
        return OracleAnswer(None, problem=f"cannot run the oracle: {exc.strerror or exc}")
    try:
        proc.send(stream, then_close=True)
        ended = proc.wait(time.monotonic() + timeout)
    finally:
        proc.kill()
    if ended.timed_out:
        return OracleAnswer(None, problem=f"no answer within {timeout:g} s")
    if proc.stdout.total > ANSWER_CAP:
        return OracleAnswer(
            None,
            problem=f"an answer of {proc.stdout.total} bytes (the kit reads at most "
            f"{ANSWER_CAP}: one JSON object)",
        )
    out = bytes(proc.stdout.kept).strip()
    if not out:
        if ended.signal is None and ended.returncode in (0, 1):
            return OracleAnswer("accept" if ended.returncode == 0 else "reject")
        return OracleAnswer(None, problem=f"{ended.describe()} and no answer")
    last = out.splitlines()[-1]
    try:
        doc = json.loads(last)
    except RecursionError:
        return OracleAnswer(None, problem=f"not a JSON answer (nested too deeply): {out[:80]!r}")
    except (ValueError, UnicodeDecodeError):
        return OracleAnswer(None, problem=f"not a JSON answer: {out[:80]!r}")
    if not isinstance(doc, dict) or doc.get("verdict") not in ("accept", "reject"):
        return OracleAnswer(None, problem=f"no verdict in the answer: {out[:80]!r}")
    line = doc.get("rejected_line")
    count = doc.get("unrecognized_events")
    if not (isinstance(count, int) and not isinstance(count, bool) and count >= 0):
        count = None
    return OracleAnswer(
        str(doc["verdict"]), line if isinstance(line, int) else None, unrecognized_events=count
    )


def _says(verdict: str, line: int | None, count: int | None = None) -> str:
    said = f"reject at line {line}" if verdict == "reject" and line else verdict
    return said + (f", {count} unrecognized" if count is not None and verdict == "accept" else "")


def _matches(answer: OracleAnswer, summary: RunSummary) -> bool:
    if answer.verdict != summary.verdict:
        return False
    if summary.verdict == "accept":
        count = answer.unrecognized_events
        return count is None or count == summary.unrecognized_events
    return answer.rejected_line is None or answer.rejected_line == summary.rejected_line


def classify(readings: Readings, answer: OracleAnswer, stream: bytes = b"") -> str | None:
    """``None`` when the answer is the kit's default; else the reading id that explains it,
    ``bug:ID`` for a documented bug of stella's reader, or ``unexplained``."""
    if answer.problem is not None:
        return UNEXPLAINED
    if _matches(answer, readings.default.summary):
        return None
    for alternative in readings.alternatives:
        if _matches(answer, alternative.summary):
            return alternative.reading
    for bug in DOCUMENTED_BUGS:
        if bug.explains(stream, readings, answer):
            return BUG + bug.id
    return UNEXPLAINED


def diff_corpus(
    name: str,
    cases: Iterable[DiffCase],
    command: Sequence[str],
    vocab: Vocabulary,
    timeout: float,
) -> CorpusResult:
    result = CorpusResult(name)
    try:
        for case in cases:
            _compare(result, case, command, vocab, timeout)
    except stopping.Stopped as stop:
        stop.partial.append(result)  # what was compared: the command reports it
        raise
    return result


def _compare(
    result: CorpusResult, case: DiffCase, command: Sequence[str], vocab: Vocabulary, timeout: float
) -> None:
    """One case: the oracle's answer against the readings, tallied into ``result``."""
    readings = read_stream(case.stream, vocab)
    answer = ask(command, case.stream, timeout)
    result.cases += 1
    found = classify(readings, answer, case.stream)
    if found is None:
        result.agreed += 1
        return
    counted = answer.unrecognized_events is not None  # the counts are shown when compared
    default = readings.default.summary
    kit = _says(default.verdict, default.rejected_line, _count(default, counted))
    if readings.alternatives:
        kit += (
            " (or "
            + ", ".join(
                f"{_says(a.summary.verdict, a.summary.rejected_line, _count(a.summary, counted))}"
                f" by {a.reading}"
                for a in readings.alternatives
            )
            + ")"
        )
    said = answer.problem or _says(
        str(answer.verdict), answer.rejected_line, answer.unrecognized_events
    )
    result.classes.setdefault(found, []).append(Disagreement(case, kit, said))


def _count(summary: RunSummary, shown: bool) -> int | None:
    return summary.unrecognized_events if shown else None


def _label(cls: str) -> str:
    if cls == UNEXPLAINED:
        return cls
    if cls.startswith(BUG):
        bug = BUGS_BY_ID[cls.removeprefix(BUG)]
        return f"documented bug of stella's reader, {bug.id}: {bug.title}"
    return f"reading {cls}"


def _order(cls: str) -> tuple[int, str]:
    """Readings first, then documented bugs, then what is unexplained."""
    return (2 if cls == UNEXPLAINED else 1 if cls.startswith(BUG) else 0, cls)


def render(results: Sequence[CorpusResult]) -> str:
    """Agreement per corpus, then each class of disagreement with its smallest example."""
    out = []
    for r in results:
        share = 100.0 * r.agreed / r.cases if r.cases else 100.0
        out.append(f"{r.name}: {r.agreed}/{r.cases} agree ({share:.1f} %)")
    for r in results:
        for cls in sorted(r.classes, key=_order):
            items = r.classes[cls]
            smallest = min(items, key=lambda d: (len(d.case.stream), d.case.name))
            label = _label(cls)
            out.append("")
            out.append(f"{r.name}: {len(items)} disagreement(s), {label}")
            out.append(f"  smallest: {smallest.case.name} ({len(smallest.case.stream)} bytes)")
            out.append(f"    kit:    {smallest.kit}")
            out.append(f"    oracle: {smallest.oracle}")
            text = smallest.case.stream.decode("utf-8", "backslashreplace")
            lines = text.split("\n")
            if lines and not lines[-1]:
                lines.pop()  # the final newline ends the last line; it does not start one
            for number, line in enumerate(lines[:8], 1):
                out.append(f"    {number:>4} | {terminal_safe(line[:160])}")
    return "\n".join(out)


def to_json(results: Sequence[CorpusResult]) -> dict[str, Any]:
    return {
        "corpora": [
            {
                "name": r.name,
                "cases": r.cases,
                "agreed": r.agreed,
                "documented_bugs": r.documented_bugs,
                "unexplained": r.unexplained,
                "classes": {
                    cls: [
                        {"case": d.case.name, "kit": d.kit, "oracle": d.oracle}
                        for d in sorted(items, key=lambda d: len(d.case.stream))
                    ]
                    for cls, items in sorted(r.classes.items())
                },
            }
            for r in results
        ]
    }
