"""Show a failing case's stream so the line that decides the check is always in view.

A report cannot print every line of a long stream, and it must not print a
whole 1 MiB line either.  But cutting at a fixed line count or column hides
exactly what a person needs when the deciding line is the 30th, or when the
deciding value sits at the end of a long line (a ``"ts":9223372036854775808``
past column 160).  So the lines that decide a check — the line the oracle or
the client rejects, the lines the client read differently, any line the
judgment names — are always shown, whole up to a generous width, and marked;
the rest is shortened around them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import cache
from typing import Any

from stella_conform.conformance.checks import GradedCase, expected_text, json_equal
from stella_conform.conformance.clients.runner import REASON_SHOWN, Observation, split_lines
from stella_conform.conformance.kinds import KINDS
from stella_conform.oracle.decoder import Kind, LineOutcome
from stella_conform.safe_text import clip
from stella_conform.schemas.vocabulary import load_schema

#: A deciding line is shown whole up to this many characters (then its start and end).
DECISIVE_WIDTH = 4000
#: Lines of context shown before and after each deciding line.
CONTEXT = 1
_LINE_NAMED = re.compile(r"\bline (\d+)\b")


def decisive_lines(case: GradedCase, obs: Observation, message: str = "") -> tuple[int, ...]:
    """The stream lines that decide this case's judgment, in order."""
    found: set[int] = set()
    kind = KINDS[case.kind]
    rejected = kind.rejected_line(case)
    if rejected is not None:
        found.add(rejected)
    if kind.line_outcomes:
        found.update(_lines_read_differently(case, obs))
        found.update(_lines_behind_fields(case, obs))
    found.update(case.marked[:FIELD_LINES])  # where a generated case was broken on purpose
    if obs.rejected_line is not None:
        found.add(obs.rejected_line)
    if obs.stalled_at is not None:
        found.add(obs.stalled_at)
    if obs.detail:  # the client's own words ("line 1 column 2") name no line of the stream
        message = message.replace(clip(obs.detail, REASON_SHOWN), "").replace(obs.detail, "")
    found.update(int(m.group(1)) for m in _LINE_NAMED.finditer(message))
    count = len(split_lines(case.stream))
    return tuple(sorted(n for n in found if 1 <= n <= count))


def _lines_read_differently(case: GradedCase, obs: Observation) -> Iterable[int]:
    for outcome in case.outcomes:
        seen = obs.lines.get(outcome.line)
        if seen is None:
            continue
        misread = seen.get("outcome") != outcome.kind.value
        mistyped = outcome.kind is Kind.KNOWN and seen.get("type") not in (None, outcome.tag)
        if misread or mistyped:
            yield outcome.line


#: Where a summary field comes from: a test on a line's outcome (tag is the event type).
_FIELD_SOURCES: dict[str, Callable[[LineOutcome, set[str]], bool]] = {
    "final_text": lambda o, _: _tag_has(o, "text"),
    "texts": lambda o, _: _tag_has(o, "text"),
    "preview": lambda o, _: _tag_has(o, "text"),
    "stages": lambda o, _: _tag_has(o, "stage"),
    "turns_completed": lambda o, _: _tag_has(o, "turn"),
    "tool_calls": lambda o, _: _tag_has(o, "tool"),
    "terminator": lambda o, values: o.tag in values,
    "unrecognized_events": lambda o, _: o.kind is Kind.UNKNOWN,
    "unrecognized_types": lambda o, _: o.kind is Kind.UNKNOWN,
    "elapsed_ms": lambda o, _: isinstance(o.raw, dict) and "ts" in o.raw,
}
#: At most this many lines are marked for the fields a summary got wrong.
FIELD_LINES = 12


def _tag_has(outcome: LineOutcome, word: str) -> bool:
    return outcome.kind is Kind.KNOWN and word in (outcome.tag or "")


def _lines_behind_fields(case: GradedCase, obs: Observation) -> list[int]:
    """The lines that feed each summary field the client got wrong."""
    if obs.summary is None or case.expected_verdict != "accept":
        return []
    want = case.reading()
    wrong = [
        name
        for name in _FIELD_SOURCES
        if name in obs.summary
        and not json_equal(_comparable(name, want.get(name)), _comparable(name, obs.summary[name]))
    ]
    lines: list[int] = []
    for name in wrong:
        values = {str(want.get(name)), str(obs.summary.get(name))}
        lines += [o.line for o in case.outcomes if _FIELD_SOURCES[name](o, values)]
    return sorted(set(lines))[:FIELD_LINES]


def chosen_lines(total: int, limit: int, keep: Collection[int]) -> list[int]:
    """Which of ``total`` lines to show: all if they fit, else the start, the end, and
    every kept line with its context, filled up from the start to ``limit``."""
    if total <= limit:
        return list(range(1, total + 1))
    shown = {n for n in (1, 2, 3, total - 1, total) if 1 <= n <= total}
    for k in keep:
        shown.update(n for n in range(k - CONTEXT, k + CONTEXT + 1) if 1 <= n <= total)
    n = 1
    while len(shown) < limit and n <= total:
        shown.add(n)
        n += 1
    return sorted(shown)


def show_stream(
    stream: bytes, limit: int = 40, width: int = 160, keep: Collection[int] = ()
) -> str:
    """The stream with visible line ends: ⏎ for LF, ␍ for CR, ∅ for a missing final newline.

    Lines in ``keep`` are marked ``▶`` and shown whole up to :data:`DECISIVE_WIDTH`;
    other lines are cut at ``width``; skipped lines are counted.
    """
    lines = split_lines(stream)
    if not lines:
        return "      (empty stream)"
    out = []
    previous = 0
    for number in chosen_lines(len(lines), limit, keep):
        if number > previous + 1:
            out.append(f"      … {number - previous - 1} line(s)")
        decisive = number in keep
        out.append(
            _render(number, lines[number - 1], DECISIVE_WIDTH if decisive else width, decisive)
        )
        previous = number
    if previous < len(lines):
        out.append(f"      … {len(lines) - previous} more line(s)")
    return "\n".join(out)


def _render(number: int, line: bytes, width: int, decisive: bool) -> str:
    body = line.rstrip(b"\n")
    text = body.decode("utf-8", "backslashreplace").replace("\r", "␍")
    if len(text) > width:
        if decisive:  # the deciding value may be at either end: keep both
            half = width // 2
            text = f"{text[:half]} … ({len(body)} bytes) … {text[-half:]}"
        else:
            text = text[:width] + f"… ({len(body)} bytes)"
    end = "⏎" if line.endswith(b"\n") else "∅ (no final newline)"
    return f"{number:>5} {'▶' if decisive else '|'} {text}{end}"


# ---------------------------------------------------------------- digests

#: A string longer than this is excerpted in a later failure of a check (the first, the
#: smallest, keeps its values whole).
DIGEST_WIDTH = 4096


def digested(text: str, limit: int = DIGEST_WIDTH) -> str:
    """``text`` as it is when it has at most ``limit`` characters; else its start and end
    with its length and sha256 (of its UTF-8) between them, so a reader can tell two long
    values apart and check one against a file that holds it whole.

    >>> digested("ab" * 3000)[:12]
    'abababababab'
    """
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    half = limit // 2
    return f"{text[:half]} … ({len(text)} characters, sha256 {digest}) … {text[-half:]}"


def digested_values(value: Any, limit: int = DIGEST_WIDTH) -> Any:
    """``value`` (JSON: a reading, an expectation) with every string in it :func:`digested`."""
    if isinstance(value, str):
        return digested(value, limit)
    if isinstance(value, dict):
        return {k: digested_values(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [digested_values(v, limit) for v in value]
    return value


# ---------------------------------------------------------------- field by field

#: The most of one value printed in a field-by-field difference.
VALUE_WIDTH = 4000
_UNORDERED = ("unrecognized_types",)


def other_reading(other: dict[str, Any], shown: dict[str, Any], names: Sequence[str]) -> list[str]:
    """``name value`` for each of ``names`` where another conforming reading (``other``)
    differs from the one a field-by-field table showed (``shown``)."""
    return [
        f"{name} {_shown(other.get(name))}"
        for name in names
        if not json_equal(_comparable(name, other.get(name)), _comparable(name, shown.get(name)))
    ]


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) > VALUE_WIDTH:
        half = VALUE_WIDTH // 2
        text = f"{text[:half]} … ({len(text)} characters) … {text[-half:]}"
    return text


def _comparable(name: str, value: Any) -> Any:
    if name in _UNORDERED and isinstance(value, list):
        return sorted(str(v) for v in value)
    return value


def compared_fields(case: GradedCase, fields: Sequence[str]) -> list[str]:
    """The fields worth comparing for a case: the oracle's usual ones, then the check's.

    Only fields a summary can have: the oracle's own notes on a document (why it rejects
    it, which shape it is) are no field a client is asked for, so never "not reported".
    """
    names = ["verdict", *expected_text(case)]
    names += ["texts" if f == "texts-unordered" else f for f in fields]
    notes = KINDS[case.kind].oracle_notes
    return [n for n in dict.fromkeys(names) if n in summary_fields() and n not in notes]


@cache
def summary_fields() -> frozenset[str]:
    """The fields of the protocol's summary message (schemas/protocol.schema.json)."""
    return frozenset(load_schema("protocol.schema.json")["$defs"]["Summary"]["properties"])


def field_differences(
    expected: dict[str, Any], observed: dict[str, Any] | None, names: Sequence[str]
) -> list[str]:
    """Expected against observed, one field at a time; ``≠`` marks each that differs.

    ``observed`` is the client's summary (or what an exit status tells); a field the
    client did not report is shown as such, not as a difference.
    """
    observed = observed or {}
    width = max((len(n) for n in names), default=0) + 1
    out = []
    for name in names:
        want = expected.get(name)
        label = f"{name}:".ljust(width)
        if name not in observed:
            out.append(f"  {label} expected {_shown(want)}; client did not report it")
            continue
        got = observed[name]
        if json_equal(_comparable(name, want), _comparable(name, got)):
            out.append(f"  {label} {_shown(want)} (both)")
        else:
            out.append(f"≠ {label} expected {_shown(want)}")
            out.append(f"  {' ' * width} client   {_shown(got)}")
    return out
