"""The grammar audit: each production's scanner finds it (and only where it is), and default
runs of every profile a production lists draw it: four seeds' runs together, not each run
(generators/grammar.py, conformance/reach.py, the table in docs/generators.md, whose line
under the table says which cells some runs miss)."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO
from test_seams import SEAM_EXAMPLES

from stella_conform.conformance.reach import measure
from stella_conform.generators.edges import CELLS
from stella_conform.generators.grammar import BY_ID, PRODUCTIONS, scan

sys.path.insert(0, str(REPO / "benchmarks"))

RC = b'{"type":"run_complete","model":"m","cost_usd":0.5}\n'
#: One stream (or document) per production that holds it.
EXAMPLES: dict[str, tuple[bytes, str]] = {
    "ws.space-between": (b'{"type": "text","text":"a"}\n', "stream"),
    "ws.tab-between": (b'{"type":\t"text","text":"a"}\n', "stream"),
    "ws.cr-between": (b'{"type":"text",\r"text":"a"}\n', "stream"),
    "ws.lf-between": (b'{"schema_version":1,\n"status":"completed"}\n', "envelope"),
    "ws.inside-brackets": (b'{ "type":"text","text":"a"}\n', "stream"),
    "ws.before-value": (b' {"type":"text","text":"a"}\n', "stream"),
    "ws.after-value": (b'{"type":"text","text":"a"}\t\n', "stream"),
    "str.escape-quote-backslash": (b'{"type":"text","text":"say \\"hi\\""}\n', "stream"),
    "str.escape-short": (b'{"type":"text","text":"a\\nb"}\n', "stream"),
    "str.escape-solidus": (b'{"type":"text","text":"a\\/b"}\n', "stream"),
    "str.escape-u-control": (b'{"type":"text","text":"\\u0000"}\n', "stream"),
    "str.escape-u-ascii": (b'{"type":"text","text":"\\u0041"}\n', "stream"),
    "str.escape-u-bmp": (b'{"type":"text","text":"caf\\u00e9"}\n', "stream"),
    "str.escape-u-upper": (b'{"type":"text","text":"caf\\u00E9"}\n', "stream"),
    "str.escape-surrogate-pair": (b'{"type":"text","text":"\\ud83d\\ude42"}\n', "stream"),
    "str.lone-surrogate": (b'{"type":"text","text":"\\ud800"}\n', "stream"),
    "str.raw-2-byte": ('{"type":"text","text":"é"}\n'.encode(), "stream"),
    "str.raw-3-byte": ('{"type":"text","text":"日"}\n'.encode(), "stream"),
    "str.raw-4-byte": ('{"type":"text","text":"🙂"}\n'.encode(), "stream"),
    "str.raw-line-separator": ('{"type":"text","text":"a\u2028b"}\n'.encode(), "stream"),
    "str.empty": (b'{"type":"text","text":""}\n', "stream"),
    "str.escaped-key": (b'{"type":"text","\\u0074ext":"a"}\n', "stream"),
    "str.escaped-type": (b'{"type":"run\\u005fcomplete","model":"m","cost_usd":0}\n', "stream"),
    "num.zero": (b'{"type":"x","n":0}\n', "stream"),
    "num.negative": (b'{"type":"x","n":-5}\n', "stream"),
    "num.fraction": (b'{"type":"x","n":0.5}\n', "stream"),
    "num.exponent": (b'{"type":"x","n":2e-3}\n', "stream"),
    "num.exponent-upper": (b'{"type":"x","n":2E-3}\n', "stream"),
    "num.exponent-plus": (b'{"type":"x","n":2e+3}\n', "stream"),
    "num.integer-literal-number": (b'{"type":"x","n":2.0}\n', "stream"),
    "num.negative-zero-float": (b'{"type":"x","n":-0.0}\n', "stream"),
    "num.negative-zero-integer": (b'{"type":"x","n":-0}\n', "stream"),
    "num.above-2^53": (b'{"type":"x","n":9007199254740993}\n', "stream"),
    "num.above-2^63": (b'{"type":"x","n":9223372036854775809}\n', "stream"),
    "num.below-minus-2^53": (b'{"type":"x","n":-9007199254740993}\n', "stream"),
    "num.beyond-u64": (b'{"type":"x","n":18446744073709551616}\n', "stream"),
    "num.beyond-f64": (b'{"type":"x","n":1e400}\n', "stream"),
    "lit.true-false": (b'{"type":"x","n":true}\n', "stream"),
    "lit.null": (b'{"type":"x","n":null}\n', "stream"),
    "nest.empty-object": (b'{"type":"x","n":{}}\n', "stream"),
    "nest.empty-array": (b'{"type":"x","n":[ ]}\n', "stream"),
    "nest.deep": (b'{"type":"x","n":' + b"[" * 70 + b"]" * 70 + b"}\n", "stream"),
    "nest.deeper-than-128": (b'{"type":"x","n":' + b"[" * 130 + b"]" * 130 + b"}\n", "stream"),
    "obj.key-order": (b'{"text":"a","type":"text"}\n', "stream"),
    "bad.number-spelling": (b'{"type":"x","n":01}\n' + RC, "stream"),
    "bad.raw-control": (b'{"type":"text","text":"a\tb"}\n' + RC, "stream"),
    "bad.escape": (b'{"type":"text","text":"\\x41"}\n' + RC, "stream"),
    "bad.literal": (b'{"type":"x","n":NaN}\n' + RC, "stream"),
    "bad.utf8": (b'{"type":"text","text":"\xff"}\n' + RC, "stream"),
    "frame.crlf": (b'{"type":"x"}\r\n' + RC, "stream"),
    "frame.mixed-endings": (b'{"type":"x"}\r\n{"type":"y"}\n' + RC, "stream"),
    "frame.blank-empty": (b'{"type":"x"}\n\n' + RC, "stream"),
    "frame.blank-whitespace": (b'{"type":"x"}\n \t\n' + RC, "stream"),
    "frame.blank-cr": (b'{"type":"x"}\n\r\n' + RC, "stream"),
    "frame.blank-first": (b"\n" + RC, "stream"),
    "frame.blank-after-last": (RC + b"  \n", "stream"),
    "frame.unterminated-last": (RC[:-1], "stream"),
    "frame.torn-last": (RC + b'{"type":"te', "stream"),
    "frame.torn-then-newline": (RC + b'{"type":"te\n', "stream"),
    "frame.two-values": (b'{"type":"x"} {"type":"y"}\n' + RC, "stream"),
    "frame.value-across-lines": (b'{\n"type": "x"\n}\n' + RC, "stream"),
    "frame.corrupt-middle": (b"not json\n" + RC, "stream"),
    "frame.not-object": (b"[1,2]\n" + RC, "stream"),
    "frame.over-64k": (b'{"type":"x","p":"' + b"a" * 70_000 + b'"}\n', "stream"),
    "frame.over-1m": (b'{"type":"x","p":"' + b"a" * 1_100_000 + b'"}\n', "stream"),
    "frame.char-across-4k": (
        b'{"type":"text","text":"' + b"x" * (4096 - 24) + "🙂".encode() + b'"}\n',
        "stream",
    ),
    "frame.bom": (b"\xef\xbb\xbf" + RC, "stream"),
    "frame.unicode-whitespace": ("\u00a0".encode() + RC + RC, "stream"),
}
EXAMPLES.update(SEAM_EXAMPLES)  # the seams' rows (test_seams.py)


def test_every_production_has_an_example() -> None:
    """The edge cells' examples are their strata (tests/generators/test_edges.py)."""
    assert set(EXAMPLES) | {"obj.duplicate-key"} | set(CELLS) == set(BY_ID)


@pytest.mark.parametrize("production", sorted(EXAMPLES))
def test_the_scanner_finds_each_production(production: str) -> None:
    data, kind = EXAMPLES[production]
    assert production in scan(data, kind)


def test_a_compact_stream_holds_none_of_the_spellings() -> None:
    """stella's own compact ASCII lines: no whitespace, escape or framing row fires."""
    plain = b'{"type":"text","text":"plain words"}\n' + RC
    assert scan(plain) == {"num.fraction"}


def test_what_a_string_holds_is_not_whitespace_or_structure() -> None:
    inside = b'{"type":"text","text":"a : b , [ { } ] 1e5 -0 true \\\\u0041"}\n'
    found = scan(inside)
    assert not {p for p in found if p.startswith(("ws.", "num.", "lit.", "nest."))}
    assert "str.escape-u-ascii" not in found  # an escaped backslash, then u0041 as text


@pytest.mark.parametrize(
    "literal",
    [
        "1e400",
        str(2**1024 - 2**970),  # infinite to a correct parse, below 2**1024
        str(2**1024 - 2**970 - 1),  # serde_json refuses it ("number out of range")
        "1.7976931348623158e308",  # serde_json refuses it too
        "1.7976931348623157e308",
        "18446744073709551616.0",  # serde_json refuses it ("invalid number")
        "18446744073709551616.05",
        str(2**64),
    ],
)
def test_a_number_is_beyond_f64_where_the_decoder_touches_the_point(literal: str) -> None:
    """num.beyond-f64 is where the reference decoder touches number-beyond-f64 (the
    grammar had its own boundary, infinity or 2**1024, and missed literals in between)."""
    from stella_conform.oracle.decoder import decode_all

    line = b'{"type":"x","n":' + literal.encode() + b"}\n"
    touched: set[str] = set()
    decode_all(line + RC, touched=touched)
    assert ("num.beyond-f64" in scan(line)) is ("number-beyond-f64" in touched), literal


def test_duplicate_keys_are_the_oracle_s_to_see() -> None:
    assert "obj.duplicate-key" in scan(RC, touched={"duplicate-keys"})


@pytest.mark.slow
def test_every_production_is_reached_in_a_default_run_of_each_profile_it_lists() -> None:
    """The default runs of four seeds (every check of each profile, 25 examples each).

    Hypothesis mixes constants of the modules it sees as local into some draws, so under
    pytest a seed draws other cases than a kit run of it: four runs, not one, so that a
    production a run draws twice on average is not missed by chance here."""
    profiles = sorted({p for production in PRODUCTIONS for p in production.profiles})
    reach = measure(profiles, seeds=(0, 1, 2, 3))
    missed = [
        f"{production.id} in {profile}"
        for production in PRODUCTIONS
        for profile in production.profiles
        if not reach[profile].found.get(production.id)
    ]
    assert not missed, missed


def test_the_docs_table_is_the_measured_one() -> None:
    """docs/generators.md shows what benchmarks/reach.py measured, for every production."""
    import reach

    results = json.loads(reach.RESULTS.read_text())
    text = (REPO / "docs" / "generators.md").read_text()
    table = text.split(reach.START, 1)[1].split(reach.END, 1)[0].strip()
    assert table == reach.render(results)
    assert all(p in results[prof]["found"] for p in BY_ID for prof in BY_ID[p].profiles)


def test_the_power_table_is_the_measured_one() -> None:
    """docs/generators.md's power table is benchmarks/power-results.json's, a row for every
    broken client of targets.json and every one measured."""
    import power

    doc = json.loads((REPO / "adapters" / "broken" / "targets.json").read_text())
    text = (REPO / "docs" / "generators.md").read_text()
    table = text.split(power.START, 1)[1].split(power.END, 1)[0].strip()
    assert table == power.render(doc["clients"])
    assert "not measured" not in table


def test_every_broken_client_says_what_its_pitfall_needs() -> None:
    """targets.json's needs (power.py's reach column) name productions or case kinds."""
    from stella_conform.generators import MUTATIONS
    from stella_conform.generators.envelopes import VARIANTS
    from stella_conform.generators.journals import READER_VARIANTS
    from stella_conform.generators.scenarios import KINDS

    doc = json.loads((REPO / "adapters" / "broken" / "targets.json").read_text())
    assert set(doc["needs"]) == set(doc["clients"])
    known = set(BY_ID) | set(MUTATIONS) | set(VARIANTS) | set(READER_VARIANTS) | set(KINDS)
    for client, needs in doc["needs"].items():
        for need in needs:
            assert set(need.split("+")) <= known, (client, need)
