"""One failure identity: ``run`` (the cases it keeps whole, the distinct failures it lists)
and ``fuzz`` (the finds it keeps) tell one bug from two by the same function."""

from __future__ import annotations

from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge
from stella_conform.conformance.checks.identity import failure_identity
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.fuzz import reaction
from stella_conform.conformance.suite import distinct_failure
from stella_conform.conformance.suite.failures import case_failure
from stella_conform.oracle.corpus import bundled_fixtures_dir

CHECK = BY_ID["R3.unknown-type-inert"]


def _case(tag: str) -> GradedCase:
    run = (bundled_fixtures_dir() / "minimal_run.jsonl").read_bytes()
    return GradedCase(f"c-{tag}", f'{{"type":"{tag}"}}\n'.encode() + run, "generated")


def _rejected(tag: str) -> Observation:
    obs = Observation(verdict="reject", detail=f"unknown type {tag} at line 1")
    obs.summary = {"kind": "summary", "verdict": "reject", "rejected_line": 1}
    return obs


def _crashed(exception: str) -> Observation:
    obs = Observation(verdict=None, status="crash")
    obs.stderr_tail = f"Traceback (most recent call last):\n  ...\n{exception}\n"
    return obs


def _identities(tag: str, obs: Observation) -> tuple[str, str]:
    case = _case(tag)
    j = judge(CHECK, case, obs, Context())
    assert j.verdict in ("fail", "crash"), j
    return distinct_failure(case_failure(CHECK, case, j, obs)), reaction(CHECK, j, obs)


def test_one_bug_in_other_words_is_one_failure_for_run_and_fuzz() -> None:
    run_a, fuzz_a = _identities("text_v2", _rejected("text_v2"))
    run_b, fuzz_b = _identities("Text", _rejected("Text"))
    assert run_a == fuzz_a == run_b == fuzz_b


def test_two_crashes_with_other_exceptions_are_two_failures_for_run_and_fuzz() -> None:
    run_a, fuzz_a = _identities("text_v2", _crashed("KeyError: 'text'"))
    run_b, fuzz_b = _identities("text_v2", _crashed("TypeError: unhashable type"))
    assert run_a == fuzz_a and run_b == fuzz_b
    assert run_a != run_b


def test_the_identity_is_bounded_whatever_the_judge_quotes() -> None:
    case = _case("text_v2")
    obs = _rejected("x" * 100_000)
    j = judge(CHECK, case, obs, Context())
    assert len(failure_identity(CHECK.id, j, obs)) <= 300
