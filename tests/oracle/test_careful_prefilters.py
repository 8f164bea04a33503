"""The careful decode's prefilters change no answer: with every one of them saying "maybe"
(``prefilters.ENABLED`` false: each point's full test on every line) the decode gives the
same outcomes and notes the same points as with them, on streams that touch every point
the careful decode finds, beside them, and at the prefilters' edges."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_readings import TASK  # a task_update breaking the wire schema's prose rule

from stella_conform.generators import MUTATIONS, Case, cases
from stella_conform.oracle import prefilters
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.oracle.decoder import decode
from stella_conform.oracle.readings import IDS
from stella_conform.schemas.vocabulary import Vocabulary

TEXT = b'{"type":"text","text":"a"}\n'
RC = b'{"type":"run_complete","model":"m","cost_usd":0.002}\n'


def unknown(value: bytes) -> bytes:
    return b'{"type":"x","n":' + value + b"}\n"


def tool_start(call_input: bytes) -> bytes:
    return b'{"type":"tool_start","call":{"call_id":"c","name":"n","input":' + call_input + b"}}\n"


def tool_result(output: bytes, duration: bytes = b"1") -> bytes:
    return (
        b'{"type":"tool_result","call_id":"c","output":' + output + b',"duration_ms":'
        + duration + b"}\n"
    )  # fmt: skip


BIG = b"1" + b"0" * 308  # 309 digits: 1e308 < 2**1024, an integer within f64
BEYOND = b"2" + b"0" * 308  # 309 digits beyond 2**1024 (about 1.8e308)
OK = b'{"ok":{"content":""}}'

#: Lines (each with a run_complete after it, and alone) that touch each point, or come
#: close; the default vocabulary.
LINES: dict[str, bytes] = {
    "bom": b"\xef\xbb\xbf" + TEXT,
    "bom-blank": b"\xef\xbb\xbf\n",
    "bom-then-nbsp": b"\xef\xbb\xbf\xc2\xa0" + TEXT,
    "nbsp-after": TEXT.replace(b"}\n", b"}\xc2\xa0\n"),
    "line-separator-before": b"\xe2\x80\xa8" + TEXT,
    "form-feed-around": b"\x0c" + TEXT.replace(b"}\n", b"}\x0c\n"),
    "only-nbsp": b"\xc2\xa0\n",
    "duplicate-top": b'{"type":"text","text":"a","text":"b"}\n',
    "duplicate-nested": tool_start(b'{"a":1,"a":2}'),
    "duplicate-deeper": tool_start(b'{"a":[{"b":1},{"c":{"d":1,"d":2}}]}'),
    "duplicate-lost-object": (
        b'{"type":"tool_start","call":{"call_id":"c","name":"n","input":{"a":{"b":1}}},'
        b'"call":{"call_id":"c","name":"n","input":{}}}\n'
    ),
    "duplicate-in-arm": tool_result(b'{"ok":{"content":"","content":"x"}}'),
    "duplicate-long": b'{"type":"text","text":"' + b"a:b " * 20_000 + b'","text":"b"}\n',
    "duplicate-after-bom": b"\xef\xbb\xbf" + b'{"type":"text","text":"a","text":"b"}\n',
    "duplicate-in-nbsp": b'\xc2\xa0{"type":"text","text":"a","text":"b"}\xc2\xa0\n',
    "duplicate-nested-after-bom": b"\xef\xbb\xbf" + tool_start(b'{"a":{"b":1,"b":2}}'),
    "duplicate-beside-long-integer": b'{"type":"text","text":"a","text":"b","n":'
    + b"1" * 5000
    + b"}\n",
    "duplicate-long-one-colon-more": b'{"type":"text","text":"' + b"a" * 8000 + b'","text":"b"}\n',
    "duplicate-unterminated": b'{"type":"text","text":"a","text":"b"}',
    "no-duplicate-long-nested": tool_start(b'{"a":{"b":1},"s":"' + b"x" * 8000 + b'"}'),
    "duplicate-spaced": b'{"type":"text","text" : "a", "text" :"b"}\n',
    "duplicate-escaped-key": b'{"type":"text","te\\u0078t":"a","text":"b"}\n',
    "no-duplicate-nested": tool_start(b'{"a":{"a":1},"b":[{"a":1},{"a":2}]}'),
    "no-duplicate-colons": b'{"type":"text","text":"a:b:c\\u003a"}\n',
    "no-duplicate-long": b'{"type":"text","text":"' + b"x:" * 40_000 + b'"}\n',
    "colon-keys": tool_start(b'{"a:b":{"c:d":1}}'),
    "float-beyond": unknown(b"1e400"),
    "negative-float-beyond": unknown(b"-1.5e309"),
    "integer-beyond": unknown(BEYOND),
    "negative-integer-beyond": unknown(b"-" + b"9" * 309),
    "integer-far-beyond": unknown(b"1" + b"0" * 5000),
    "integer-308": unknown(b"9" * 308),
    "integer-309-within": unknown(BIG),
    "integer-beyond-at-start": BEYOND + b"\n",
    "integer-beyond-whole-line": BEYOND,  # unterminated: the run ends the line
    "integer-beyond-in-known": b'{"type":"text","text":"a","n":' + BEYOND + b"}\n",
    "digits-in-string": b'{"type":"text","text":"' + b"9" * 1000 + b'"}\n',
    "digits-in-key": b'{"type":"x","' + BEYOND + b'":1}\n',
    "digits-both": b'{"type":"x","s":"' + b"7" * 400 + b'","n":' + BEYOND + b"}\n",
    "integral-float": tool_result(OK, b"1.0"),
    "integral-exponent": tool_result(OK, b"1e3"),
    "negative-zero": tool_result(OK, b"-0"),
    "negative-zero-float": tool_result(OK, b"-0.0"),
    "negative-zero-in-string": b'{"type":"text","text":"-0"}\n',
    "lone-surrogate": b'{"type":"text","text":"\\ud800"}\n',
    "lone-low-surrogate": b'{"type":"text","text":"a\\udc00b"}\n',
    "surrogate-pair": b'{"type":"text","text":"\\ud83d\\ude00"}\n',
    "escaped-backslash-u": b'{"type":"text","text":"\\\\ud800"}\n',
    "surrogate-in-key": b'{"type":"x","\\ud800":1}\n',
    "nesting-128": unknown(b"[" * 127 + b"]" * 127),
    "nesting-127": unknown(b"[" * 126 + b"]" * 126),
    "nesting-128-objects": unknown(b'{"a":' * 127 + b"1" + b"}" * 127),
    "nesting-128-long": unknown(
        b'{"s":"' + b"a" * 70_000 + b'","n":' + b"[" * 126 + b"]" * 126 + b"}"
    ),
    "brackets-in-string": b'{"type":"text","text":"' + b"[" * 300 + b'"}\n',
    "scopeless-stage": b'{"type":"stage","name":"x"}\n',
    "field-and-alias": b'{"type":"text","text":"a","delta":"b"}\n',
    "legacy-alias": b'{"type":"text","delta":"b"}\n',
    "extra-key-beside-arm": tool_result(b'{"ok":{"content":""},"x":1}'),
    "two-arms": tool_result(b'{"ok":{"content":""},"error":{"message":"x"}}'),
    "serde-struct-as-array": b'{"type":"tool_start","call":["c","read",{}]}\n',
    "serde-unit-as-map": b'{"type":"stage","name":"x","scope":{"run":null}}\n',
    "serde-arm-as-array": tool_result(b'{"ok":["x"]}'),
    "ts-null": b'{"type":"text","text":"a","ts":null}\n',
    "ts-negative": b'{"type":"text","text":"a","ts":-5}\n',
    "ts-float-and-integral": tool_result(OK, b"4200.0").replace(b"}\n", b',"ts":-5}\n'),
    "non-object": b"[1,2,3]\n",
    "missing-type": b'{"text":"a"}\n',
    "unknown-twice": b'{"type":"x"}\n{"type":"x"}\n',
    "plain": b'{"type":"stage","name":"x","scope":"turn","ts":5}\n',
    "long-plain": b'{"type":"text","text":"' + b"lorem ipsum " * 30_000 + b'"}\n',
}
#: Ends of streams that touch what a line alone cannot.
TAILS = {"torn": b'{"type":"te\n', "torn-unterminated": b'{"type":"te', "corrupt": b"{x\n"}


def stream_cases() -> Iterator[tuple[str, bytes]]:
    for name, line in LINES.items():
        yield name, line
        yield f"{name}+rc", line + RC
        yield f"text+{name}+rc", TEXT + line + RC
    for name, tail in TAILS.items():
        yield name, TEXT + tail
        yield f"{name}+blank", TEXT + tail + b"\n\n"
        yield f"{name}+rc", TEXT + tail + RC
    # a run of 309 digits at every offset from a multiple of 309: each is sampled once
    for pad in (0, 1, 2, 100, 307, 308, 309, 310, 617, 618):
        prefix = b'{"type":"x","p":"' + b"a" * pad + b'","n":'
        yield f"beyond-at-{pad}", prefix + BEYOND + b"}\n"
        yield f"within-at-{pad}", prefix + b"9" * 308 + b"}\n"
        yield f"string-at-{pad}", prefix + b'"' + b"9" * 309 + b'"}\n'


def careful(data: bytes, vocab: Vocabulary | None, choices: frozenset[str]) -> tuple[str, set[str]]:
    """Every outcome, whole (a ``-0.0`` told from ``0`` by ``repr``), and the points noted."""
    touched: set[str] = set()
    outcomes = list(decode(data, vocab, choices=choices, touched=touched))
    return repr(outcomes), touched


def compare(data: bytes, vocab: Vocabulary | None, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The careful decode with and without the prefilters, under the default reading and
    under every reading B reached from it (as ``read_stream`` explores them: a point a
    reading touches is taken on top of it; at most 32): the same answers."""
    expected: dict[frozenset[str], tuple[str, set[str]]] = {}
    with monkeypatch.context() as patch:
        patch.setattr(prefilters, "ENABLED", False)
        queue = [frozenset[str]()]
        while queue and len(expected) < 32:
            taken = queue.pop(0)
            if taken not in expected:
                expected[taken] = careful(data, vocab, taken)
                queue.extend(taken | {p} for p in sorted(expected[taken][1] - taken))
    assert prefilters.ENABLED
    for taken, answer in expected.items():
        assert careful(data, vocab, taken) == answer, sorted(taken)
    return set().union(*(touched for _, touched in expected.values()))


@pytest.mark.parametrize(("name", "data"), list(stream_cases()), ids=lambda v: str(v)[:40])
def test_the_prefilters_change_no_answer(
    name: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    compare(data, None, monkeypatch)


def test_the_streams_touch_every_point_a_decode_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The streams above touch every point but those of a vocabulary's own (below), of an
    envelope's, and the fold's (``unknown-count``: no decode notes it); and the ones named
    for a point touch it (so the comparison is not of two empty answers)."""
    seen: set[str] = set()
    for _, data in stream_cases():
        seen |= compare(data, None, monkeypatch)
    assert seen == IDS - {
        "prose-constraint",
        "learnt-alias",
        "shape-archived-today",
        "tokens-without-usage",
        "tokens-not-read",
        "unknown-count",
        # a client's use of the outcomes, found over them by the register, not the decode
        "after-terminator",
        "elapsed-clamp",
    }
    for name, point in (
        ("integer-beyond-at-start", "number-beyond-f64"),
        ("integer-beyond-whole-line", "number-beyond-f64"),
        ("duplicate-long", "duplicate-keys"),
        ("duplicate-deeper", "duplicate-keys"),
        ("duplicate-lost-object", "duplicate-keys"),
        ("duplicate-beside-long-integer", "duplicate-keys"),
        ("duplicate-long-one-colon-more", "duplicate-keys"),
        ("duplicate-unterminated", "duplicate-keys"),
        ("nesting-128-long", "deep-nesting"),
        ("lone-low-surrogate", "lone-surrogate"),
    ):
        assert point in careful(LINES[name], None, frozenset())[1], name
    for name, reading in (
        ("duplicate-after-bom", "utf8-bom"),
        ("duplicate-nested-after-bom", "utf8-bom"),
        ("duplicate-in-nbsp", "unicode-whitespace"),
    ):
        assert "duplicate-keys" in careful(LINES[name], None, frozenset({reading}))[1], name
    for pad in (0, 1, 307, 308, 309, 618):
        line = b'{"type":"x","p":"' + b"a" * pad + b'","n":' + BEYOND + b"}\n"
        assert careful(line, None, frozenset())[1] == {"number-beyond-f64"}, pad
    for name in (
        "integer-308",
        "integer-309-within",
        "digits-in-string",
        "nesting-127",
        "no-duplicate-long-nested",
        "no-duplicate-long",
    ):
        assert not careful(LINES[name], None, frozenset())[1], name


def test_vocabulary_points_too(wire_schema: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Learnt aliases and a prose constraint (the wire schema's vocabulary), an archived
    shape of today in an older stella's stream: the same answers."""
    wire = Vocabulary.from_wire_schema(wire_schema)
    older = Vocabulary.bundled("stella-older")
    seen: set[str] = set()
    learnt = (bundled_fixtures_dir() / "learnt_aliases.jsonl").read_bytes()
    for line in learnt.splitlines(keepends=True):
        seen |= compare(line + RC, wire, monkeypatch)
    seen |= compare(learnt, wire, monkeypatch)
    seen |= compare(json.dumps(TASK).encode() + b"\n" + RC, wire, monkeypatch)
    stage = b'{"type":"stage","name":"x"}\n'
    seen |= compare(stage + RC, older, monkeypatch)
    for _, data in stream_cases():
        compare(data, older, monkeypatch)
    assert {"learnt-alias", "prose-constraint", "shape-archived-today"} <= seen


@pytest.mark.parametrize("vocab_name", ["default", "stella-older"])
def test_every_fixture_stream(vocab_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = Vocabulary.bundled(vocab_name)
    for path in sorted(bundled_fixtures_dir().glob("*.jsonl")):
        compare(path.read_bytes(), vocab, monkeypatch)


READINGS = sorted(m.id for m in MUTATIONS.values() if m.reading)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases(max_mutations=3) | cases(mutations=READINGS, min_mutations=1, max_mutations=3))
def test_generated_streams(case: Case) -> None:
    """The kit's own cases, with the mutations that touch a point among them."""
    with pytest.MonkeyPatch.context() as patch:
        compare(case.stream, None, patch)
