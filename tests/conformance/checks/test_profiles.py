"""The oracles and inputs of the dashboard, recorder, envelope and wrapper profiles.

The client matrix (test_client_matrix.py) proves every check can fail; this file proves
the expected side is right: hand-written envelope and scenario expectations agree with
the reference envelope reader and the exit-code table, generated envelopes have the
shape their variant names, and the fake stella follows the documented rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stella_conform.conformance.checks import CATALOGUE, PROFILE_INPUT, json_equal
from stella_conform.conformance.clients.wrapper import expected_outcome, staged
from stella_conform.conformance.suite import fixture_path
from stella_conform.generators.envelopes import VARIANTS, envelope_cases
from stella_conform.generators.scenarios import scenario_cases
from stella_conform.oracle.corpus import (
    ENVELOPE_COMPARED,
    bundled_fixtures_dir,
    iter_envelope_fixtures,
    iter_scenarios,
)
from stella_conform.oracle.decoder import decode_all
from stella_conform.oracle.envelope import read_envelope
from stella_conform.schemas.vocabulary import load_schema

FAKE = [sys.executable, "-m", "stella_conform.fake_stella"]
SCENARIOS = bundled_fixtures_dir() / "scenarios"
FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------ fixtures vs oracles


def test_every_fixture_a_check_names_exists() -> None:
    for check in CATALOGUE:
        for name in check.fixtures_for(learnt=True):
            assert fixture_path(check, name, bundled_fixtures_dir()).is_file(), (check.id, name)
    assert set(PROFILE_INPUT) == {c.profile for c in CATALOGUE}


@pytest.mark.parametrize("fixture", list(iter_envelope_fixtures()), ids=lambda f: f.name)
def test_envelope_expectations_agree_with_the_reference_reader(fixture: object) -> None:
    reading = read_envelope(fixture.data, fixture.command).to_json()  # type: ignore[attr-defined]
    expect = fixture.expect  # type: ignore[attr-defined]
    for key in ENVELOPE_COMPARED:
        if key in expect:
            assert reading[key] == expect[key], (key, reading)


@pytest.mark.parametrize("scenario", list(iter_scenarios()), ids=lambda s: s.name)
def test_scenario_expectations_agree_with_the_exit_code_table(scenario: object) -> None:
    assert expected_outcome(scenario.scenario) == scenario.expect  # type: ignore[attr-defined]


def test_envelope_fixtures_of_accepted_shapes_fit_our_envelope_schema() -> None:
    schema = load_schema("envelope.schema.json")
    for fixture in iter_envelope_fixtures():
        doc = json.loads(fixture.data)
        reading = read_envelope(fixture.data, fixture.command)
        if reading.verdict == "accept" and reading.shape in ("raw", "pipeline", "preflight"):
            jsonschema.validate(doc, schema)


def test_json_equal_compares_values_not_spellings() -> None:
    assert json_equal({"a": 1, "b": [1.0, "x"]}, {"b": [1, "x"], "a": 1.0})
    assert not json_equal({"a": True}, {"a": 1})
    assert not json_equal({"a": None}, {})
    assert not json_equal([1, 2], [2, 1])


# ------------------------------------------------------------------ generators


@FAST
@given(st.data())
def test_each_envelope_variant_reads_as_its_name_says(data: st.DataObject) -> None:
    variant = data.draw(st.sampled_from(VARIANTS))
    case = data.draw(envelope_cases(variants=(variant,)))
    reading = read_envelope(case.data, case.command)
    if variant in (
        "schema-version",
        "events-bad-body",
        "events-bad-values",
        "events-bad-edge-values",
    ):
        assert reading.verdict == "reject", (variant, reading.reason)
        return
    assert reading.verdict == "accept", (variant, reading.reason)
    shapes = {
        "raw": {"raw"},
        "pipeline": {"pipeline"},
        "failure": {"raw", "pipeline"},
        "preflight": {"preflight"},
        "files-touched": {"raw"},
        "events-unknown": {"raw"},
        "query": {"query-rows", "query-object"},
        "extra-keys": {"raw", "query-rows", "query-object"},
        "usage-values": {"raw", "pipeline"},
        "events-edge-values": {"raw"},
    }
    assert reading.shape in shapes[variant]
    if variant == "failure":
        assert reading.text is None and reading.status in ("error", "aborted")
    if variant == "files-touched":
        assert reading.files_touched
    if variant == "events-unknown":
        assert reading.unrecognized_events
    if variant == "usage-values":
        assert reading.input_tokens is not None and reading.input_tokens > 2**53
    if variant in ("raw", "pipeline", "failure", "preflight", "files-touched", "usage-values"):
        jsonschema.validate(json.loads(case.data), load_schema("envelope.schema.json"))


@FAST
@given(scenario_cases())
def test_generated_scenarios_are_valid_runs_cut_where_their_ending_says(case: object) -> None:
    scenario, stream = case.scenario, case.stream  # type: ignore[attr-defined]
    summary = decode_all(stream).summary
    assert summary.verdict == "accept"
    code = scenario["exit"]
    if code == 0:
        assert summary.terminator == "run_complete"
    elif code == 1:
        assert summary.terminator == "error"
    else:
        assert summary.terminator is None
    assert (code == 3) == ("reason" in scenario)


# ------------------------------------------------------------------ the fake stella


def fake(
    *args: str, scenario: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full = dict(os.environ)
    full.pop("STELLA_OUTPUT_FORMAT", None)
    full["STELLA_FAKE_PACE_MS"] = "0"
    if scenario is not None:
        full["STELLA_FAKE_SCENARIO"] = str(SCENARIOS / f"{scenario}.scenario.json")
    full.update(env or {})
    return subprocess.run([*FAKE, *args], capture_output=True, env=full, timeout=30)


@pytest.mark.parametrize(
    "argv",
    [
        ("--output-format", "json", "run", "task"),
        ("--output-format=json", "run", "task"),
        ("stats", "--output-format", "json"),
        ("run", "--output-format", "yaml", "task"),
        ("run", "--test-command", "make test", "task"),
        ("run",),
        ("frobnicate",),
    ],
)
def test_fake_stella_refuses_what_stella_refuses(argv: tuple[str, ...]) -> None:
    done = fake(*argv)
    assert done.returncode == 2
    assert done.stderr.startswith(b"stella: error: ")
    assert done.stdout == b""


def test_fake_stella_takes_the_format_after_the_subcommand_or_from_the_environment() -> None:
    stream = (bundled_fixtures_dir() / "multiple_turns.jsonl").read_bytes()
    flag = fake("--spend-limit", "3", "run", "--output-format", "stream-json", "task",
                scenario="exit_0_completed")  # fmt: skip
    env = fake("run", "task", scenario="exit_0_completed",
               env={"STELLA_OUTPUT_FORMAT": "stream-json"})  # fmt: skip
    assert flag.returncode == env.returncode == 0
    assert flag.stdout == env.stdout == stream
    text = fake("run", "task", scenario="exit_0_completed")
    assert text.stdout == b"two\n"


def test_fake_stella_logs_every_invocation(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    fake("run", "--output-format", "json", "t", env={"STELLA_FAKE_LOG": str(log)})
    fake("--output-format", "json", "run", "t", env={"STELLA_FAKE_LOG": str(log)})
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["output_format"] == "json" and first["format_from"] == "flag"
    assert first["parse_error"] is None
    assert "--output-format" in second["parse_error"]


@pytest.mark.parametrize("scenario", list(iter_scenarios()), ids=lambda s: s.name)
@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_fake_stella_plays_each_scenario_as_its_ending_says(scenario: object, fmt: str) -> None:
    doc = scenario.scenario  # type: ignore[attr-defined]
    done = fake("run", "--output-format", fmt, "task", scenario=scenario.name)  # type: ignore[attr-defined]
    code = doc.get("exit", 0)
    assert done.returncode == (code or (1 if doc.get("preflight") else 0))
    if fmt == "json":
        if doc.get("preflight"):
            reading = read_envelope(done.stdout)
            assert reading.shape == "preflight" and reading.stop_reason == doc["preflight"]
        elif doc.get("die_mid_line"):
            assert done.stdout and not done.stdout.endswith(b"\n")
            assert read_envelope(done.stdout).verdict == "reject"  # half an envelope
        elif code in (130, 143):
            assert done.stdout == b""  # killed before the summary was written
        else:
            reading = read_envelope(done.stdout)
            assert reading.verdict == "accept"
            want = {0: "completed", 1: "error", 3: "aborted"}[code]
            assert reading.status == want
            if code == 3:
                assert reading.stop_reason == doc["reason"]
        return
    summary = decode_all(done.stdout).summary
    assert summary.verdict == "accept"
    assert summary.torn_final_line == bool(doc.get("die_mid_line"))


def test_fake_stella_envelope_has_the_pipeline_shape_with_pipeline() -> None:
    done = fake("run", "--output-format", "json", "--pipeline", "v", "t", scenario="exit_1_failed")
    doc = json.loads(done.stdout)
    assert "files_touched" not in doc
    assert doc["task_class"] is None and doc["text"] is None and doc["status"] == "error"
    assert read_envelope(done.stdout, "stella run --output-format json --pipeline v").shape == (
        "pipeline"
    )


def test_fake_stella_is_installed_as_a_console_script() -> None:
    script = Path(sys.executable).parent / "stella-conform-fake-stella"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "fake" in done.stdout


def test_the_wrapper_stage_puts_the_fake_first_on_path_and_cleans_up() -> None:
    with staged({"exit": 3, "reason": "cap"}, b"") as stage:
        root = Path(stage.env["STELLA_FAKE_SCENARIO"]).parent
        done = subprocess.run(
            ["stella", "run", "--output-format", "json", "t"],
            env={**os.environ, **stage.env},
            capture_output=True,
            timeout=30,
        )
        assert done.returncode == 3
        assert json.loads(done.stdout)["reason"] == "cap"
        assert stage.invocations()[0]["argv"] == ["run", "--output-format", "json", "t"]
    assert not root.exists()
