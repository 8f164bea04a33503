"""What "none" is in a summary, and where a run ends: each decided with the contract's words.

* A summary's "none" spelled two ways that say the same passes either way (a preview with
  no delta pending, ``null`` or ``""``; usage before any ``step_usage``; elapsed time from
  fewer than two stamps; an envelope's unrecognized count without an event log), and a
  number where nothing was read does not (0 tokens from a reader of no ``step_usage``
  where the envelope holds some; 0.0 for an envelope without a cost).
* Two registered readings: a client that stops at ``run_complete`` (``after-terminator``)
  and a dashboard that clamps the whole run's elapsed time (``elapsed-clamp``).

docs/adapter-protocol.md (the summary field by field) and docs/contract-readings.md give
the contract's words for each.  The clients are graded on every seed of a sweep: a reading
honoured on some seeds only is a false failure waiting.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, REPO

from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge, select
from stella_conform.conformance.checks.claims import from_hello
from stella_conform.conformance.clients.runner import (
    Client,
    Observation,
    ensure_mode_supported,
    resolve_client,
)
from stella_conform.conformance.suite import SuiteConfig, run_check, shared_sessions
from stella_conform.schemas.vocabulary import Vocabulary

FIXTURES = REPO / "fixtures"
RC = b'{"type":"run_complete","model":"m","cost_usd":0.002}\n'
TEXT = b'{"type":"text","text":"a"}\n'
USAGE = (
    b'{"type":"step_usage","step":1,"model":"m","input_tokens":1200,"output_tokens":7,'
    b'"cached_input_tokens":0,"cost_usd":0.01,"duration_ms":5,"retries":0,"tool_calls":0}\n'
)
ZERO_USAGE = {"input_tokens": 0, "output_tokens": 0, "duration_ms": 0}


def _stream(data: bytes, vocab: Vocabulary | None = None) -> GradedCase:
    return GradedCase("t", data, "fixture", vocab=vocab)


def _fixture(name: str) -> GradedCase:
    return _stream((FIXTURES / f"{name}.jsonl").read_bytes())


def _obs(
    verdict: str = "accept", lines: dict[int, Any] | None = None, **summary: Any
) -> Observation:
    return Observation(verdict=verdict, summary={"verdict": verdict, **summary}, lines=lines or {})


def _judged(check_id: str, case: GradedCase, obs: Observation) -> tuple[str, str]:
    j = judge(BY_ID[check_id], case, obs, Context())
    return j.verdict, j.message


# ---------------------------------------------------------------------- "none", spelled


def _dashboard(case: GradedCase, **fields: Any) -> dict[str, Any]:
    """The oracle's dashboard fields of an accepted case, with ``fields`` in their place."""
    s = case.expected
    return {
        "final_text": s.final_text, "texts": list(s.texts), "preview": s.preview,
        "elapsed_ms": s.elapsed_ms, "usage": s.usage, **fields,
    }  # fmt: skip


@pytest.mark.parametrize("check_id", ["D.text-replaces-preview", "D.legacy-spellings-read"])
def test_no_preview_is_null_or_the_empty_string(check_id: str) -> None:
    """The preview is the deltas since the last text, concatenated: none pending is null or
    "" (docs/adapter-protocol.md); a preview the stream does not have still fails."""
    case = _fixture("minimal_run")
    assert case.expected.preview is None
    for preview in (None, ""):
        assert _judged(check_id, case, _obs(**_dashboard(case, preview=preview)))[0] == "pass"
    verdict, message = _judged(check_id, case, _obs(**_dashboard(case, preview="Hello.")))
    assert verdict == "fail" and 'preview: expected null, client "Hello."' in message
    # a pending delta that is empty shows nothing either: "" (the oracle's) or null
    empty = _stream(TEXT + b'{"type":"text_delta","delta":""}\n' + RC)
    assert empty.expected.preview == ""
    for preview in (None, ""):
        assert _judged(check_id, empty, _obs(**_dashboard(empty, preview=preview)))[0] == "pass"


def test_usage_before_any_step_usage_is_null_or_zeros() -> None:
    """Summed over no step_usage: null or the three counts at 0 (tokens-without-usage's
    words); where the stream has a step_usage the client does not know, only null."""
    check = "D.integers-exact"
    plain = _stream(TEXT + RC)
    for usage in (None, ZERO_USAGE):
        assert _judged(check, plain, _obs(**_dashboard(plain, usage=usage)))[0] == "pass"
    assert (
        _judged(check, plain, _obs(**_dashboard(plain, usage={**ZERO_USAGE, "duration_ms": 1})))[0]
        == "fail"
    )
    metered = TEXT + USAGE + RC
    known = _stream(metered)
    assert _judged(check, known, _obs(**_dashboard(known, usage=None)))[0] == "fail"
    # a dashboard that knows no step_usage read no count: its zeros are made up
    blind = _stream(metered, Vocabulary.default().restrict({"text", "run_complete"}))
    assert blind.expected.usage is None
    assert _judged(check, blind, _obs(**_dashboard(blind, usage=None)))[0] == "pass"
    verdict, message = _judged(check, blind, _obs(**_dashboard(blind, usage=ZERO_USAGE)))
    assert verdict == "fail" and "usage: expected null" in message


@pytest.mark.parametrize(
    ("stamps", "none"), [((), True), ((1000,), True), ((1000, 1000), False)], ids=str
)
def test_elapsed_time_from_fewer_than_two_stamps_is_null_or_zero(
    stamps: tuple[int, ...], none: bool
) -> None:
    """No time difference to clamp before two stamps: null or 0; from two on, a number."""
    lines = [TEXT.replace(b"}", b',"ts":%d}' % ts) for ts in stamps]
    case = _stream(b"".join(lines) + TEXT + RC)
    for elapsed in (None, 0):
        verdict, _ = _judged(
            "D.elapsed-clamped", case, _obs(**_dashboard(case, elapsed_ms=elapsed))
        )
        assert verdict == ("pass" if none or elapsed == 0 else "fail"), elapsed


def test_an_envelope_without_events_counts_no_unrecognized_event_either_way() -> None:
    doc = (FIXTURES / "envelopes" / "preflight_no_api_key.json").read_bytes()
    case = GradedCase("e", doc, "fixture", kind="envelope", command="stella run")
    for count in (None, 0):
        assert (
            _judged("E.events-follow-stream-rules", case, _obs(unrecognized_events=count))[0]
            == "pass"
        )
    assert _judged("E.events-follow-stream-rules", case, _obs(unrecognized_events=1))[0] == "fail"


def _envelope_usage(name: str, reads: frozenset[str] | None, **summary: Any) -> tuple[str, str]:
    path = FIXTURES / "envelopes" / f"{name}.json"
    command = json.loads(path.with_name(f"{name}.expect.json").read_text())["command"]
    case = GradedCase("e", path.read_bytes(), "fixture", kind="envelope", command=command,
                      reads=reads)  # fmt: skip
    reading = {k: case.envelope.to_json()[k] for k in ("status", "text", "model", "cost_usd")}
    tokens = {
        "input_tokens": case.envelope.input_tokens,
        "output_tokens": case.envelope.output_tokens,
    }
    return _judged("E.usage-read", case, _obs(**{**reading, **tokens, **summary}))


def test_a_reader_of_no_step_usage_has_no_zero_where_the_envelope_holds_some() -> None:
    """raw_usage's events hold 38,344 input tokens: a reader that does not read them
    reports null; its 0 is a number it made up (tokens-not-read only where none is held)."""
    run_only = frozenset({"run"})
    assert (
        _envelope_usage("raw_usage", run_only, input_tokens=None, output_tokens=None)[0] == "pass"
    )
    verdict, message = _envelope_usage("raw_usage", run_only, input_tokens=0, output_tokens=0)
    assert verdict == "fail" and "input_tokens: expected null, client 0" in message
    # an envelope with no step_usage (and the pre-flight one, with no events): 0 or null
    for name in ("raw_success", "preflight_no_api_key"):
        for tokens in (0, None):
            verdict, message = _envelope_usage(
                name, run_only, input_tokens=tokens, output_tokens=tokens
            )
            assert verdict == "pass", (name, tokens, message)


def test_an_envelope_without_a_cost_has_none_not_zero() -> None:
    assert _envelope_usage("preflight_no_api_key", None, cost_usd=None)[0] == "pass"
    verdict, message = _envelope_usage("preflight_no_api_key", None, cost_usd=0.0)
    assert verdict == "fail" and "cost_usd: expected null, client 0.0" in message


# ---------------------------------------------------------------------- where a run ends


def _lines(*observed: tuple[int, str, str | None]) -> dict[int, Any]:
    return {n: {"kind": "line", "line": n, "outcome": o, "type": t} for n, o, t in observed}


READ_TO_THE_END = _lines((1, "known", "stage"), (2, "known", "text"), (3, "known", "run_complete"))


def test_a_client_that_stops_at_run_complete_passes_where_a_bad_body_follows_it() -> None:
    """ "Match on run_complete to know that nothing more is coming": a client that stops
    there accepts (after-terminator B); one that reads on rejects the bad body (A); one
    that says it read the line and accepts it passed over a bad body (neither)."""
    case = _fixture("bad_body_after_run_complete")
    check = "R4.bad-body-rejected"
    assert _judged(check, case, _obs("accept", READ_TO_THE_END))[0] == "pass"
    assert _judged(check, case, _obs("reject", rejected_line=4))[0] == "pass"
    skipped = {**READ_TO_THE_END, **_lines((4, "known", "text"))}
    verdict, message = _judged(check, case, _obs("accept", skipped))
    assert verdict == "fail" and "line 4: the client read it, after run_complete" in message
    # exit mode: the verdict alone, under either reading
    assert _judged(check, case, Observation(verdict="accept"))[0] == "pass"
    # a bad body before run_complete is an error under every reading
    before = _stream(b'{"type":"text","text":42}\n' + RC + TEXT)
    assert _judged(check, before, Observation(verdict="accept"))[0] == "fail"


def test_lines_after_run_complete_are_a_reading_of_every_check_that_reads_them() -> None:
    """scalar_last_line ends on a bare 42 after run_complete: rejected (A), unrecognized
    (non-object-line B), or never read (after-terminator B)."""
    case = _fixture("scalar_last_line")
    readings = {a.reading: a.summary.verdict for a in case.alternatives}
    assert readings == {"after-terminator": "accept", "non-object-line": "accept"}
    lines = _lines((1, "known", "stage"), (2, "known", "text"), (3, "known", "run_complete"))
    assert _judged("R1.object-per-line", case, _obs("accept", lines))[0] == "pass"
    torn = {**lines, **_lines((4, "torn", None))}  # read, and dropped as if torn: no reading
    assert _judged("R1.object-per-line", case, _obs("accept", torn))[0] == "fail"


@pytest.mark.parametrize(
    ("elapsed", "verdict"), [(700, "pass"), (0, "pass"), (-2700, "fail"), (3400, "fail")]
)
def test_the_clamp_is_of_each_step_or_of_the_whole_run(elapsed: int, verdict: str) -> None:
    """clock_set_back: 5000, 5400, then 2000, 2300: each step clamped, 700 (A); the whole
    run's difference clamped, 0 (elapsed-clamp B); unclamped, -2700; no reading shows a
    negative time, nor takes the earliest and latest stamps (3400)."""
    case = _fixture("clock_set_back")
    got, message = _judged("D.elapsed-clamped", case, _obs(**_dashboard(case, elapsed_ms=elapsed)))
    assert got == verdict, message


# ---------------------------------------------------------------------- clients, every seed

SEEDS = range(10)
#: Conforming clients, the checks whose cases reach what each does differently, and the
#: reading it takes there (None: a spelling of "none", no reading).
CONFORMING = {
    "empty_not_null_dashboard.py": (
        (
            "D.text-replaces-preview",
            "D.legacy-spellings-read",
            "D.elapsed-clamped",
            "D.integers-exact",
        ),
        None,
    ),
    "whole_run_elapsed_dashboard.py": (("D.elapsed-clamped",), "elapsed-clamp"),
    "stops_at_run_complete_client.py": (
        (
            "R4.bad-body-rejected",
            "R6.corrupt-line-not-last",
            "R1.object-per-line",
            "R3.unknown-counted",
        ),
        "after-terminator",
    ),
}
#: Broken clients the decisions catch, and their check.
CAUGHT = {
    "envelope_zero_tokens_unread.py": "E.usage-read",
    "envelope_cost_absent_as_zero.py": "E.usage-read",
}


def _config(
    argv: list[str], seed: int, tmp_path: Path, examples: int, mode: str = "persistent"
) -> SuiteConfig:
    config = SuiteConfig(
        Client(argv, mode, timeout=10.0, line_timeout=2.0), examples=examples, seed=seed,  # type: ignore[arg-type]
        database_dir=None, failures_dir=tmp_path / "failures", shrink_budget=0,
    )  # fmt: skip
    hello = ensure_mode_supported(config.client)  # its claims, as run reads them
    return config.with_claims(from_hello(hello, Vocabulary.default()))


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CONFORMING))
def test_a_conforming_client_passes_on_every_seed(tmp_path: Path, client: str) -> None:
    checks, point = CONFORMING[client]
    argv = resolve_client((sys.executable, str(ADAPTERS / "python" / client)))
    took = 0
    with shared_sessions():  # one client process for every seed
        for seed in SEEDS:
            config = _config(argv, seed, tmp_path, examples=5)
            for check_id in checks:
                result = run_check(BY_ID[check_id], config)
                assert result.outcome == "pass", (seed, check_id, result.message)
                if point is not None:
                    took += result.readings.get(f"{point}=B", 0)
    if point is not None:
        assert took >= len(SEEDS)  # the reading was met, and taken, on every seed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("client", "mode"),
    [(c, m) for c in sorted(CONFORMING) for m in ("report", "persistent")]
    + [("stops_at_run_complete_client.py", "exit")],
)
def test_a_conforming_client_passes_every_check_of_its_profiles(
    tmp_path: Path, client: str, mode: str
) -> None:
    """Every check of the reader and dashboard profiles, on their fixtures and a generated
    case each (a client that stops at run_complete writes its summary there and exits,
    in lockstep too)."""
    argv = resolve_client((sys.executable, str(ADAPTERS / "python" / client)))
    profiles = ("reader", "dashboard") if mode != "exit" else ("reader",)
    config = _config(argv, 0, tmp_path, examples=1, mode=mode)
    with shared_sessions():
        for check in select(profiles):
            result = run_check(check, config)
            want = "pass" if check.grades_in(mode) else "skip"
            assert result.outcome == want, (check.id, result.outcome, result.message)


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CAUGHT))
def test_a_client_that_invents_a_number_is_caught_on_every_seed(
    tmp_path: Path, client: str
) -> None:
    argv = resolve_client((sys.executable, str(ADAPTERS / "broken" / client)))
    with shared_sessions():
        for seed in SEEDS:
            result = run_check(BY_ID[CAUGHT[client]], _config(argv, seed, tmp_path, examples=1))
            assert result.outcome == "fail", (seed, result.outcome, result.message)
