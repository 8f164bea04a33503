"""Excerpts keep the line that decides a check; replay --check shows every field whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ADAPTERS, kit

from stella_conform.conformance.checks import GradedCase
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.report.excerpt import (
    DECISIVE_WIDTH,
    decisive_lines,
    field_differences,
    show_stream,
)
from stella_conform.conformance.report.failures import failure_lines
from stella_conform.conformance.suite import CaseFailure
from stella_conform.oracle.corpus import expectation_from, write_fixture
from stella_conform.oracle.decoder import decode_all

STAGE = b'{"type":"stage","name":"execute","scope":"turn"}\n'
TEXT = b'{"type":"text","text":"ok"}\n'
END = b'{"type":"run_complete","model":"m","cost_usd":0.002}\n'


def long_stream(bad_at: int, total: int = 40) -> bytes:
    """``total`` lines, valid except a text without its text at line ``bad_at``."""
    lines = [STAGE] + [TEXT] * (total - 2) + [END]
    lines[bad_at - 1] = (
        b'{"type":"text","padding":"' + b"x" * 300 + b'","ts":9223372036854775808}\n'
    )
    return b"".join(lines)


def test_the_rejected_line_is_decisive_and_shown_whole_in_a_long_stream() -> None:
    stream = long_stream(bad_at=25)
    case = GradedCase("c", stream, "generated")
    assert case.expected.verdict == "reject" and case.expected.rejected_line == 25
    keep = decisive_lines(case, Observation(verdict="accept"), "expected reject at line 25")
    assert keep == (25,)
    shown = show_stream(stream, limit=12, keep=keep)
    rows = shown.splitlines()
    assert any(r.startswith("   25 ▶ ") and '"ts":9223372036854775808}⏎' in r for r in rows)
    assert any(r.startswith("   24 | ") for r in rows) and any(
        r.startswith("   26 | ") for r in rows
    )
    assert any(r.startswith("   40 | ") for r in rows)  # the end is always shown
    assert "      … " in shown and len(rows) <= 12 + 4
    # without the mark the same line is cut at the usual width, hiding the value
    assert '"ts":9223372036854775808' not in show_stream(stream, limit=40)


def test_a_decisive_line_beyond_the_width_keeps_both_ends() -> None:
    line = b'{"type":"text","text":"' + b"y" * (DECISIVE_WIDTH * 2) + b'","ts":-1}\n'
    shown = show_stream(line, keep=(1,))
    assert shown.startswith('    1 ▶ {"type":"text"') and shown.endswith('"ts":-1}⏎')
    assert f"({len(line) - 1} bytes)" in shown


def test_lines_the_client_read_differently_are_decisive() -> None:
    stream = STAGE + b'{"type":"holographic_verdict"}\n' + TEXT + END
    case = GradedCase("c", stream, "generated")
    obs = Observation(verdict="accept")
    obs.lines = {
        1: {"outcome": "known", "type": "stage"},
        2: {"outcome": "known", "type": "text"},  # an unknown type read as known
        3: {"outcome": "known", "type": "text"},
        4: {"outcome": "known", "type": "run_complete"},
    }
    assert decisive_lines(case, obs) == (2,)


def test_the_terminal_report_shows_the_decisive_line_of_a_long_case() -> None:
    stream = long_stream(bad_at=30)
    failure = CaseFailure(
        "generated", "generated", "expected reject at line 30", {}, {"verdict": "accept"},
        stream=stream, decisive=(30,),
    )  # fmt: skip
    text = "\n".join(failure_lines(failure))
    assert "   30 ▶ " in text and '"ts":9223372036854775808' in text
    assert failure.to_json()["decisive_lines"] == [30]


def test_field_differences_mark_what_differs_and_what_was_not_reported() -> None:
    rows = field_differences(
        {"verdict": "accept", "final_text": "a", "unrecognized_types": ["x", "y"], "texts": []},
        {"verdict": "accept", "final_text": "b", "unrecognized_types": ["y", "x"]},
        ["verdict", "final_text", "unrecognized_types", "texts"],
    )
    assert rows[0] == '  verdict:            "accept" (both)'
    assert rows[1] == '≠ final_text:         expected "a"' and rows[2].endswith('client   "b"')
    assert rows[3].startswith("  unrecognized_types: ")  # order does not matter for a set
    assert rows[4] == "  texts:              expected []; client did not report it"


def test_replay_check_prints_the_stream_and_every_field_whole(tmp_path: Path) -> None:
    long_text = "z" * 900  # far past any excerpt's cut
    stream = (
        STAGE
        + json.dumps({"type": "text_delta", "delta": long_text}).encode() + b"\n"
        + json.dumps({"type": "text", "text": long_text}).encode() + b"\n"
        + END
    )  # fmt: skip
    summary = decode_all(stream).summary
    expect = expectation_from(summary, rules=["preview"], description="long text")
    write_fixture(tmp_path, "long_text", stream, expect)
    broken = ADAPTERS / "broken" / "dashboard_appends_text_to_preview.py"
    out = kit(
        "replay", str(tmp_path / "long_text.jsonl"), "--check", "D.text-replaces-preview",
        "--mode", "report", "--", sys.executable, str(broken),
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "▶ marks the lines that decide the check" in out.stdout
    assert "    3 ▶ " in out.stdout  # the text that should have replaced the preview
    differing = [line for line in out.stdout.splitlines() if line.startswith("≠ ")]
    assert any(line.startswith("≠ final_text:") for line in differing)
    assert f'expected "{long_text}"' in out.stdout
    assert f'client   "{long_text}{long_text}"' in out.stdout


def test_a_long_expected_reading_says_where_it_was_cut() -> None:
    failure = CaseFailure(
        "c", "fixture", "m", {"verdict": "accept", "final_text": "w" * 1000}, {"verdict": "accept"}
    )
    expected = next(line for line in failure_lines(failure) if "expected:" in line)
    assert expected.endswith("… (cut at 600 of 1039 characters)")


def test_a_generated_case_shows_the_lines_its_mutation_touched(tmp_path: Path) -> None:
    """Exit mode names no line; the generator's marks say where the case was broken."""
    import dataclasses

    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.conformance.suite import SuiteConfig, run_check

    script = tmp_path / "big_ts.py"
    script.write_text(
        "import re, sys\n"
        "data = sys.stdin.buffer.read()\n"
        "sys.exit(1 if re.search(rb'\"ts\": ?(9223372036854775808|18446744073709551615)', data)"
        " else 0)\n"
    )
    check = dataclasses.replace(
        BY_ID["R1.valid-runs-accepted"], fixtures=(), mutations=("ts-extreme",), valid_runs=False
    )
    config = SuiteConfig(
        client=Client(argv=(sys.executable, str(script)), timeout=20.0),
        examples=20, database_dir=None, failures_dir=tmp_path / "f", shrink_budget=10,
    )  # fmt: skip
    result = run_check(check, config)
    assert result.outcome == "fail", result.message
    failure = result.failures[0]
    assert failure.decisive and failure.stream is not None
    lines = failure.stream.split(b"\n")
    assert any(
        b"922337203685477580" in lines[n - 1] or b"18446744" in lines[n - 1]
        for n in failure.decisive
    )
    shown = "\n".join(failure_lines(failure))
    assert "▶" in shown and ("9223372036854775808" in shown or "18446744073709551615" in shown)


def test_a_long_value_is_digested_by_its_ends_length_and_sha256() -> None:
    """A later failure's expected text of a megabyte is shown by its ends, and can be told
    apart from another and checked against a file that holds it whole."""
    import hashlib

    from stella_conform.conformance.report.excerpt import DIGEST_WIDTH, digested, digested_values

    short = "x" * DIGEST_WIDTH
    assert digested(short) == short
    text = "head" + "\u00e9" * 1_000_000 + "tail\ud800"
    shown = digested(text)
    assert len(shown) < DIGEST_WIDTH + 200
    assert shown.startswith("head\u00e9") and shown.endswith("tail\ud800")
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert f" … ({len(text)} characters, sha256 {sha}) … " in shown
    doc = {"verdict": "accept", "texts": [text, "ok"], "n": 3, "final_text": None}
    assert digested_values(doc) == {"verdict": "accept", "texts": [shown, "ok"], "n": 3,
                                    "final_text": None}  # fmt: skip
