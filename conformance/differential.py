"""``corpus diff``: the kit's oracle against any external decoder, case by case.

The external decoder (stella's own reader, another kit's oracle, a client) is a
command run once per case with the stream on stdin.  It answers in one of two
ways, documented in docs/contract-readings.md:

* one JSON object on stdout: ``{"verdict": "accept"|"reject", "rejected_line": N|null}``;
* nothing on stdout: exit status 0 is ``accept``, 1 is ``reject`` (no line).

Each answer is compared with every conforming reading of the case
(:mod:`stella_conform.readings`).  Agreeing with the default is agreement;
agreeing only with a registered alternative is a disagreement *explained* by
that reading; anything else is *unexplained*, the only kind that makes the
command fail.  Disagreements are grouped by class with the smallest example.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stella_conform import stopping
from stella_conform.conformance.process import ClientProcess
from stella_conform.readings import Readings, read_stream
from stella_conform.schemas.vocabulary import Vocabulary

UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class OracleAnswer:
    verdict: str | None
    rejected_line: int | None = None
    #: Why the answer could not be read (a crash, a timeout, bad JSON); ``None`` when fine.
    problem: str | None = None


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
    return OracleAnswer(str(doc["verdict"]), line if isinstance(line, int) else None)


def _says(verdict: str, line: int | None) -> str:
    return f"reject at line {line}" if verdict == "reject" and line else verdict


def _matches(answer: OracleAnswer, verdict: str, line: int | None) -> bool:
    if answer.verdict != verdict:
        return False
    return verdict != "reject" or answer.rejected_line is None or answer.rejected_line == line


def classify(readings: Readings, answer: OracleAnswer) -> str | None:
    """``None`` when the answer is the kit's default; else the reading id that explains it,
    or ``unexplained``."""
    default = readings.default.summary
    if answer.problem is None and _matches(answer, default.verdict, default.rejected_line):
        return None
    if answer.problem is None:
        for alternative in readings.alternatives:
            s = alternative.summary
            if _matches(answer, s.verdict, s.rejected_line):
                return alternative.reading
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
    found = classify(readings, answer)
    if found is None:
        result.agreed += 1
        return
    default = readings.default.summary
    kit = _says(default.verdict, default.rejected_line)
    if readings.alternatives:
        kit += (
            " (or "
            + ", ".join(
                f"{_says(a.summary.verdict, a.summary.rejected_line)} by {a.reading}"
                for a in readings.alternatives
            )
            + ")"
        )
    said = answer.problem or _says(str(answer.verdict), answer.rejected_line)
    result.classes.setdefault(found, []).append(Disagreement(case, kit, said))


def render(results: Sequence[CorpusResult]) -> str:
    """Agreement per corpus, then each class of disagreement with its smallest example."""
    out = []
    for r in results:
        share = 100.0 * r.agreed / r.cases if r.cases else 100.0
        out.append(f"{r.name}: {r.agreed}/{r.cases} agree ({share:.1f} %)")
    for r in results:
        for cls in sorted(r.classes, key=lambda c: (c == UNEXPLAINED, c)):
            items = r.classes[cls]
            smallest = min(items, key=lambda d: (len(d.case.stream), d.case.name))
            label = cls if cls == UNEXPLAINED else f"reading {cls}"
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
                out.append(f"    {number:>4} | {_visible(line[:160])}")
    return "\n".join(out)


def _visible(text: str) -> str:
    """Control and invisible characters as escapes: a stream cannot drive the terminal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def to_json(results: Sequence[CorpusResult]) -> dict[str, Any]:
    return {
        "corpora": [
            {
                "name": r.name,
                "cases": r.cases,
                "agreed": r.agreed,
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
