"""Decoder behaviour beyond the fixtures: every outcome kind, streaming, edge cases."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stella_conform.oracle.decoder import Kind, decode, decode_all, parse_line, summarize
from stella_conform.schemas.vocabulary import Vocabulary


def j(obj: object) -> bytes:
    return json.dumps(obj).encode()


RUN_COMPLETE = {"type": "run_complete", "model": "m", "cost_usd": 0.0}


def kinds(data: bytes) -> list[str]:
    return [o.kind.value for o in decode(data)]


def test_each_outcome_kind() -> None:
    data = b"\n".join(
        [
            j({"type": "text", "text": "a"}),
            j({"type": "nope"}),
            b"",
            j(RUN_COMPLETE),
            b'{"type":"te',
        ]
    )
    assert kinds(data) == ["known", "unknown", "blank", "known", "torn"]
    assert kinds(b'{"x":\n' + j(RUN_COMPLETE) + b"\n") == ["reject"]


def test_rejection_names_the_line_and_reason() -> None:
    out = decode_all(b"\n".join([j({"type": "text", "text": "a"}), j({"type": "error"})]) + b"\n")
    assert out.summary.verdict == "reject"
    assert out.summary.rejected_line == 2
    assert "missing required field 'message'" in (out.summary.reason or "")


def test_decoder_stops_after_rejection() -> None:
    data = b"[]\n" + j({"type": "text", "text": "never"}) + b"\n"
    assert [o.line for o in decode(data)] == [1]


def test_known_event_keeps_raw_and_normalizes_alias() -> None:
    (out,) = decode(j({"type": "text", "delta": "legacy", "extra": 1}))
    assert out.kind is Kind.KNOWN
    assert out.event == {"type": "text", "text": "legacy", "extra": 1}
    assert out.raw == {"type": "text", "delta": "legacy", "extra": 1}


def test_unknown_is_kept_whole() -> None:
    obj = {"type": "holographic_verdict", "confidence": 0.91, "nested": {"a": [1, 2]}}
    (out,) = decode(j(obj))
    assert out.kind is Kind.UNKNOWN and out.event == obj and out.tag == "holographic_verdict"


def test_streaming_never_needs_the_whole_stream() -> None:
    """The decoder pulls lines lazily: it has answered line 1 before line 3 exists."""
    pulled: list[int] = []

    def lines() -> Iterator[bytes]:
        for i in range(1, 1_000_000):
            pulled.append(i)
            yield j({"type": "text_delta", "delta": "x"}) + b"\n"

    gen = decode(lines())
    first = next(gen)
    assert first.line == 1 and pulled == [1]


def test_summary_of_a_long_stream_in_constant_memory() -> None:
    def lines() -> Iterator[bytes]:
        for i in range(50_000):
            yield j({"type": "text_delta", "delta": "x", "ts": i}) + b"\n"
        yield j({"type": "text", "text": "final"}) + b"\n"
        yield j(RUN_COMPLETE)

    s = summarize(lines())
    assert s.known_events == 50_002 and s.final_text == "final" and s.preview is None
    assert s.elapsed_ms == 49_999 and s.terminator == "run_complete"


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        (b'{"a":1}', True),
        (b'{"a":NaN}', False),
        (b'{"a":Infinity}', False),
        (b'\xef\xbb\xbf{"a":1}', False),
        (b'{"a":"\xff"}', False),
        (b'{"a":1} {"b":2}', False),
        (b'{"a":1}\r', True),
        (b'{"a":' + b"9" * 5000 + b"}", True),
        (b"[" * 100_000 + b"]" * 100_000, False),
    ],
)
def test_parse_line(line: bytes, ok: bool) -> None:
    _value, error = parse_line(line)
    assert (error is None) is ok


def test_huge_integer_is_out_of_range_not_a_crash() -> None:
    out = decode_all(b'{"type":"text","text":"a","ts":' + b"9" * 5000 + b"}\n")
    assert out.summary.verdict == "reject"


def test_integers_are_not_floats_or_bools() -> None:
    for ts in (b"1.0", b"true", b"1e3"):
        out = decode_all(b'{"type":"text","text":"a","ts":' + ts + b"}\n")
        assert out.summary.verdict == "reject", ts
    ok = decode_all(b'{"type":"run_complete","model":"m","cost_usd":1}\n')
    assert ok.summary.verdict == "accept"  # a number may be written as an integer


def test_ts_beyond_u64_rejected_on_known() -> None:
    assert decode_all(j({"type": "text", "text": "a", "ts": 2**64}) + b"\n").summary.verdict == (
        "reject"
    )
    assert decode_all(j({"type": "text", "text": "a", "ts": 2**64 - 1})).summary.verdict == (
        "accept"
    )


def test_retried_deltas_and_pending_preview() -> None:
    data = b"\n".join(j({"type": "text_delta", "delta": d}) for d in ["ab", "ab", "c"])
    s = decode_all(data).summary
    assert s.preview == "ababc" and s.final_text is None


def test_error_then_more_work_is_not_the_terminator() -> None:
    data = b"\n".join(
        [
            j({"type": "error", "message": "retrying", "retryable": True}),
            j({"type": "text", "text": "ok"}),
        ]
    )
    assert decode_all(data).summary.terminator is None


def test_events_after_run_complete_are_counted() -> None:
    data = b"\n".join([j(RUN_COMPLETE), j({"type": "text", "text": "late"})])
    assert decode_all(data).summary.events_after_terminator == 1


def test_imported_vocabulary_changes_what_is_known(wire_schema) -> None:  # type: ignore[no-untyped-def]
    vocab = Vocabulary.from_wire_schema(wire_schema)
    line = j({"type": "commit", "sha": "abc", "message": "m"})
    assert [o.kind for o in decode(line)] == [Kind.UNKNOWN]
    assert [o.kind for o in decode(line, vocab)] == [Kind.KNOWN]
    bad = j({"type": "commit", "sha": 1, "message": "m"})
    assert [o.kind for o in decode(bad, vocab)] == [Kind.REJECT]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=' \t\r\n{}[]":,0123456789.-eEtrufalsn\\x\u00a0\u2028', max_size=24))
def test_the_hot_path_parses_exactly_what_json_loads_does(text: str) -> None:
    """The plain and careful scanners skip the regular expressions a stream line does not
    need (no whitespace before its ``{``, only whitespace after its value): what they
    accept, and what they refuse, is ``json.loads``'s all the same."""
    from stella_conform.oracle.careful import _CAREFUL_SCAN
    from stella_conform.oracle.parsing import _scan, _scan_with

    try:
        expected: object = json.loads(text)
    except (ValueError, RecursionError):
        expected = ValueError
    for scan in (_scan, lambda t: _scan_with(_CAREFUL_SCAN, t)):
        try:
            got: object = scan(text)
        except (ValueError, StopIteration, RecursionError):
            got = ValueError
        assert repr(got) == repr(expected), (scan, text)
