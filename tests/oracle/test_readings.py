"""The register of readings: the oracle computes each reading, the grader passes either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from hypothesis import HealthCheck, Phase, find, given, settings

from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge
from stella_conform.conformance.clients.runner import Observation
from stella_conform.generators.events import EventStrategies
from stella_conform.oracle.readings import BY_ID as POINTS
from stella_conform.oracle.readings import IDS, label, read_stream
from stella_conform.oracle.readings import POINTS as REGISTER
from stella_conform.schemas.prose import violation
from stella_conform.schemas.vocabulary import Vocabulary

TEXT = b'{"type":"text","text":"a"}\n'
RC = b'{"type":"run_complete","model":"m","cost_usd":0.002}\n'

#: A stream per point: (bytes, default verdict, verdict under reading B).
POINT_CASES = {
    "utf8-bom": (b"\xef\xbb\xbf" + TEXT + RC, "reject", "accept"),
    "non-object-line": (TEXT + b"[1,2,3]\n" + RC, "reject", "accept"),
    "missing-or-non-string-type": (b'{"text":"a"}\n' + RC, "accept", "reject"),
    "scopeless-stage": (b'{"type":"stage","name":"x"}\n' + RC, "accept", "reject"),
    "field-and-alias": (b'{"type":"text","text":"a","delta":"b"}\n' + RC, "accept", "reject"),
    "ts-out-of-range": (b'{"type":"text","text":"a","ts":-5}\n' + RC, "reject", "accept"),
    "ts-null": (b'{"type":"text","text":"a","ts":null}\n' + RC, "accept", "reject"),
    # both accept: the count differs (2 events, 1 name)
    "unknown-count": (b'{"type":"x"}\n{"type":"x"}\n' + RC, "accept", "accept"),
    "torn-then-newline": (TEXT + b'{"type":"te\n', "accept", "reject"),
    "unicode-whitespace": (TEXT.replace(b"}", b"}\xc2\xa0") + RC, "reject", "accept"),
    "negative-zero": (
        b'{"type":"tool_result","call_id":"c","output":{"ok":{"content":""}},"duration_ms":-0}\n'
        + RC,
        "accept",
        "reject",
    ),
    "integral-float": (
        b'{"type":"tool_result","call_id":"c","output":{"ok":{"content":""}},"duration_ms":1.0}\n'
        + RC,
        "reject",
        "accept",
    ),
    "number-beyond-f64": (b'{"type":"x","n":1e400}\n' + RC, "accept", "reject"),
    "lone-surrogate": (b'{"type":"text","text":"\\udc00"}\n' + RC, "accept", "reject"),
    "deep-nesting": (  # 128 levels: the event object and 127 arrays (serde_json refuses)
        b'{"type":"x","n":' + b"[" * 127 + b"]" * 127 + b"}\n" + RC,
        "accept",
        "reject",
    ),
    "duplicate-keys": (b'{"type":"text","text":"a","text":"b"}\n' + RC, "accept", "reject"),
    # a client's use of the outcomes (oracle/client_points.py): where it stops reading ...
    "after-terminator": (TEXT + RC + b'{"type":"text"}\n', "reject", "accept"),
    # ... and how it clocks the run (both accept: the elapsed time differs, 600 or 300)
    "elapsed-clamp": (
        TEXT.replace(b"}", b',"ts":1000}')
        + TEXT.replace(b"}", b',"ts":1500}')
        + TEXT.replace(b"}", b',"ts":1200}')
        + RC.replace(b"}", b',"ts":1300}'),
        "accept",
        "accept",
    ),
    "extra-key-beside-arm": (
        b'{"type":"tool_result","call_id":"c","output":{"ok":{"content":""},"x":1},'
        b'"duration_ms":1}\n' + RC,
        "accept",
        "reject",
    ),
    # serde's other forms: a struct as an array, a unit variant as a one-key map
    "serde-forms": (
        b'{"type":"tool_start","call":["c","read",{}]}\n'
        b'{"type":"stage","name":"x","scope":{"run":null}}\n' + RC,
        "reject",
        "accept",
    ),
}


def test_every_point_is_registered_once_and_tested() -> None:
    assert len(REGISTER) == len(IDS) == len(POINTS)
    # prose-constraint needs a wire schema that states one: tested below; an archived shape
    # of today in an older stella's stream needs that stella:
    # tests/conformance/checks/test_claims_versions.py;
    # tokens-without-usage is an envelope's: tests/oracle/test_readings_envelopes.py
    assert set(POINT_CASES) == IDS - {
        "prose-constraint",
        "learnt-alias",  # a wire schema's descriptions: tests/schemas/test_learnt_aliases.py
        "shape-archived-today",
        "tokens-without-usage",
        "tokens-not-read",  # an envelope's too: tests/oracle/test_readings_envelopes.py
    }


TASK = {
    "type": "task_update",
    "tasks": [
        {
            "id": "t1",
            "subject": "s",
            "status": "pending",
            "contract": {
                "kind": "definition_of_done",
                "checks": [{"statement": "green", "mechanism": {"name": "my_linter"}}],
            },
        }
    ],
}


def test_a_prose_only_constraint_is_a_registered_point(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    assert vocab.prose_constrained == {"task_update"}
    assert not Vocabulary.default().prose_constrained
    broken = json.dumps(TASK).encode() + b"\n" + RC
    readings = read_stream(broken, vocab)
    assert readings.touched == {"prose-constraint"}
    assert readings.default.summary.verdict == "reject"  # contributed, and no judge
    assert "carries no judge" in str(readings.default.summary.reason)
    (other,) = readings.alternatives
    assert other.summary.verdict == "accept"  # the schema's keywords allow it
    builtin = json.loads(json.dumps(TASK))
    builtin["tasks"][0]["contract"]["checks"][0]["mechanism"]["name"] = "unit"
    assert not read_stream(json.dumps(builtin).encode() + b"\n" + RC, vocab).touched


def test_no_body_generated_as_valid_breaks_a_prose_constraint(wire_schema: Path) -> None:
    vocab = Vocabulary.from_wire_schema(wire_schema)
    strategies = EventStrategies(vocab)
    seen = []

    @settings(max_examples=60, database=None, suppress_health_check=list(HealthCheck))
    @given(strategies.for_type("task_update"))
    def check(event: dict[str, Any]) -> None:
        assert violation(vocab, "task_update", event) is None, event
        seen.append(event)

    check()
    # the schema's keywords alone do write such bodies: the repair is what keeps them out
    # (that one exists is the point, not a minimal one: no shrinking, 1-4 CPU-s of it)
    unmended = find(
        strategies._build("task_update"),
        lambda e: violation(vocab, "task_update", e) is not None,
        settings=settings(
            max_examples=300,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
        ),
    )
    assert unmended["type"] == "task_update"


def test_the_register_is_documented(repo: Path) -> None:
    doc = (repo / "docs" / "contract-readings.md").read_text(encoding="utf-8")
    for point in IDS:
        assert f"`{point}`" in doc, point


@pytest.mark.parametrize("point", sorted(POINT_CASES))
def test_each_point_has_two_readings(point: str) -> None:
    stream, default, other = POINT_CASES[point]
    readings = read_stream(stream)
    # reading B of negative-zero reads -0 as the float -0.0, which integral-float's B reads
    # back as the integer 0: that combination is the default again, so no third reading
    also = {"integral-float"} if point == "negative-zero" else set()
    assert readings.touched == {point} | also
    assert readings.default.summary.verdict == default
    (alternative,) = readings.alternatives
    assert alternative.taken == {point} and alternative.summary.verdict == other


@pytest.mark.parametrize("digits", ["2" + "0" * 308, "-" + "9" * 309, "1" + "0" * 400])
def test_an_integer_literal_beyond_f64_is_the_same_point_as_1e400(digits: str) -> None:
    """serde_json reads an integer beyond u64 as a float: 309 digits overflow it too."""
    stream = b'{"type":"x","n":' + digits.encode() + b"}\n" + RC
    readings = read_stream(stream)
    assert readings.touched == {"number-beyond-f64"}
    (alternative,) = readings.alternatives
    assert alternative.summary.verdict == "reject"
    # just inside the range, and the same digits inside a string: no point
    assert not read_stream(b'{"type":"x","n":' + b"9" * 308 + b"}\n" + RC).touched
    quoted = b'{"type":"text","text":"' + digits.encode() + b'"}\n' + RC
    assert not read_stream(quoted).touched


def test_a_plain_stream_has_one_reading() -> None:
    readings = read_stream(b'{"type":"stage","name":"x","scope":"turn","ts":5}\n' + TEXT + RC)
    assert readings.default.summary.verdict == "accept"
    assert not readings.touched and not readings.alternatives


def test_nesting_of_127_levels_is_json_under_every_reading() -> None:
    """serde_json parses 127 levels and refuses 128: the point starts at 128, not 129."""
    line = b'{"type":"x","n":' + b"[" * 126 + b"]" * 126 + b"}\n"
    assert not read_stream(line + RC).touched


def test_two_arms_in_one_wrapper_is_a_key_beside_its_arm() -> None:
    """Accepted with no reading before, though the schema's oneOf and stella refuse it."""
    line = (
        b'{"type":"tool_result","call_id":"c","output":{"ok":{"content":""},'
        b'"error":{"message":"x"}},"duration_ms":1}\n'
    )
    readings = read_stream(line + RC)
    assert readings.touched == {"extra-key-beside-arm"}
    assert readings.default.summary.verdict == "accept"
    (other,) = readings.alternatives
    assert other.summary.verdict == "reject" and "two arms" in str(other.summary.reason)


def test_a_read_only_contract_with_checks_breaks_a_prose_constraint(wire_schema: Path) -> None:
    """The wire schema says a read_only task contract "carries no checks"; its keywords let
    one ride along as an unknown field; stella refuses it."""
    vocab = Vocabulary.from_wire_schema(wire_schema)
    task = json.loads(json.dumps(TASK))
    task["tasks"][0]["contract"] = {
        "kind": "read_only",
        "checks": task["tasks"][0]["contract"]["checks"],  # the copy's: TASK is shared
    }
    task["tasks"][0]["contract"]["checks"][0]["mechanism"]["name"] = "unit"
    readings = read_stream(json.dumps(task).encode() + b"\n" + RC, vocab)
    assert readings.touched == {"prose-constraint"}
    assert "read_only task contract carries checks" in str(readings.default.summary.reason)
    (other,) = readings.alternatives
    assert other.summary.verdict == "accept"
    del task["tasks"][0]["contract"]["checks"]
    assert not read_stream(json.dumps(task).encode() + b"\n" + RC, vocab).touched


def test_readings_combine_when_b_reveals_another_point() -> None:
    # B at the non-object line reads on, into a line without a type
    readings = read_stream(b"[1]\n" + b'{"text":"a"}\n' + RC)
    assert {a.reading for a in readings.alternatives} == {
        "non-object-line",
        "missing-or-non-string-type+non-object-line",
    }


def _obs(verdict: str, **summary: object) -> Observation:
    return Observation(verdict=verdict, summary={"verdict": verdict, **summary})


def test_the_grader_passes_either_reading_and_names_the_one_taken() -> None:
    case = GradedCase("t", TEXT + b"[1,2,3]\n" + RC, "fixture")
    check = BY_ID["R1.valid-runs-accepted"]
    a = judge(check, case, _obs("reject", rejected_line=2), Context())
    b = judge(check, case, _obs("accept"), Context())
    assert (a.verdict, a.readings) == ("pass", {"non-object-line": "A"})
    assert (b.verdict, b.readings) == ("pass", {"non-object-line": "B"})


def test_detail_checks_follow_the_reading_the_client_took() -> None:
    case = GradedCase("t", TEXT + b"[1,2,3]\n" + RC, "fixture")
    count = BY_ID["R3.unknown-counted"]
    # reading B skips the line as unrecognized: it must be counted
    assert judge(count, case, _obs("accept", unrecognized_events=1), Context()).verdict == "pass"
    wrong = judge(count, case, _obs("accept", unrecognized_events=0), Context())
    assert wrong.verdict == "fail" and "expected 1 unrecognized" in wrong.message
    named = BY_ID["R4.rejection-names-line"]
    assert judge(named, case, _obs("reject", rejected_line=2), Context()).verdict == "pass"
    assert judge(named, case, _obs("reject", rejected_line=3), Context()).verdict == "fail"


def test_no_reading_allows_what_both_forbid() -> None:
    # a JSON string holding an event is an error (A) or unrecognized (B), never that event
    stream = TEXT + b'"{\\"type\\":\\"text\\",\\"text\\":\\"smuggled\\"}"\n' + RC
    case = GradedCase("t", stream, "fixture")
    obs = _obs("accept")
    obs.lines = {
        1: {"outcome": "known", "type": "text"},
        2: {"outcome": "known", "type": "text"},
        3: {"outcome": "known", "type": "run_complete"},
    }
    j = judge(BY_ID["R1.object-per-line"], case, obs, Context())
    assert j.verdict == "fail" and "line 2" in j.message


def test_an_envelope_s_events_follow_the_same_readings() -> None:
    doc = {
        "schema_version": 1,
        "status": "completed",
        "text": "Done.",
        "cost_usd": 0.1,
        "reason": None,
        "model": "m",
        "events": [{"type": "text", "text": "Done."}, {"text": "no type"}],
    }
    case = GradedCase(
        "e", json.dumps(doc).encode(), "fixture", kind="envelope", command="stella run"
    )
    assert case.envelope.verdict == "accept"  # reading A: a line without a type is skipped
    # (with no step_usage, its token totals are 0 or unknown: test_readings_envelopes.py)
    others = {a.reading: a.verdict for a in case.alternatives}
    assert others["missing-or-non-string-type"] == "reject"
    check = BY_ID["E.events-follow-stream-rules"]
    for verdict, reading in (("accept", "A"), ("reject", "B")):
        j = judge(check, case, _obs(verdict, unrecognized_events=1), Context())
        assert j.verdict == "pass"
        assert j.readings["missing-or-non-string-type"] == reading


@pytest.mark.parametrize(
    ("line", "repeated"),
    [
        (b'{"type":"text","text":"a","text":"b"}', True),
        (b'{"type":"text","text" : "a", "text"\t:"b"}', True),  # spaces before the colon
        (b'{"type":"tool_start","call":{"call_id":"c","name":"n","input":{"a":1,"a":2}}}', True),
        (b'{"type":"text","text":"x\\":y","text":"z"}', True),  # a key-like end in a string
        (b'{"type":"text","te\\"xt":1,"text":"ok","te\\"xt":2}', True),  # an escaped quote
        (b'{"type":"text","text":"x\\":y"}', False),
        (b'{"type":"tool_start","call":{"call_id":"c","name":"n","input":{"a":{"a":1}}}}', False),
        (b'{"type":"text","text":"ok"}', False),
    ],
)
def test_a_key_written_twice_is_noted_however_the_line_is_spelled(
    line: bytes, repeated: bool
) -> None:
    """A repeated key is noted in nested objects, with spaces before the colon, and next to
    strings and keys that hold a quote and a colon; never where no key repeats."""
    assert ("duplicate-keys" in read_stream(line + b"\n").touched) is repeated


def test_what_ends_a_line_is_a_decision_the_register_records() -> None:
    """Only ``\\n`` ends a line; a lone CR inside one is JSON whitespace: no reading ends a
    line there (so the fixture has none), and docs/contract-readings.md says why, naming
    the fixtures, mutation, check and broken client that hold the decision."""
    from stella_conform.oracle.corpus import bundled_fixtures_dir
    from stella_conform.oracle.readings import read_stream

    repo = REPO
    stream = (bundled_fixtures_dir() / "cr_inside_line.jsonl").read_bytes()
    assert b"\r" in stream.split(b"\n")[0]
    readings = read_stream(stream)
    assert readings.default.summary.verdict == "accept" and not readings.alternatives
    doc = (repo / "docs" / "contract-readings.md").read_text()
    section = doc.split("## Decided, not registered: what ends a line", 1)[1].split("\n## ")[0]
    for named in ("crlf_endings", "cr_inside_line", "line_separators_in_strings"):
        assert f"`{named}`" in section and (bundled_fixtures_dir() / f"{named}.jsonl").exists()
    assert "`R1.lines-end-only-at-newline`" in section and "`cr-in-line`" in section
    assert "cr-in-line" in BY_ID["R1.lines-end-only-at-newline"].mutations
    assert (repo / "adapters" / "broken" / "readline_ends_lines_at_cr.js").exists()


_REPEATED = b'{"type":"text","text":"a","text":"b"}'


@pytest.mark.parametrize(
    ("wrapped", "point"),
    [
        (b"\xef\xbb\xbf" + _REPEATED, "utf8-bom"),  # a BOM before line 1
        (b"\xc2\xa0" + _REPEATED + b"\xe2\x80\xa8", "unicode-whitespace"),
        (b"\x0c" + _REPEATED, "unicode-whitespace"),
    ],
    ids=["bom", "nbsp-and-ls", "form-feed"],
)
def test_a_key_written_twice_is_noted_on_a_line_another_reading_parses(
    wrapped: bytes, point: str
) -> None:
    """A line that parses only taking B at a JSON-text point (a BOM, Unicode whitespace) is
    searched for a repeated key as that reading parses it, not as written, BOM and all
    (where the search would find no JSON, leave duplicate-keys untouched and never compute
    the reading that takes B at both: a serde-derive client that strips the BOM or trims
    the line). Under it the line reads as the bare line reads taking B at duplicate-keys."""
    from stella_conform.oracle.decoder import decode_all

    bare = decode_all(_REPEATED + b"\n" + RC, choices=frozenset({"duplicate-keys"}))
    assert bare.summary.verdict == "reject"
    readings = read_stream(wrapped + b"\n" + RC)
    assert "duplicate-keys" in readings.touched
    both = {a.reading: a.summary.to_json() for a in readings.alternatives}
    assert both[label({point, "duplicate-keys"})] == bare.summary.to_json()


def test_a_key_written_twice_is_noted_beside_an_integer_of_any_length() -> None:
    """The search for a repeated key does not parse integers with int(), which refuses more
    than 4300 digits: the repeat is noted whatever the integer's length, beside 5000 digits
    as beside 400, as the reference decoder reads the line alike (both are beyond f64)."""
    from stella_conform.oracle.decoder import decode_all

    for digits in (400, 5000):
        line = b'{"type":"text","text":"a","text":"b","n":' + b"1" * digits + b"}\n"
        touched: set[str] = set()
        decode_all(line + RC, touched=touched)
        assert touched == {"duplicate-keys", "number-beyond-f64"}, digits


_PROBE = """\
use std::io::BufRead;
fn main() {
    for line in std::io::stdin().lock().lines() {
        match serde_json::from_str::<serde_json::Value>(&line.unwrap()) {
            Ok(_) => println!("ok"),
            Err(e) => println!("{}", e),
        }
    }
}
"""


def _near_f64_max() -> list[str]:
    """Number literals about the largest float, written as integers, with a fraction and an
    exponent, signed or not (a fixed draw)."""
    import random

    draw = random.Random(2026)
    edge = 2**1024 - 2**970  # halfway from the largest float to 2**1024
    found = [str(edge - 1), str(edge), str(-edge), "1.7976931348623157e308"]
    found += ["1.7976931348623158e308", "17976931348623157e292", "0.17976931348623158e309"]
    found += ["1e308", "1e309", "0e999999999999", "1e-400", "9" * 308]
    # an exponent written with more digits than int() reads (leading zeros are JSON)
    found += [f"1.7976931348623158e{'0' * 5000}308", f"1e-{'0' * 5000}1", f"0e{'0' * 5000}"]
    found += [f"{edge - 1}.0e+{'0' * 5000}", f"{edge - 1}e0"]
    found += [str(edge + draw.randint(-(2**975), 2**975)) for _ in range(300)]
    # about 2**64 with a point: serde's parse_decimal refuses 1844674407370955161[6-9].[0-5]
    for last in "0123456789":
        for fraction in ("0", "5", "6", "9", "05", "50", "0000"):
            whole = "1844674407370955161" + last
            found += [f"{whole}.{fraction}", f"-{whole}.{fraction}", f"{whole}.{fraction}e3"]
            found += [f"{whole}.{fraction}E-2", f"{whole}0.{fraction}", f"{whole[:-1]}.{fraction}"]
    for _ in range(300):
        digits = "17976931348623" + "".join(draw.choice("0123456789") for _ in range(12))
        cut = draw.randint(1, len(digits) - 1)
        sign = draw.choice(["", "-"])
        found.append(f"{sign}{digits[:cut]}.{digits[cut:]}e{draw.choice(['', '+'])}{309 - cut}")
    return found


def test_a_number_serde_json_or_a_correct_parse_finds_beyond_f64_is_the_point(
    tmp_path: Path,
) -> None:
    """serde_json (1.0.87, Debian's) keeps the digits that fit a u64 and multiplies by a
    power of ten: it refuses, "number out of range", numbers a correctly rounded parse reads
    as the largest float (1.7976931348623158e308, 2**1024 - 2**970 - 1); and a correct parse
    makes an integer infinite from 2**1024 - 2**970, a tie rounded to even, not from 2**1024.
    Touched only from 2**1024 and for literals Python reads as infinite, the point would
    fail a serde client refusing such a line (reading B, stella's). Each literal here,
    in an unrecognized event, touches the point exactly when serde_json, built here and
    asked, refuses it, or Python's float() overflows on it; serde also refuses the valid
    18446744073709551616.0 ("invalid number", its parse_decimal's digit check), which is
    not the point either."""
    import subprocess

    from toolchains import cargo_build

    from stella_conform.oracle.decoder import decode_all

    project = tmp_path / "probe"
    (project / "src").mkdir(parents=True)
    (project / "Cargo.toml").write_text(
        '[package]\nname = "serde-number-probe"\nversion = "0.1.0"\nedition = "2021"\n'
        '[dependencies]\nserde_json = "1"\n'
    )
    (project / "src" / "main.rs").write_text(_PROBE)
    probe = cargo_build(project, "serde-number-probe")
    literals = _near_f64_max()
    said = subprocess.run(
        [str(probe)], input="\n".join(literals) + "\n", capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert len(said) == len(literals)
    refused = 0
    for literal, serde in zip(literals, said, strict=True):
        refusals = ("number out of range", "invalid number", "EOF while parsing a value")
        assert serde == "ok" or serde.startswith(refusals), (literal, serde)
        try:
            number = float(literal) if "e" in literal or "." in literal else float(int(literal))
            overflows = abs(number) == float("inf")
        except OverflowError:
            overflows = True
        beyond = serde != "ok" or overflows
        refused += serde != "ok" and not overflows
        touched: set[str] = set()
        decode_all(b'{"type":"x","n":' + literal.encode() + b"}\n" + RC, touched=touched)
        assert ("number-beyond-f64" in touched) is beyond, (literal, serde)
    assert refused  # some that only serde refuses
