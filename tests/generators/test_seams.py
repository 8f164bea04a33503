"""The seams (generators/seams.py, generators/seam_grammar.py): each mutation has the
effect it means under every reading of the contract, the scanner finds each production
(and not where it is not), and each cell is a stratum of every check it concerns, so every
default run draws it, whatever its seed (a stratum is the engine's first example: no seed
is drawn for it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from stella_conform.conformance.checks import BY_ID as CHECKS
from stella_conform.conformance.reach import _drawn
from stella_conform.conformance.suite import check_strata
from stella_conform.generators import mutated
from stella_conform.generators.cases import Case
from stella_conform.generators.grammar import BY_ID, scan
from stella_conform.generators.seam_grammar import SEAM_ROWS
from stella_conform.oracle.decoder import Kind, decode
from stella_conform.oracle.readings import also_conforming, read_stream
from stella_conform.schemas.vocabulary import Vocabulary

RC = b'{"type":"run_complete","model":"m","cost_usd":0.5}\n'
TEXT = b'{"type":"text","text":"a"}'
DELTA = b'{"type":"text_delta","delta":"a"}'
START = b'{"type":"tool_start","call":{"call_id":"c","name":"bash","input":{}}}'
RESULT = b'{"type":"tool_result","call_id":"c","output":{"ok":{"content":""}},"duration_ms":1}'


def _across(size: int, offset: int = 0) -> bytes:
    head = b'{"type":"text","text":"'
    return head + b"x" * (size - len(head) - 1 - offset) + "🙂".encode() + b'"}\n'


#: One stream (or document) per seam production that holds it.
SEAM_EXAMPLES: dict[str, tuple[bytes, str]] = {
    "frame.strip-control-edge": (RC + b"\x1e" + TEXT + b"\n" + RC, "stream"),
    "frame.trim-bom-edge": (RC + TEXT + b"\xef\xbb\xbf\n" + RC, "stream"),
    "frame.char-across-8k": (_across(8192), "stream"),
    "frame.char-across-16k": (_across(16384), "stream"),
    "frame.char-across-64k": (b'{"type":"text","text":"y"}\n' + _across(65536, 27), "stream"),
    "frame.bad-body-unterminated-last": (b'{"type":"text","text":5}', "stream"),
    "seq.unterminated-text-last": (TEXT, "stream"),
    "seq.unterminated-delta-last": (DELTA, "stream"),
    "seq.unterminated-tool-result-last": (START + b"\n" + RESULT, "stream"),
    "seq.preview-across-tool": (DELTA + b"\n" + START + b"\n" + RESULT + b"\n" + RC, "stream"),
    "seq.preview-left-after-tool": (DELTA + b"\n" + START + b"\n" + RC, "stream"),
    "seq.text-without-deltas-after-deltas": (
        DELTA + b"\n" + TEXT + b"\n" + TEXT + b"\n" + RC,
        "stream",
    ),
    "env.no-cost-no-tokens": (
        b'{"schema_version":1,"status":"error","text":null,"reason":"no key"}\n',
        "envelope",
    ),
}

#: Per cell, the checks whose strata must hold it (every default run grades them).
CELLS: dict[str, tuple[str, ...]] = {
    "frame.strip-control-edge": ("R6.corrupt-line-not-last",),
    "frame.trim-bom-edge": ("R6.corrupt-line-not-last",),
    "frame.char-across-4k": (
        "R1.valid-runs-accepted", "R1.line-by-line", "D.text-replaces-preview",
    ),
    "frame.char-across-8k": (
        "R1.valid-runs-accepted", "R1.line-by-line", "D.text-replaces-preview",
    ),
    "frame.char-across-16k": (
        "R1.valid-runs-accepted", "R1.line-by-line", "D.text-replaces-preview",
    ),
    "frame.char-across-64k": (
        "R1.valid-runs-accepted", "R1.line-by-line", "D.text-replaces-preview",
    ),
    "frame.bad-body-unterminated-last": ("R4.bad-body-rejected",),
    "seq.unterminated-text-last": (
        "R6.complete-last-line-kept", "R6.unterminated-last-line-read",
        "D.text-replaces-preview",
    ),
    "seq.unterminated-delta-last": (
        "R6.complete-last-line-kept", "R6.unterminated-last-line-read",
        "D.text-replaces-preview",
    ),
    "seq.unterminated-tool-result-last": (
        "R6.complete-last-line-kept", "R6.unterminated-last-line-read",
    ),
    "seq.preview-across-tool": ("D.text-replaces-preview",),
    "seq.preview-left-after-tool": ("D.text-replaces-preview",),
    "seq.text-without-deltas-after-deltas": ("D.text-replaces-preview",),
    "env.no-cost-no-tokens": ("E.usage-read",),
}  # fmt: skip


def test_every_seam_production_has_an_example_and_cells() -> None:
    ids = {row[0] for row in SEAM_ROWS}
    assert set(SEAM_EXAMPLES) == ids
    assert ids <= set(CELLS) <= set(BY_ID)


@pytest.mark.parametrize("production", sorted(SEAM_EXAMPLES))
def test_the_scanner_finds_each_seam(production: str) -> None:
    data, kind = SEAM_EXAMPLES[production]
    assert production in scan(data, kind)


@pytest.mark.parametrize(
    ("data", "absent"),
    [
        (b"\xef\xbb\xbf" + TEXT + b"\n" + RC, "frame.trim-bom-edge"),  # the utf8-bom reading
        (b" " + TEXT + b"\t\n" + RC, "frame.strip-control-edge"),  # JSON's own whitespace
        (TEXT + b"\n", "seq.unterminated-text-last"),
        (RC[:-1], "seq.unterminated-text-last"),
        (
            b'{"type":"text","text":"a"}\n{"type":"text","text":5}\n',
            "frame.bad-body-unterminated-last",
        ),
        (DELTA + b"\n" + TEXT + b"\n" + START + b"\n" + RC, "seq.preview-across-tool"),
        (DELTA + b"\n" + START + b"\n" + TEXT + b"\n" + RC, "seq.preview-left-after-tool"),
        (TEXT + b"\n" + TEXT + b"\n" + RC, "seq.text-without-deltas-after-deltas"),
        (_across(8192, 3), "frame.char-across-8k"),  # the character ends just before
    ],
)
def test_the_scanner_finds_no_seam_where_there_is_none(data: bytes, absent: str) -> None:
    assert absent not in scan(data, "stream")


def test_a_cost_less_envelope_with_usage_events_is_not_the_cell() -> None:
    doc = b'{"schema_version":1,"status":"failed","events":[{"type":"step_usage"}]}\n'
    assert "env.no-cost-no-tokens" not in scan(doc, "envelope")


@pytest.mark.parametrize("production", sorted(CELLS))
def test_each_cell_is_a_stratum_of_every_check_it_concerns(production: str) -> None:
    vocab = Vocabulary.default()
    for check_id in CELLS[production]:
        check = CHECKS[check_id]
        held = [_drawn(check, case).productions for case in check_strata(check, vocab)]
        assert any(production in p for p in held), check_id


def _readings(case: Case) -> list[dict[str, object]]:
    """The default reading's summary and every other reading's."""
    readings = read_stream(case.stream, None, decoded=case.reading)
    return [case.expected.to_json(), *also_conforming(readings)]


_FEW = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


@_FEW
@given(mutated("strip-chars-edge"))
def test_a_trimmed_away_character_is_rejected_at_its_line_under_every_reading(case: Case) -> None:
    (line,) = case.marks["strip-chars-edge"]
    for reading in _readings(case):
        assert (reading["verdict"], reading["rejected_line"]) == ("reject", line)


@_FEW
@given(mutated("bad-body-unterminated-last"))
def test_a_bad_unterminated_last_line_is_rejected_under_every_reading(case: Case) -> None:
    last = case.stream.count(b"\n") + 1
    assert not case.stream.endswith(b"\n")
    for reading in _readings(case):
        assert (reading["verdict"], reading["rejected_line"]) == ("reject", last)


@_FEW
@given(mutated("unterminated-content-last"))
def test_a_run_cut_off_on_content_keeps_its_last_line(case: Case) -> None:
    assert not case.stream.endswith(b"\n")
    last = case.stream.rsplit(b"\n", 1)[-1]
    assert b'"type":"run_complete"' not in last
    assert case.expected.verdict == "accept"
    assert case.expected.terminator is None
    assert scan(case.stream) & {
        "seq.unterminated-text-last",
        "seq.unterminated-delta-last",
        "seq.unterminated-tool-result-last",
    }


@_FEW
@given(mutated("preview-across-tool"))
def test_previews_across_a_tool_call_are_replaced_by_a_text_or_left(case: Case) -> None:
    assert case.expected.verdict == "accept"
    found = scan(case.stream)
    assert "seq.preview-across-tool" in found
    if "seq.preview-left-after-tool" in found:
        assert case.expected.preview


@_FEW
@given(mutated("text-after-streamed-step"))
def test_a_text_without_previews_follows_a_streamed_one(case: Case) -> None:
    assert case.expected.verdict == "accept"
    assert "seq.text-without-deltas-after-deltas" in scan(case.stream)
    assert len(case.expected.texts) >= 2


# ------------------------------------------------------------------ intents (test_generators)


def _known(case: Case, line: int) -> bool:
    return any(o.line == line and o.kind is Kind.KNOWN for o in decode(case.stream))


def _rejected_at_mark(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    (line,) = case.marks[mid]
    assert (got["verdict"], got["rejected_line"]) == ("reject", line)
    if mid == "bad-body-unterminated-last":
        assert line == case.stream.count(b"\n") + 1 and not case.stream.endswith(b"\n")


def _cut_on_content(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (line,) = case.marks["unterminated-content-last"]
    assert line == case.stream.count(b"\n") + 1 and not case.stream.endswith(b"\n")
    assert got["verdict"] == "accept" and got["terminator"] is None
    assert _known(case, line)


def _previews_added(case: Case, base: dict[str, Any], got: dict[str, Any]) -> None:
    (mid,) = case.mutations
    assert got["verdict"] == "accept"
    assert all(_known(case, line) for line in case.marks[mid])
    added = 2 if mid == "text-after-streamed-step" else (0, 1)
    assert len(got["texts"]) - len(base["texts"]) in (
        added if isinstance(added, tuple) else (added,)
    )


SEAM_INTENTS: dict[str, Callable[[Case, dict[str, Any], dict[str, Any]], None]] = {
    "strip-chars-edge": _rejected_at_mark,
    "bad-body-unterminated-last": _rejected_at_mark,
    "unterminated-content-last": _cut_on_content,
    "preview-across-tool": _previews_added,
    "text-after-streamed-step": _previews_added,
}
