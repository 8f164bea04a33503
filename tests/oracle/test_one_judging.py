"""``decode``, ``replay``, ``smoke`` and ``run`` judge a stream alike: by the oracle's readings.

A point the contract's sources read two ways (docs/contract-readings.md) is one the kit
must not fail a client for, whichever command judges the stream: ``replay`` without
``--check`` judges every reading as ``run`` does, not the default reading's verdict alone,
and ``1.0`` where an integer is due (JSON Schema's ``integer`` by value, serde_json's
float) is a reading, so ``decode`` does not call it a reject "with no other reading".
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from conftest import ADAPTERS, PY_REFERENCE, kit

from stella_conform.cli.smoke import _expected
from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge, judge_verdict
from stella_conform.conformance.clients.runner import Client, resolve_client, run_once
from stella_conform.oracle.corpus import bundled_fixtures_dir

FIX = bundled_fixtures_dir()
INTEGRAL = FIX / "integral_float_count.jsonl"  # "duration_ms":4200.0 on line 3
READING_B = (sys.executable, str(ADAPTERS / "python" / "reading_b_client.py"))
LENIENT = (sys.executable, str(ADAPTERS / "broken" / "reads_numbers_leniently.py"))
#: The same run with 4200.5: a fraction where an integer is due, an error under every reading.
FRACTION = INTEGRAL.read_bytes().replace(b"4200.0", b"4200.5")


def _run_judges(stream: bytes, command: tuple[str, ...]) -> str:
    """What ``run`` decides on this stream as an R4.bad-body-rejected case: its runner's
    observation, judged by the check (under every reading)."""
    case = GradedCase("c", stream, "fixture")
    obs = run_once(Client(resolve_client(command), "exit", timeout=10.0), stream)
    return judge(BY_ID["R4.bad-body-rejected"], case, obs, Context(reporting=False)).verdict


def test_an_integral_float_is_a_reading_for_decode_replay_and_run(tmp_path: Path) -> None:
    decoded = kit("decode", str(INTEGRAL))
    assert decoded.returncode == 1  # the default reading rejects line 3
    assert "verdict: reject at line 3" in decoded.stdout
    assert "also conforming, reading integral-float: accept" in decoded.stdout
    saved = tmp_path / "integral.jsonl"
    shutil.copy(INTEGRAL, saved)
    # reading A (the reference client rejects) and reading B (4200.0 is 4200): both conform
    for command in (PY_REFERENCE, READING_B):
        assert _run_judges(INTEGRAL.read_bytes(), command) == "pass", command
        plain = kit("replay", str(saved), "--mode", "exit", "--", *command, cwd=tmp_path)
        assert plain.returncode == 0, plain.stdout + plain.stderr
        assert "expected: reject at line 3 or accept (reading integral-float)" in plain.stdout
        checked = kit(
            "replay", "fixture:integral_float_count", "--check", "R4.bad-body-rejected",
            "--mode", "exit", "--", *command, cwd=tmp_path,
        )  # fmt: skip
        assert checked.returncode == 0, checked.stdout + checked.stderr
        graded = kit(
            "run", "--only", "R4.bad-body-rejected", "--examples", "0", "--mode", "exit",
            "--no-database", "--", *command, cwd=tmp_path,
        )  # fmt: skip
        assert graded.returncode == 0, graded.stdout + graded.stderr
        assert "integral-float" in graded.stdout  # the reading it took, named


def test_a_fraction_where_an_integer_is_due_fails_in_every_command(tmp_path: Path) -> None:
    """What no reading allows: 4200.5 read as a count (the lenient client truncates it)."""
    saved = tmp_path / "fraction.jsonl"
    saved.write_bytes(FRACTION)
    decoded = kit("decode", str(saved))
    assert decoded.returncode == 1 and "also conforming" not in decoded.stdout
    assert _run_judges(FRACTION, LENIENT) == "fail"
    plain = kit("replay", str(saved), "--mode", "exit", "--", *LENIENT, cwd=tmp_path)
    assert plain.returncode == 1 and "expected: reject at line 3\n" in plain.stdout
    # and a client taking reading B still rejects it: B reads 4200.0, never 4200.5
    assert _run_judges(FRACTION, READING_B) == "pass"


def test_replay_check_shows_the_reading_the_client_took_and_the_others(tmp_path: Path) -> None:
    """replay --check's field-by-field table is of the reading the judgment was made
    under, named, and every other conforming reading follows with the fields where it
    differs; plain replay's line table follows that reading too.  Showing the default
    reading's values alone, a client passing by reading B would see "≠ verdict: expected
    reject" above "judgment: pass"."""

    def replayed(command: tuple[str, ...]) -> list[str]:
        out = kit(
            "replay", "fixture:integral_float_count", "--check", "R4.bad-body-rejected",
            "--mode", "report", "--", *command, cwd=tmp_path,
        )  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout.splitlines()

    took_b = replayed(READING_B)
    assert (
        "reading, field by field (expected under reading integral-float, the one the client "
        "took, against the client's):" in took_b
    )
    assert '  verdict:             "accept" (both)' in took_b
    assert not [line for line in took_b if line.startswith("≠")]
    assert (
        'also conforming, the default reading: verdict "reject"; rejected_line 3; '
        "final_text null; terminator null" in took_b
    )
    # replay without --check: its line table follows the reading the client took as well
    saved = tmp_path / "integral.jsonl"
    shutil.copy(INTEGRAL, saved)
    plain = kit("replay", str(saved), "--mode", "report", "--", *READING_B, cwd=tmp_path)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    table = plain.stdout.splitlines()
    assert " line  correct client (reading integral-float)  client" in table
    assert "    3  known tool_result                        known tool_result" in table
    assert "    5  known run_complete                       known run_complete" in table
    took_a = replayed(PY_REFERENCE)
    assert "reading, field by field (expected under the default reading, the one the client " in (
        "\n".join(took_a)
    )
    assert '  verdict:             "reject" (both)' in took_a
    assert (
        'also conforming, reading integral-float: verdict "accept"; rejected_line null; '
        'final_text "x"; terminator "run_complete"' in took_a
    )


#: 4200.0 and a negative ts on one line: it fits only taking B at both points.
BOTH = INTEGRAL.read_bytes().replace(b'"duration_ms":4200.0}', b'"duration_ms":4200.0,"ts":-5}')


def test_an_integral_float_beside_a_bad_stamp_is_read_taking_b_at_both(tmp_path: Path) -> None:
    """classify tries the points together as well as each alone (the floats made integers,
    or the stamp dropped), so a line needing both fits a reading: decode lists it, and a
    client taking B at both (4200.0 is 4200, ts is ignored) is not failed."""
    assert BOTH != INTEGRAL.read_bytes()
    saved = tmp_path / "both.jsonl"
    saved.write_bytes(BOTH)
    decoded = kit("decode", str(saved))
    assert decoded.returncode == 1 and "verdict: reject at line 3" in decoded.stdout
    assert "also conforming, reading integral-float+ts-out-of-range: accept" in decoded.stdout
    assert "reading integral-float:" not in decoded.stdout  # alone, each still rejects
    assert "reading ts-out-of-range:" not in decoded.stdout
    for command in (PY_REFERENCE, READING_B):  # A at both, B at both
        assert _run_judges(BOTH, command) == "pass", command
    plain = kit("replay", str(saved), "--mode", "exit", "--", *READING_B, cwd=tmp_path)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert (
        "expected: reject at line 3 or accept (reading integral-float+ts-out-of-range)"
        in plain.stdout
    )
    # 4200.5: B at the stamp does not excuse reading a fraction as a count (neither A nor B)
    fraction = BOTH.replace(b"4200.0", b"4200.5")
    saved.write_bytes(fraction)
    decoded = kit("decode", str(saved))
    assert decoded.returncode == 1 and "also conforming" not in decoded.stdout
    assert _run_judges(fraction, READING_B) == "pass"
    # a client taking B at the stamp (ts ignored) that reads 4200.5 as 4200 is failed
    lenient = tmp_path / "ignores_ts_reads_numbers_leniently.py"
    lenient.write_text(IGNORES_TS_LENIENT.format(broken=str(ADAPTERS / "broken")))
    assert _run_judges(BOTH, (sys.executable, str(lenient))) == "pass"  # B at both, here
    assert _run_judges(fraction, (sys.executable, str(lenient))) == "fail"


IGNORES_TS_LENIENT = """
import sys
sys.path.insert(0, {broken!r})
from reads_numbers_leniently import Broken, BrokenReader, main


class Reader(BrokenReader):
    def misfit(self, tag, event):  # ts is the sink's stamp: ignored (B at ts-out-of-range)
        return super().misfit(tag, {{k: v for k, v in event.items() if k != "ts"}})


class Adapter(Broken):
    reader_class = Reader


main(Adapter)
"""


def test_replay_judges_a_verdict_as_run_does_at_any_reading(tmp_path: Path) -> None:
    """Not only the new point: a stream whose default accepts and whose reading B rejects
    (ts: null, rejected by a client that validates ts as the wire schema types it)."""
    saved = tmp_path / "ts_null.jsonl"
    shutil.copy(FIX / "ts_null.jsonl", saved)
    validating = (sys.executable, str(ADAPTERS / "python" / "validating_ts_client.py"))
    out = kit("replay", str(saved), "--mode", "exit", "--", *validating, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(reading ts-null)" in out.stdout


def test_smoke_judges_its_streams_by_every_reading() -> None:
    """smoke's own two streams touch no point; were one to, its verdict would be judged as
    run's is (the same helper), and a correct client's every verdict named."""
    case = GradedCase(INTEGRAL.name, INTEGRAL.read_bytes(), "fixture")
    assert _expected(case) == ["reject at line 3", "accept"]
    for name in ("minimal_run", "corrupt_middle_line"):
        smoke_case = GradedCase(name, (FIX / f"{name}.jsonl").read_bytes(), "fixture")
        assert len(_expected(smoke_case)) == 1  # plain streams: one verdict
    from stella_conform.conformance.clients.runner import Observation

    accepted = Observation(verdict="accept")
    assert judge_verdict(case, accepted).verdict == "pass"
    assert judge_verdict(case, Observation(verdict="reject")).verdict == "pass"
