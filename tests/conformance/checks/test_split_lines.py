"""A text lost where str.splitlines() cuts its line fails the rule it breaks, R1's."""

from __future__ import annotations

from conftest import REPO

from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge
from stella_conform.conformance.checks.split_lines import cut_lines, texts_read_by_splitting
from stella_conform.conformance.clients.runner import Observation

CHECK = BY_ID["R1.lines-end-only-at-newline"]
STAGE = b'{"type":"stage","name":"execute","scope":"turn"}\n'
RC = b'{"type":"run_complete","model":"m","cost_usd":0.001}\n'
#: Two texts; the second holds a raw U+2028, so a reader splitting there loses it.
STREAM = (
    STAGE
    + b'{"type":"text","text":"kept"}\n'
    + '{"type":"text","text":"lost\u2028here"}\n'.encode()
    + RC
)


def _accepting(**summary: object) -> Observation:
    return Observation(verdict="accept", summary={"verdict": "accept", **summary})


def test_the_lines_str_splitlines_cuts() -> None:
    assert cut_lines(STREAM) == {3}
    assert cut_lines(b'{"type":"text","text":"a"}\r\n' + RC) == set()  # a CRLF line's CR
    assert cut_lines(b'{"type":"text","text":"a\\u2028"}\n') == set()  # escaped: text


def test_texts_lost_at_a_line_separator_fail_r1() -> None:
    case = GradedCase("t", STREAM, "fixture")
    assert texts_read_by_splitting(case.outcomes, STREAM) == ["kept"]
    lost = judge(CHECK, case, _accepting(texts=["kept"], final_text="kept"), Context())
    assert lost.verdict == "fail", lost
    assert "line(s) 3" in lost.message and "U+2028" in lost.message


def test_a_final_text_lost_at_a_line_separator_fails_r1() -> None:
    case = GradedCase("t", STREAM, "fixture")
    ctx = Context(computes=frozenset({"final_text"}))
    lost = judge(CHECK, case, _accepting(final_text="kept"), ctx)
    assert lost.verdict == "fail", lost
    assert "final_text" in lost.message and "line(s) 3" in lost.message


def test_texts_wrong_for_another_reason_stay_another_checks_finding() -> None:
    case = GradedCase("t", STREAM, "fixture")
    right = ["kept", "lost\u2028here"]
    assert (
        judge(CHECK, case, _accepting(texts=right, final_text=right[-1]), Context()).verdict
        == "pass"
    )
    for texts in (["lost\u2028here"], [], ["kept", "kept"], ["keptlost\u2028here"]):
        final = texts[-1] if texts else None
        seen = judge(CHECK, case, _accepting(texts=texts, final_text=final), Context())
        assert seen.verdict == "n/a", (texts, seen)
    # no text on a cut line: a missing text is not this rule's
    plain = GradedCase("p", STAGE + b'{"type":"text","text":"a"}\n' + RC, "fixture")
    assert judge(CHECK, plain, _accepting(texts=[], final_text=None), Context()).verdict == "n/a"


def test_the_fixture_shows_it() -> None:
    data = (REPO / "fixtures" / "line_separators_in_strings.jsonl").read_bytes()
    case = GradedCase("line_separators_in_strings", data, "fixture")
    seen = judge(CHECK, case, _accepting(texts=[], final_text=None), Context())
    assert seen.verdict == "fail" and "line(s) 2, 3" in seen.message
