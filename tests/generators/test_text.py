"""The JSON-text and framing mutations (generators/text.py): each does what it says, and
the reference decoder agrees.  Their intents join the others' in test_generators.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings

from stella_conform.generators import Case, mutated
from stella_conform.generators.envelopes import QUERY_COMMANDS, EnvelopeCase, envelope_cases
from stella_conform.generators.journals import JournalCase, journal_cases
from stella_conform.generators.text import BIG_NUMBERS
from stella_conform.oracle.decoder import Kind, decode
from stella_conform.oracle.journal import read_journal

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _lines(case: Case) -> list[bytes]:
    return case.stream.split(b"\n")


def _same(base: dict[str, Any], got: dict[str, Any], *keys: str) -> None:
    for key in base:
        if key not in keys:
            assert base[key] == got[key], key


def _cr_in_line(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    marked = case.marks["cr-in-line"]
    assert marked and got["verdict"] == "accept"
    for number in marked:
        line = _lines(case)[number - 1]
        assert b"\r" in line.rstrip(b"\r")  # inside the line, not its ending
        assert line.count(b"\r") >= 1 and not line.endswith(b"\r")
    _same(base, got)


def _two_values(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    marked = case.marks["two-values-per-line"]
    (number,) = [n for n in marked if n == got["rejected_line"]]
    line = _lines(case)[number - 1]
    value, end = json.JSONDecoder().raw_decode(line.decode("utf-8"))
    assert isinstance(value, dict) and line[end:].strip()  # a whole object, then more
    assert got["verdict"] == "reject"


def _across(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    marked = case.marks["value-across-lines"]
    assert len(marked) >= 2 and list(marked) == list(range(marked[0], marked[0] + len(marked)))
    assert got["verdict"] == "reject" and got["rejected_line"] == marked[0]
    joined = b"\n".join(_lines(case)[marked[0] - 1 : marked[-1]])
    assert isinstance(json.loads(joined), dict)  # one event, written over several lines


def _ts_repeated(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["verdict"] == "accept"
    events = [o for o in decode(case.stream) if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    seen: dict[tuple[Any, Any], int] = {}
    for o in events:
        key = (o.raw.get("type"), o.raw.get("ts"))
        seen[key] = seen.get(key, 0) + 1
    assert max(seen.values()) >= 2  # two events of one type share a stamp
    marked = [o.raw.get("ts") for o in events if o.line in case.marks["ts-repeated"]]
    assert len(marked) >= 2 and len(set(marked)) == 1  # the clock stood still between them


def _big_numbers(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (number,) = case.marks["unknown-big-numbers"]
    (outcome,) = [o for o in decode(case.stream) if o.line == number]
    assert outcome.kind is Kind.UNKNOWN
    assert outcome.raw["id"] in BIG_NUMBERS and abs(outcome.raw["id"]) > 2**53
    assert got["unrecognized_events"] == base["unrecognized_events"] + 1


def _deep(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (number,) = case.marks["deep-tool-input"]
    line = _lines(case)[number - 1]
    depth = deepest = 0
    for byte in line.replace(b'"bottom"', b""):
        depth += (byte in b"[{") - (byte in b"]}")
        deepest = max(deepest, depth)
    assert 65 <= deepest <= 127
    assert got["verdict"] == "accept"
    assert not [o for o in decode(case.stream) if o.kind is Kind.REJECT]


TEXT_INTENTS: dict[str, Callable[[Case, dict[str, Any], dict[str, Any]], None]] = {
    "cr-in-line": _cr_in_line,
    "two-values-per-line": _two_values,
    "value-across-lines": _across,
    "ts-repeated": _ts_repeated,
    "unknown-big-numbers": _big_numbers,
    "deep-tool-input": _deep,
}


@SETTINGS
@given(mutated("crlf"))
def test_crlf_ends_some_lines_or_all(case: Case) -> None:
    data = case.stream
    crlf = data.count(b"\r\n")
    assert 0 < crlf <= data.count(b"\n")
    assert not [o for o in decode(data) if o.kind is Kind.REJECT]


@SETTINGS
@given(mutated("json-spellings"))
def test_spellings_keep_every_value(case: Case) -> None:
    """However a line is spelled (escapes, whitespace inside brackets, around the line), it
    holds the same event."""
    assert case.run is not None
    events = [o.raw for o in decode(case.stream) if o.kind in (Kind.KNOWN, Kind.UNKNOWN)]
    assert events == case.run.events


@settings(SETTINGS, max_examples=150)
@given(journal_cases(("torn-tail",)))
def test_a_spelled_journal_s_torn_tail_is_a_cut_object(case: JournalCase) -> None:
    """A journal spelled with whitespace around each line still ends on a cut object: not
    on its leading whitespace (a blank line, as main's suite found at 72dde16) nor short of
    only its trailing whitespace (a whole entry)."""
    last = case.data.split(b"\n")[-1]
    assert last.strip(b" \t\r") and not case.data.endswith(b"\n")
    journal = read_journal(case.data)
    assert journal.torn_final_line and journal.verdict == "accept"


@settings(SETTINGS, max_examples=150)
@given(envelope_cases(variants=("query", "extra-keys", "schema-version")))
def test_a_query_envelope_keeps_schema_version_first(case: EnvelopeCase) -> None:
    """The query envelope is "schema_version first, then the payload" (the contract's
    words, unlike the turn envelope's free key order): however a query document is
    spelled, a reader that gates on its first key finds the version there."""
    pairs = json.loads(case.data, object_pairs_hook=list)
    keys = [key for key, _ in pairs]
    if case.command in QUERY_COMMANDS and "schema_version" in keys:
        assert keys[0] == "schema_version", case.data[:200]
