"""The readings of an envelope: its events follow the stream's points, and its token totals
have one of their own (``tokens-without-usage``)."""

from __future__ import annotations

import json

import pytest

from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge
from stella_conform.conformance.clients.runner import Observation
from stella_conform.oracle.corpus import iter_envelope_fixtures
from stella_conform.oracle.readings import envelope_also_conforming

DOC = {
    "schema_version": 1,
    "status": "completed",
    "text": "Done.",
    "cost_usd": 0.1,
    "reason": None,
    "model": "m",
    "events": [
        {"type": "text", "text": "Done."},
        {"type": "run_complete", "model": "m", "cost_usd": 0.1},
    ],
}


def _obs(**summary: object) -> Observation:
    return Observation(verdict="accept", summary={"verdict": "accept", **summary})


@pytest.mark.parametrize("tokens", [0, None])
def test_tokens_without_step_usage_are_zero_or_unknown(tokens: int | None) -> None:
    case = GradedCase(
        "e", json.dumps(DOC).encode(), "fixture", kind="envelope", command="stella run"
    )
    assert case.envelope.input_tokens == 0  # reading A: the sum of no step_usage events
    (other,) = case.alternatives
    assert other.reading == "tokens-without-usage" and other.document is not None
    assert other.document.input_tokens is None
    fields = {"status": "completed", "text": "Done.", "model": "m", "cost_usd": 0.1}
    j = judge(
        BY_ID["E.usage-read"],
        case,
        _obs(**fields, input_tokens=tokens, output_tokens=tokens),
        Context(),
    )
    assert j.verdict == "pass", j.message
    wrong = judge(
        BY_ID["E.usage-read"], case, _obs(**fields, input_tokens=7, output_tokens=7), Context()
    )
    assert wrong.verdict == "fail"


def test_with_step_usage_there_is_one_reading() -> None:
    usage = {
        "type": "step_usage", "step": 0, "model": "m", "input_tokens": 3, "output_tokens": 4,
        "cached_input_tokens": 0, "cost_usd": 0.1, "duration_ms": 1, "retries": 0, "tool_calls": 0,
    }  # fmt: skip
    doc = {**DOC, "events": [usage, *DOC["events"]]}
    case = GradedCase(
        "e", json.dumps(doc).encode(), "fixture", kind="envelope", command="stella run"
    )
    assert case.envelope.input_tokens == 3 and not case.alternatives


@pytest.mark.parametrize("fixture", list(iter_envelope_fixtures()), ids=lambda f: f.name)
def test_envelope_fixtures_list_their_other_readings(fixture: object) -> None:
    """As a stream fixture's expectation does (tests/oracle/test_fixture_corpus.py)."""
    expect = fixture.expect  # type: ignore[attr-defined]
    listed = expect.get("also_conforming", [])
    assert listed == envelope_also_conforming(fixture.data, fixture.command)  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", ["1.0", "1e0"])
def test_schema_version_written_as_a_float_is_a_reading(version: str) -> None:
    """The contract's own gate, jq's ``.schema_version == 1``, compares by value: 1.0 is
    version 1 there (integral-float B); a reader that wants the integer refuses it (A)."""
    doc = b'{"schema_version":' + version.encode() + b',"status":"error","text":null,"reason":"x"}'
    case = GradedCase("e", doc, "fixture", kind="envelope", command="stella run")
    assert case.envelope.verdict == "reject"
    other = case.alternatives[0]  # then with tokens-not-read: a pre-flight envelope's 0 tokens
    assert other.reading == "integral-float" and other.verdict == "accept"
    check = BY_ID["E.schema-version-gate"]
    for verdict in ("accept", "reject"):
        j = judge(check, case, Observation(verdict=verdict), Context(reporting=False))
        assert j.verdict == "pass", (verdict, j.message)
    fraction = doc.replace(version.encode(), b"1.5")
    case = GradedCase("e", fraction, "fixture", kind="envelope", command="stella run")
    assert not case.alternatives  # 1.5 is no version under any reading
    j = judge(check, case, Observation(verdict="accept"), Context(reporting=False))
    assert j.verdict == "fail"


USAGE = {
    "type": "step_usage", "step": 0, "model": "m", "input_tokens": 3, "output_tokens": 4,
    "cached_input_tokens": 0, "cost_usd": 0.1, "duration_ms": 1, "retries": 0, "tool_calls": 0,
}  # fmt: skip
METERED = {**DOC, "events": [USAGE, *DOC["events"]]}
PREFLIGHT = {"schema_version": 1, "status": "error", "text": None, "reason": "no API key found."}
RUN_FIELDS = {"status": "completed", "text": "Done.", "model": "m", "cost_usd": 0.1}


def _usage_judged(
    doc: dict[str, object], reads: frozenset[str] | None, **summary: object
) -> tuple[str, str]:
    case = GradedCase(
        "e", json.dumps(doc).encode(), "fixture", kind="envelope", command="stella run",
        reads=reads,
    )  # fmt: skip
    j = judge(BY_ID["E.usage-read"], case, _obs(**summary), Context())
    return j.verdict, j.message


@pytest.mark.parametrize("tokens", [0, None])
def test_a_reader_that_does_not_read_events_reports_no_tokens_as_0_or_null(
    tokens: int | None,
) -> None:
    """The envelope has no token keys ("A default run ... reports status, text,
    cost_usd, reason, model, and events"); the counts are in step_usage events, which a
    reader claiming reads=run never reads. Where the envelope holds none, its totals are
    nothing read (null, A) or none counted (0, B: the contract's own jq prints a count the
    document lacks as `.revisions // 0`)."""
    run_only = frozenset({"run"})
    verdict, message = _usage_judged(
        DOC, run_only, **RUN_FIELDS, input_tokens=tokens, output_tokens=tokens
    )
    assert verdict == "pass", message
    # a count from nowhere is no reading
    verdict, _ = _usage_judged(DOC, run_only, **RUN_FIELDS, input_tokens=7, output_tokens=7)
    assert verdict == "fail"


def test_a_reader_that_does_not_read_the_step_usage_there_has_no_zero_to_report() -> None:
    """Where the events hold step_usage, the count is in the document: a reader that did
    not read it reports null (nothing read); its 0 is a number it made up, which its users
    read as a run that spent no tokens."""
    run_only = frozenset({"run"})
    verdict, message = _usage_judged(
        METERED, run_only, **RUN_FIELDS, input_tokens=None, output_tokens=None
    )
    assert verdict == "pass", message
    verdict, message = _usage_judged(
        METERED, run_only, **RUN_FIELDS, input_tokens=0, output_tokens=0
    )
    assert verdict == "fail" and "input_tokens: expected null, client 0" in message
    case = GradedCase(
        "e", json.dumps(METERED).encode(), "fixture", kind="envelope", command="stella run",
        reads=run_only,
    )  # fmt: skip
    assert not case.alternatives  # no reading reports 0 here
    # cost_usd is a key of the run shape, which it does read: 0 for 0.1 is a misreading
    verdict, message = _usage_judged(
        METERED, run_only, **{**RUN_FIELDS, "cost_usd": 0}, input_tokens=None, output_tokens=None
    )
    assert verdict == "fail" and "cost_usd" in message


def test_an_envelope_without_a_cost_has_a_null_cost() -> None:
    """The pre-flight envelope has no cost_usd key; the contract's own summary prints the
    cost as it is (`"cost: $\\(.cost_usd)"`, where it writes `// 0` for a count it lacks):
    no reading reports 0.0."""
    fields = {"status": "error", "text": None, "model": None, "input_tokens": None}
    fields["output_tokens"] = None
    assert _usage_judged(PREFLIGHT, None, **fields, cost_usd=None)[0] == "pass"
    verdict, message = _usage_judged(PREFLIGHT, None, **fields, cost_usd=0.0)
    assert verdict == "fail" and "cost_usd: expected null, client 0.0" in message


def test_a_reader_of_the_events_still_sums_them() -> None:
    """The bug E.usage-read exists for: 0 from token keys stella never writes."""
    verdict, message = _usage_judged(METERED, None, **RUN_FIELDS, input_tokens=0, output_tokens=0)
    assert verdict == "fail" and "expected 3, client 0" in message
    assert _usage_judged(METERED, None, **RUN_FIELDS, input_tokens=3, output_tokens=4)[0] == (
        "pass"
    )


@pytest.mark.parametrize("events", ["absent", "null"])
@pytest.mark.parametrize("tokens", [0, None])
def test_an_envelope_without_events_has_no_tokens_or_zero(events: str, tokens: int | None) -> None:
    """The pre-flight envelope "has no model or event log to report"; a failure's events
    may be null: nothing to count, for any reader."""
    doc = dict(PREFLIGHT) if events == "absent" else {**DOC, "events": None}
    fields = {k: doc.get(k) for k in ("status", "text", "model", "cost_usd")}
    verdict, message = _usage_judged(doc, None, **fields, input_tokens=tokens, output_tokens=tokens)
    assert verdict == "pass", message
    assert _usage_judged(doc, None, **fields, input_tokens=5, output_tokens=5)[0] == "fail"
    case = GradedCase("e", json.dumps(doc).encode(), "fixture", kind="envelope")
    assert case.envelope.input_tokens is None  # reading A, the default, is unchanged
    assert [a.reading for a in case.alternatives] == ["tokens-not-read"]
