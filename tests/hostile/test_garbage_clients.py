"""Clients that write garbage: any message shape is a protocol error, never an exception
out of the runner, and their text reaches no report, page or log unescaped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    HOSTILE,
    VALID,
    kit,
    no_leaks,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from stella_conform.conformance.clients.runner import (
    Client,
    Observation,
    PersistentSession,
    run_report,
)
from stella_conform.oracle.corpus import bundled_fixtures_dir

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


TEMPLATES: dict[str, dict[str, object]] = {
    "hello": {"kind": "hello", "protocol": 1, "client": {"name": "p"}, "profiles": ["reader"]},
    "line": {"kind": "line", "line": 1, "outcome": "known", "type": "run_complete", "event": {}},
    "pending": {"kind": "pending", "line": 1},
    "summary": {
        "kind": "summary", "verdict": "accept", "rejected_line": None, "known_events": 1,
        "unrecognized_events": 0, "unrecognized_types": [], "final_text": None, "texts": [],
        "terminator": "run_complete", "turns_completed": 0, "stages": {"turn": [], "run": []},
        "elapsed_ms": 0, "preview": None, "tool_calls": [], "status": None, "text": None,
    },
}  # fmt: skip


@st.composite
def poisoned_conversations(draw: st.DrawFn, persistent: bool) -> list[bytes]:
    """A well-formed conversation with one position (or one whole message) replaced."""
    messages = [dict(TEMPLATES[k]) for k in ("hello", "pending", "line", "summary")]
    if persistent:
        for m in messages[1:]:
            m["id"] = "case-1"
    target = draw(st.integers(0, len(messages) - 1))
    value = draw(JSON_VALUES)
    if draw(st.booleans()):
        key = draw(st.sampled_from([*messages[target], "id", "extra"]))
        messages[target][key] = value
        lines = [json.dumps(m).encode() for m in messages]
    else:
        lines = [json.dumps(m).encode() for m in messages]
        lines[target] = json.dumps(value).encode()
    return lines


def _fake_run(monkeypatch: pytest.MonkeyPatch, lines: list[bytes], mode: str) -> Observation:
    from fake_peer import FakePeer

    from stella_conform.conformance.clients import runner

    monkeypatch.setattr(runner, "_start", lambda *a, **k: FakePeer(lines))
    client = Client(argv=("fake-peer",), mode=mode, timeout=1.0, line_timeout=0.5)  # type: ignore[arg-type]
    if mode == "report":
        return run_report(client, VALID)
    with PersistentSession(client) as session:
        return session.run(VALID)


@pytest.mark.parametrize("mode", ["report", "persistent"])
def test_no_client_message_shape_raises_out_of_the_runner(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Any JSON value in any message position: an Observation, a ProtocolError at worst."""
    from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge

    case = GradedCase("valid", VALID, "fixture")
    stream_checks = [c for c in BY_ID.values() if c.input == "stream"]

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(poisoned_conversations(persistent=mode == "persistent"))
    def prop(lines: list[bytes]) -> None:
        obs = _fake_run(monkeypatch, lines, mode)
        assert obs.status in ("ok", "protocol-error", "crash", "timeout")
        json.dumps(obs.to_json())  # the report can hold it
        obs.describe()
        for check in stream_checks:
            judge(check, case, obs, Context())

    prop()


def test_an_unhashable_kind_is_a_protocol_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in ("[]", "{}"):
        hello = json.dumps(TEMPLATES["hello"]).encode()
        obs = _fake_run(monkeypatch, [hello, b'{"kind":' + kind.encode() + b"}"], "report")
        assert obs.status == "protocol-error" and "unknown message kind" in obs.detail


def _run_report_kit(tmp_path: Path, behaviour: str) -> subprocess.CompletedProcess[str]:
    return kit(
        "run", "--mode", "report", "--examples", "0", "--only", "R1.valid-runs-accepted",
        "--no-database", "--json", "r.json", "--junit-xml", "r.xml", "--markdown", "r.md",
        "--failures-dir", "f", "--timeout", "60", "--line-timeout", "30",
        "--", sys.executable, str(HOSTILE), behaviour, cwd=tmp_path,
    )  # fmt: skip


def test_reports_survive_surrogates_nan_and_control_characters(tmp_path: Path) -> None:
    """Strict JSON (RFC 8259), XML 1.0 and UTF-8 Markdown, whatever the client wrote."""
    import xml.etree.ElementTree as ET

    out = _run_report_kit(tmp_path, "report-poison")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in report.json")

    doc = json.loads(
        (tmp_path / "r.json").read_bytes().decode("utf-8"), parse_constant=no_constants
    )
    check = doc["checks"][0]
    assert check["outcome"] == "fail"
    summary = check["failures"][0]["observed"]["summary"]
    assert summary["tool_calls"][0]["cost"] == "NaN" and summary["tool_calls"][0]["n"] == "Infinity"
    assert summary["final_text"].startswith("\ufffd")  # the lone surrogate, replaced
    ET.fromstring((tmp_path / "r.xml").read_bytes())  # well-formed XML 1.0
    (tmp_path / "r.md").read_bytes().decode("utf-8")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # written whole
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout


def is_one_code_span(text: str) -> bool:
    """CommonMark: a code span opens and closes with equal backtick runs, none inside."""
    import re

    fence = re.match(r"`+", text)
    if fence is None or not text.endswith(fence.group()):
        return False
    inner = text[len(fence.group()) : -len(fence.group())]
    return all(len(run) != len(fence.group()) for run in re.findall(r"`+", inner))


@pytest.mark.slow
def test_client_text_cannot_inject_markdown_html_or_workflow_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTILE_FIRST_RUN_ANSWERS", str(tmp_path / "first"))  # the preflight
    out = _run_report_kit(tmp_path, "report-html")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    markdown = (tmp_path / "r.md").read_text()
    assert "<img" in markdown  # shown, but only inside a code span:
    for line in markdown.splitlines():
        if "<img" in line:
            detail = line.split(" | ")[2].split("<br>")[0]
            assert is_one_code_span(detail), detail
    assert not any(line.lstrip().startswith("::") for line in out.stdout.splitlines())
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    # the same client failing the preflight: one line on stderr, escaped too
    monkeypatch.delenv("HOSTILE_FIRST_RUN_ANSWERS")
    out = _run_report_kit(tmp_path, "report-html")
    assert out.returncode == 2 and "<img" in out.stderr
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    assert not any(line.lstrip().startswith("::") for line in out.stderr.splitlines())


def test_replay_shows_client_text_without_escape_sequences_or_workflow_commands() -> None:
    """A line ``type`` with a screen clear, stderr with ``::error::`` at a line start."""
    fixture = bundled_fixtures_dir() / "minimal_run.jsonl"
    args = ["replay", str(fixture), "--mode", "report", "--timeout", "60"]
    out = kit(*args, "--", sys.executable, str(HOSTILE), "report-poison")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "\\x1b[2J" in out.stdout and ":\u200b:error::x" in out.stdout  # shown, as text
    for bad in ("\x1b", "\x07", "\x9b"):
        assert bad not in out.stdout + out.stderr
    assert not any(line.lstrip().startswith("::") for line in out.stdout.splitlines())
