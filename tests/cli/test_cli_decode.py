"""`stella-conform decode`, `validate` and `--version` from the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kit_inline

from stella_conform import __version__
from stella_conform.oracle.corpus import bundled_fixtures_dir

_BESIDE = Path(sys.executable).parent / "stella-conform"
EXE = str(_BESIDE) if _BESIDE.exists() else shutil.which("stella-conform")
FIX = bundled_fixtures_dir()


def sc(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    assert EXE, "stella-conform console script is not installed"
    return subprocess.run(
        [EXE, *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_version() -> None:
    out = sc("--version")
    assert out.returncode == 0 and __version__ in out.stdout


def test_decode_accepts_the_forward_compat_fixture() -> None:
    out = sc("decode", str(FIX / "from_a_newer_stella.jsonl"))
    assert out.returncode == 0, out.stderr
    assert "line 3: skip (unrecognized, inert) quantum_reticulation" in out.stdout
    assert "verdict: accept" in out.stdout


def test_decode_rejects_and_names_the_line() -> None:
    out = sc("decode", str(FIX / "bad_body_missing_field.jsonl"))
    assert out.returncode == 1
    assert "reject at line 2" in out.stdout and "missing required field 'text'" in out.stdout


def test_decode_json_output_and_stdin() -> None:
    data = (FIX / "torn_mid_string.jsonl").read_bytes()
    out = sc("decode", "--json", "-", stdin=data)
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    assert doc["summary"]["torn_final_line"] is True
    assert doc["lines"][-1]["outcome"] == "torn"


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_decode_json_shows_every_conforming_reading(source: str) -> None:
    """The default reading line by line, then every other one the oracle finds, each as its
    summary: from a file or from stdin (read again from a private copy)."""
    from stella_conform.oracle.readings import read_stream

    path = FIX / "json_not_object.jsonl"
    args = ("decode", "--json", "-") if source == "stdin" else ("decode", "--json", str(path))
    out = sc(*args, stdin=path.read_bytes() if source == "stdin" else None)
    assert out.returncode == 1  # the default reading rejects
    doc = json.loads(out.stdout)
    readings = read_stream(path.read_bytes())
    assert [(r["reading"], r["summary"]) for r in doc["also_conforming"]] == [
        (a.reading, a.summary.to_json()) for a in readings.alternatives
    ]
    assert doc["also_conforming"][0]["summary"]["verdict"] == "accept"
    text = sc("decode", str(path)).stdout
    assert "also conforming, reading non-object-line: accept" in text
    plain = json.loads(sc("decode", "--json", str(FIX / "minimal_run.jsonl")).stdout)
    assert plain["also_conforming"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["decode", "/no/such/file.jsonl"], "no such file"),
        (["decode", "/"], "is a directory"),
        (["decode", "--wire-schema", "/no/schema.json", "-"], "wire schema not found"),
        (["validate", "/no/such/file.jsonl"], "no such file"),
        (["decode"], "Missing argument"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    out = kit_inline(*args)  # stdin is empty
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_malformed_wire_schema_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"oneOf": 3}')
    out = kit_inline("decode", "--wire-schema", str(bad), "-")  # stdin is empty
    assert out.returncode == 2 and "unsupported wire schema" in out.stderr


def test_validate_reports_every_problem_with_line_numbers(tmp_path: Path) -> None:
    stream = tmp_path / "s.jsonl"
    stream.write_text(
        '{"type":"text"}\n{"type":"nope"}\nnot json\n'
        '{"type":"error","message":1,"retryable":true}\n'
    )
    out = sc("validate", str(stream))
    assert out.returncode == 1
    assert "line 1: known type 'text'" in out.stdout
    assert "line 2: unrecognized (nope)" in out.stdout
    assert "line 3: not JSON" in out.stdout
    assert "line 4: known type 'error'" in out.stdout
    assert "3 problem(s)" in out.stdout


def test_validate_with_wire_schema(wire_schema: Path) -> None:
    out = sc("validate", "--wire-schema", str(wire_schema), str(FIX / "from_a_newer_stella.jsonl"))
    assert out.returncode == 0, out.stdout
    assert "0 problem(s) against wire@agentevent.schema.json" in out.stdout


def test_validate_names_the_reading_a_problem_fits_under(wire_schema: Path, tmp_path: Path) -> None:
    """4200.0 where the wire schema says integer: JSON Schema 2020-12's integer is a value
    test (jsonschema finds no error), so a bare "breaks the schema" would say nothing a
    reader can check. It stays a problem of the default reading (as decode's exit says),
    and validate says the reading it fits under, as decode does; 4200.5 fits under none."""
    jsonschema = pytest.importorskip("jsonschema")
    body = '{"type":"tool_result","call_id":"c1","output":{"ok":{"content":""}},"duration_ms":'
    stream = tmp_path / "s.jsonl"
    schema = jsonschema.Draft202012Validator(json.loads(wire_schema.read_text()))
    assert not list(schema.iter_errors(json.loads(body + "4200.0}")))
    stream.write_text(f'{body}4200.0}}\n{body}4200.5}}\n{body}4200.0,"ts":-5}}\n')
    out = sc("validate", "--wire-schema", str(wire_schema), str(stream))
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("line 1: known type 'tool_result' with a body that does not fit")
    assert lines[0].endswith(" (it fits under reading integral-float)")
    assert lines[1].startswith("line 2: ") and "fits under" not in lines[1]
    assert lines[2].endswith(" (it fits under reading integral-float+ts-out-of-range)")
    assert lines[3].startswith("3 line(s), 3 problem(s) against wire@agentevent.schema.json")
    assert lines[3].endswith("; 2 of them fit(s) under another reading (docs/contract-readings.md)")


def _validated(out: subprocess.CompletedProcess[str]) -> dict[int, str]:
    """validate's problem lines, by line number."""
    return {
        int(line.split(":")[0].removeprefix("line ")): line
        for line in out.stdout.splitlines()
        if line.startswith("line ")
    }


@pytest.mark.parametrize("name", ["utf8_bom", "unicode_whitespace"])
def test_validate_names_the_json_text_reading_a_line_parses_under(name: str) -> None:
    """A line that is not JSON by the default reading is named with the reading it parses
    under: a BOM before line 1 and Unicode whitespace around a line are each read by reading B
    of their point, as decode says. Every line the fixture's other reading reads and the
    default does not is named with that reading, as its outcome there is."""
    from stella_conform.oracle.decoder import Kind
    from stella_conform.oracle.readings import read_stream

    path = FIX / f"{name}.jsonl"
    readings = read_stream(path.read_bytes())
    (other,) = readings.alternatives
    assert other.summary.verdict == "accept" and readings.default.summary.verdict == "reject"
    out = sc("validate", str(path))
    assert out.returncode == 1, out.stdout + out.stderr
    said = _validated(out)
    assert readings.default.summary.rejected_line in said
    for outcome in other.outcomes:
        if outcome.line in said:
            assert said[outcome.line].startswith(f"line {outcome.line}: not JSON")
            word = "it is blank" if outcome.kind is Kind.BLANK else "it parses"
            assert said[outcome.line].endswith(f" ({word} under reading {other.reading})")
    assert out.stdout.splitlines()[-1].endswith(
        f"{len(said)} problem(s) against stella-default@2026.11; {len(said)} of them fit(s) "
        "under another reading (docs/contract-readings.md)"
    )


BOM, NBSP, LS = b"\xef\xbb\xbf", b"\xc2\xa0", b"\xe2\x80\xa8"
_RESULT = b'{"type":"tool_result","call_id":"c1","output":{"ok":{"content":""}},"duration_ms":'
_STAGE = b'{"type":"stage","name":"x","scope":"turn"}'


@pytest.mark.parametrize(
    ("first", "line"),
    [
        (True, BOM + NBSP + _STAGE),  # only both points together
        (True, BOM + _RESULT + b"4200.0}"),  # parses by one, fits by two
        (False, NBSP + b'{"type":"text"}' + LS),  # parses, rejected under every reading
        (False, BOM + _STAGE),  # a BOM on line 2: no reading ignores it
        (False, NBSP + b"not json"),  # no reading parses it
        (False, LS + NBSP),  # blank
        (True, BOM + NBSP),  # blank, both points
    ],
    ids=[
        "bom-nbsp",
        "bom-float",
        "nbsp-rejected",
        "bom-line-2",
        "nbsp-not-json",
        "blank",
        "bom-nbsp-blank",
    ],
)
def test_validate_says_which_readings_parse_a_line_and_which_fit_it(
    tmp_path: Path, first: bool, line: bytes
) -> None:
    """What validate says of a line that is not JSON by the default reading, against the
    reference decoder reading the whole stream (the line, not the last, then another) under
    each set of reading B at the JSON-text points and integral-float: the fewest sets where
    the line is not "corrupt" (it parses), and where it is not rejected (it fits)."""
    from itertools import combinations

    from stella_conform.oracle.decoder import Kind, decode_all

    data = (b"" if first else _STAGE + b"\n") + line + b"\n" + _STAGE + b"\n"
    number = 1 if first else 2
    points = ("integral-float", "unicode-whitespace", "utf8-bom")
    parses: list[frozenset[str]] = []
    fits: list[frozenset[str]] = []
    blank, reason = False, None
    assert decode_all(data).outcomes[number - 1].reason.startswith("corrupt line")
    for size in (1, 2, 3):
        for taken in map(frozenset, combinations(points, size)):
            outcome = decode_all(data, choices=taken).outcomes[number - 1]
            if (outcome.reason or "").startswith("corrupt line"):
                continue
            if not any(p <= taken for p in parses):
                parses.append(taken)
                blank = blank or outcome.kind is Kind.BLANK
            if outcome.kind is Kind.REJECT:
                reason = reason or outcome.reason
            elif not any(f <= taken for f in fits):
                fits.append(taken)
    stream = tmp_path / "s.jsonl"
    stream.write_bytes(data)
    said = _validated(sc("validate", str(stream)))[number]
    plus = " or ".join("+".join(sorted(p)) for p in parses)
    fit = " or ".join("+".join(sorted(f)) for f in fits)
    assert said.startswith(f"line {number}: not JSON: ")
    if not parses:
        assert "under reading" not in said
    elif fits == parses:
        assert said.endswith(f" (it {'is blank' if blank else 'parses'} under reading {plus})")
    elif fits:
        assert said.endswith(f" (it parses under reading {plus}, and fits under reading {fit})")
    else:
        assert said.endswith(f" (it parses under reading {plus}, where it is rejected: {reason})")


def test_decode_prints_a_lone_surrogate_and_keeps_its_verdict() -> None:
    # the text is valid JSON (reading A of lone-surrogate): printing it must not turn
    # the verdict into a crash
    out = sc("decode", str(FIX / "lone_surrogate.jsonl"))
    assert out.returncode == 0, out.stderr
    assert "verdict: accept" in out.stdout and "\\ud800" in out.stdout
    doc = json.loads(sc("decode", "--json", str(FIX / "lone_surrogate.jsonl")).stdout)
    assert doc["summary"]["verdict"] == "accept"


def test_an_internal_error_exits_3_never_1(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import stella_conform.oracle.decoder as decoder
    from stella_conform.cli import main

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the kit")

    monkeypatch.setattr(decoder, "decode", broken)
    result = CliRunner().invoke(main, ["decode", str(FIX / "minimal_run.jsonl")])
    assert result.exit_code == 3
    assert "internal error" in result.output and "a bug in the kit" in result.output
