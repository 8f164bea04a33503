"""The points found over a decode's outcomes (oracle/client_points.py): a client that stops
at run_complete, and one that clamps the whole run's elapsed time.

``read_stream`` (grading, fixtures, ``corpus``) and ``summary_readings`` (``decode``, a
stream of any length) find and follow them alike; the bytes-only prefilter that spares
``decode`` a pass never misses one; the careful decode (and what generation records of
it) is the same with or without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, kit_inline
from hypothesis import HealthCheck, given, settings

from stella_conform.generators.cases import cases
from stella_conform.oracle import client_points
from stella_conform.oracle.readings import careful_default, read_stream, summary_readings

FIXTURES = sorted((REPO / "fixtures").glob("*.jsonl"))
RC = b'{"type":"run_complete","model":"m","cost_usd":0.002}\n'
TEXT = b'{"type":"text","text":"a"}\n'


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _both_ways(data: bytes) -> None:
    """The readings read_stream finds, summary_readings finds too (given the points the
    decode noted, as ``decode`` gives them), with the same summaries."""
    whole = {a.reading: a.summary.to_json() for a in read_stream(data).alternatives}
    noted = careful_default(data)[1]
    streamed = {
        r.reading: r.summary.to_json() for r in summary_readings(lambda: _lines(data), None, noted)
    }
    assert sorted(streamed) == sorted(whole)
    for reading, doc in whole.items():
        for key in ("verdict", "rejected_line", "unrecognized_events", "elapsed_ms", "final_text"):
            assert streamed[reading][key] == doc[key], (reading, key)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_decode_and_grading_find_the_same_client_points(path: Path) -> None:
    data = path.read_bytes()
    _both_ways(data)
    found = read_stream(data).touched & client_points.CLIENT_POINTS
    assert not found or client_points.may_touch(_lines(data)), found


@settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_the_prefilter_misses_no_client_point(case: object) -> None:
    data: bytes = case.stream  # type: ignore[attr-defined]
    found = read_stream(data).touched & client_points.CLIENT_POINTS
    assert not found or client_points.may_touch(_lines(data)), (found, data[:300])


def test_the_careful_decode_notes_neither() -> None:
    """What generation records of a stream (its careful decode) is unchanged by them."""
    data = TEXT + RC + b'{"type":"text"}\n'
    assert not careful_default(data)[1] & client_points.CLIENT_POINTS
    assert read_stream(data).touched == {"after-terminator"}


def test_a_client_stopping_at_run_complete_reads_a_prefix() -> None:
    """Under B the stream is read up to the end of the run_complete line: nothing after it,
    blank lines included, and no point only a later line touches."""
    data = TEXT + RC + b"\n" + b'{"type":"x","n":-0}\n' + b'{"type":"text","text":"a","ts":-1}\n'
    readings = read_stream(data)
    assert readings.default.summary.verdict == "reject"
    (stop,) = [a for a in readings.alternatives if a.reading == "after-terminator"]
    assert stop.summary.verdict == "accept" and stop.summary.lines == 2
    assert stop.touched == {"after-terminator"}
    # only blank lines after run_complete: nothing to stop before
    assert not read_stream(TEXT + RC + b"\n  \n").touched


def test_decode_prints_both_readings() -> None:
    out = kit_inline("decode", str(REPO / "fixtures" / "bad_body_after_run_complete.jsonl"))
    assert out.returncode == 1, out.stderr
    assert "also conforming, reading after-terminator: accept" in out.stdout
    out = kit_inline("decode", str(REPO / "fixtures" / "clock_set_back.jsonl"))
    assert out.returncode == 0, out.stderr
    assert "also conforming, reading elapsed-clamp: accept" in out.stdout
