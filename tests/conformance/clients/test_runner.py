"""The runner observes any client, in every mode, and always cleans up."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PY_REFERENCE
from hypothesis import given, settings
from hypothesis import strategies as st

from stella_conform.conformance.clients.protocol import ProtocolError, parse_message
from stella_conform.conformance.clients.runner import (
    Client,
    PersistentSession,
    resolve_client,
    run_exit,
    run_report,
    split_lines,
)
from stella_conform.errors import SetupError
from stella_conform.oracle.corpus import bundled_fixtures_dir

FIX = bundled_fixtures_dir()
VALID = (FIX / "minimal_run.jsonl").read_bytes()
CORRUPT = (FIX / "bad_body_missing_field.jsonl").read_bytes()


def script(tmp_path: Path, body: str, name: str = "client.py") -> tuple[str, ...]:
    path = tmp_path / name
    path.write_text("import sys, os, json, time, signal\n" + textwrap.dedent(body))
    return (sys.executable, str(path))


def client(argv: tuple[str, ...], mode: str = "exit", **kw: float) -> Client:
    return Client(
        argv=argv,
        mode=mode,
        timeout=kw.get("timeout", 5.0),  # type: ignore[arg-type]
        line_timeout=kw.get("line_timeout", 1.0),
    )


def test_split_lines_keeps_terminators() -> None:
    assert split_lines(b"a\nb\r\nc") == [b"a\n", b"b\r\n", b"c"]
    assert split_lines(b"") == []
    assert b"".join(split_lines(VALID)) == VALID


def test_exit_mode_verdicts(tmp_path: Path) -> None:
    ref = client(PY_REFERENCE)
    assert run_exit(ref, VALID).verdict == "accept"
    assert run_exit(ref, CORRUPT).verdict == "reject"


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ("sys.stdin.read(); sys.exit(2)", "crash", "exit status 2"),
        ("sys.stdin.read(); sys.exit(127)", "crash", "exit status 127"),
        ("sys.stdin.read(); os.kill(os.getpid(), signal.SIGSEGV)", "crash", "SIGSEGV"),
        ("sys.stdin.read(); os.kill(os.getpid(), signal.SIGABRT)", "crash", "SIGABRT"),
        ("time.sleep(60)", "timeout", "timeout"),
    ],
)
def test_exit_mode_crash_and_timeout_are_errors(
    tmp_path: Path, body: str, status: str, detail: str
) -> None:
    obs = run_exit(client(script(tmp_path, body), timeout=1.5), VALID)
    assert obs.status == status and detail in obs.describe()
    assert obs.verdict is None


def test_exit_mode_survives_a_client_that_never_reads(tmp_path: Path) -> None:
    obs = run_exit(client(script(tmp_path, "sys.exit(0)")), b'{"type":"x"}\n' * 200_000)
    assert obs.ok and obs.verdict == "accept"


def test_stream_placeholder_is_a_private_temp_file_removed_after(tmp_path: Path) -> None:
    record = tmp_path / "seen.json"
    body = f"""
    p = sys.argv[1]
    st = os.stat(os.path.dirname(p))
    json.dump({{"path": p, "data": open(p).read(), "mode": st.st_mode & 0o777}},
              open({str(record)!r}, "w"))
    """
    argv = (*script(tmp_path, body), "{stream}")
    obs = run_exit(client(argv), VALID)
    assert obs.verdict == "accept"
    seen = json.loads(record.read_text())
    assert seen["data"] == VALID.decode() and seen["mode"] == 0o700
    assert not os.path.exists(seen["path"]) and not os.path.exists(os.path.dirname(seen["path"]))


def test_report_mode_reads_observations_and_summary() -> None:
    obs = run_report(
        client(PY_REFERENCE, "report"), (FIX / "from_a_newer_stella.jsonl").read_bytes()
    )
    assert obs.ok and obs.verdict == "accept" and obs.stalled_at is None
    assert obs.lines[3]["outcome"] == "unknown" and obs.summary["unrecognized_events"] == 2
    assert obs.hello and obs.hello["client"]["name"] == "stella-reader-python"


def test_report_mode_pending_then_torn_and_reject() -> None:
    ref = client(PY_REFERENCE, "report")
    torn = run_report(ref, (FIX / "torn_mid_string.jsonl").read_bytes())
    assert torn.verdict == "accept" and torn.lines[3]["outcome"] == "torn"
    bad = run_report(ref, (FIX / "corrupt_middle_line.jsonl").read_bytes())
    assert bad.verdict == "reject" and bad.rejected_line == 2


def test_lockstep_catches_a_buffering_client(tmp_path: Path) -> None:
    body = """
    hello = {"kind": "hello", "protocol": 1, "client": {"name": "b"}, "profiles": []}
    print(json.dumps(hello), flush=True)
    data = sys.stdin.buffer.read().split(b"\\n")
    for i, _ in enumerate([d for d in data if d], 1):
        print(json.dumps({"kind": "line", "line": i, "outcome": "known"}), flush=True)
    print(json.dumps({"kind": "summary", "verdict": "accept"}), flush=True)
    """
    obs = run_report(client(script(tmp_path, body), "report", line_timeout=0.3), VALID)
    assert obs.stalled_at == 1 and obs.ok and obs.verdict == "accept"


HELLO = '{"kind":"hello","protocol":1,"client":{"name":"h"},"profiles":[]}'


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("print('garbage', flush=True); sys.stdin.read()", "not JSON: 'garbage'"),
        ("sys.stdin.read()", "no hello"),
        (
            'print(\'{"kind":"hello","protocol":9,"client":{"name":"h"},"profiles":[]}\');'
            "sys.stdin.read()",
            "protocol 9",
        ),
        (
            f'print({HELLO!r}); print(\'{{"kind":"line","line":99,"outcome":"known"}}\');'
            "sys.stdout.flush(); sys.stdin.read()",
            "only 1 line(s) were written",
        ),
        (
            f'print({HELLO!r}); print(\'{{"kind":"summary","verdict":"accept"}}\');'
            "sys.stdout.flush(); sys.stdin.read()",
            "summary before any observation",
        ),
        (
            f'print({HELLO!r}); print(\'{{"kind":"line","line":"one","outcome":"known"}}\');'
            "sys.stdout.flush(); sys.stdin.read()",
            "malformed line message",
        ),
        (
            f"print({HELLO!r}); sys.stdout.buffer.write(b'\\xff\\xfe\\n'); sys.stdout.flush();"
            "sys.stdin.read()",
            "not UTF-8",
        ),
    ],
)
def test_report_mode_protocol_errors_name_the_output(
    tmp_path: Path, out: str, message: str
) -> None:
    obs = run_report(client(script(tmp_path, out), "report", timeout=2), VALID)
    assert obs.status == "protocol-error", obs.describe()
    assert message in obs.detail


def test_report_summary_must_agree_with_exit_status(tmp_path: Path) -> None:
    body = f"""
    print({HELLO!r}, flush=True)
    n = 0
    for line in sys.stdin:
        n += 1
        print(json.dumps({{"kind": "line", "line": n, "outcome": "known"}}), flush=True)
    print(json.dumps({{"kind": "summary", "verdict": "accept"}}), flush=True)
    sys.exit(1)
    """
    obs = run_report(client(script(tmp_path, body), "report"), VALID)
    assert obs.status == "protocol-error" and "summary says accept" in obs.detail


def test_persistent_mode_many_cases_one_process() -> None:
    with PersistentSession(client(PY_REFERENCE, "persistent")) as session:
        results = [session.run(VALID), session.run(CORRUPT), session.run(VALID)]
        assert [r.verdict for r in results] == ["accept", "reject", "accept"]
        assert session.restarts == 0 and results[1].rejected_line == 2


def test_persistent_mode_wrong_id_is_a_protocol_error_and_restarts(tmp_path: Path) -> None:
    body = f"""
    print({HELLO!r}, flush=True)
    for raw in sys.stdin:
        msg = json.loads(raw)
        if msg["kind"] != "case":
            break
        print(json.dumps({{"kind": "summary", "id": "nope", "verdict": "accept"}}), flush=True)
    """
    with PersistentSession(client(script(tmp_path, body), "persistent")) as session:
        first = session.run(VALID)
        second = session.run(VALID)
    assert first.status == "protocol-error" and "'nope'" in first.detail
    assert second.status == "protocol-error" and session.restarts >= 1


def test_persistent_mode_crash_mid_case_then_restart(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    body = f"""
    print({HELLO!r}, flush=True)
    for raw in sys.stdin:
        msg = json.loads(raw)
        if not os.path.exists({str(marker)!r}):
            open({str(marker)!r}, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        print(json.dumps({{"kind": "line", "id": msg["id"], "line": 1, "outcome": "known"}}))
        print(json.dumps({{"kind": "summary", "id": msg["id"], "verdict": "accept"}}), flush=True)
    """
    with PersistentSession(client(script(tmp_path, body), "persistent")) as session:
        crashed = session.run(VALID)
        recovered = session.run(VALID)
    assert crashed.status == "crash" and "SIGKILL" in crashed.detail
    assert recovered.ok and recovered.verdict == "accept"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "no client command"),
        (("/no/such/client",), "client not found"),
        (("no-such-program-xyz",), "not found on PATH"),
        (("/",), "is a directory"),
    ],
)
def test_unusable_client_is_a_setup_error(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(SetupError, match=message):
        resolve_client(argv)


def test_non_executable_client(tmp_path: Path) -> None:
    path = tmp_path / "client.sh"
    path.write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(SetupError, match="not executable"):
        resolve_client((str(path),))


def test_parse_message_rejects_non_objects() -> None:
    with pytest.raises(ProtocolError, match="not a JSON object"):
        parse_message(b"[1]")
    with pytest.raises(ProtocolError, match="unknown message kind"):
        parse_message(b'{"kind":"bogus"}')


def _big_text_stream(size: int) -> tuple[bytes, str]:
    big = "stella " * (size // 7)
    tail = (
        '{"type":"turn_complete","model":"m","cost_usd":0}\n'
        '{"type":"run_complete","model":"m","cost_usd":0}\n'
    )
    return (json.dumps({"type": "text", "text": big}) + "\n" + tail).encode(), big


@pytest.mark.slow
@pytest.mark.parametrize(("client", "mib"), [("python", 50), ("node", 5)])
def test_a_50_mb_text_is_gradable_in_persistent_mode(client: str, mib: int) -> None:
    """The summary repeats the text (final_text and texts): over the 4 MiB message cap the
    reference clients send its sha256 instead, and the grader compares that.  (The Node.js
    client is given 5 MiB, already over the cap twice: at 50 MiB its persistent-mode
    reading of one 67 MB case message is too slow for this suite.)"""
    import shutil

    from conftest import NODE_REFERENCE

    from stella_conform.conformance.checks import BY_ID, Context, GradedCase, judge
    from stella_conform.conformance.clients.runner import PersistentSession

    if client == "node" and not shutil.which("node"):
        pytest.skip("no node")
    stream, big = _big_text_stream(mib * 1024 * 1024)
    argv = PY_REFERENCE if client == "python" else NODE_REFERENCE
    with PersistentSession(Client(argv, mode="persistent", timeout=120)) as session:
        obs = session.run(stream)
    assert obs.ok, obs.describe()
    assert isinstance(obs.summary, dict) and "sha256" in obs.summary["final_text"]
    case = GradedCase("big", stream, "generated")
    check = BY_ID["D.text-replaces-preview" if client == "python" else "R1.valid-runs-accepted"]
    verdict = judge(check, case, obs, Context())
    assert verdict.verdict == "pass", verdict.message
    assert obs.summary["final_text"] == big and obs.summary["texts"] == [big]


def test_a_digest_of_another_text_matches_nothing() -> None:
    from stella_conform.conformance.checks import expand_digests
    from stella_conform.oracle.decoder import summarize

    stream, _ = _big_text_stream(100_000)
    summary = {"final_text": {"sha256": "0" * 64}, "texts": ["short"]}
    got = expand_digests(summary, [summarize(stream)])
    assert got["final_text"] == f"<a text whose sha256 is {'0' * 64}>"
    assert got["texts"] == ["short"]


def test_the_message_cap_error_names_the_digest_option() -> None:
    from stella_conform.conformance.clients.process import ClientProcess, LineTooLong

    with (
        ClientProcess(["sh", "-c", "printf '%0100d\\n' 0"], line_cap=10) as proc,
        pytest.raises(LineTooLong, match="STELLA_CONFORM_DIGESTS"),
    ):
        proc.next_line(time.monotonic() + 10)


#: The reference client, counting its own starts in a log file.
STARTS = """
import runpy, sys
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_checks_of_a_persistent_run_share_one_client_process(tmp_path: Path, jobs: int) -> None:
    """One client start per worker, not one per check (R3.no-loud-warning starts a fresh
    one, which the checks after it share: never two alive); none left behind."""
    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.suite import SuiteConfig, run_suite

    starts = tmp_path / "starts"
    argv = (*script(tmp_path, STARTS, "counting.py"), str(starts), PY_REFERENCE[1])
    ids = ("R1.valid-runs-accepted", "R2.dispatch-on-type", "R3.unknown-type-inert",
           "R4.bad-body-rejected", "R3.no-loud-warning", "R6.torn-final-line")  # fmt: skip
    config = SuiteConfig(
        client=client(argv, "persistent", timeout=20.0, line_timeout=5.0),
        examples=2,
        database_dir=None,
        failures_dir=tmp_path / "failures",
    )
    results = run_suite([BY_ID[i] for i in ids], config, jobs=jobs)
    assert [r.outcome for r in results] == ["pass"] * len(ids), [r.message for r in results]
    pids = [int(line) for line in starts.read_text().split()]
    assert 1 <= len(pids) <= jobs + 2
    for pid in pids:  # shut down with the run (in a worker, when the worker exits)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


_CORRUPT = (None, True, -1, 0, 1.5, "x", "", [], {}, {"sha256": "ab"}, [1, "x"], {"a": "x"})


def _messages() -> Any:
    """Messages of every kind the protocol schema allows (the kit's schema-driven strategies)."""
    from stella_conform.conformance.clients.protocol import _DEFS
    from stella_conform.generators.schema_driven import SchemaStrategies
    from stella_conform.schemas.vocabulary import load_schema

    built = SchemaStrategies(load_schema("protocol.schema.json"))
    return st.one_of(
        [st.tuples(st.just(k), built.build({"$ref": f"#/$defs/{n}"})) for k, n in _DEFS.items()]
    )


@settings(max_examples=100, deadline=None, database=None)
@given(st.data())
def test_the_fast_message_check_agrees_with_the_explaining_one(data: st.DataObject) -> None:
    """parse_message asks generated code first and the explaining check only on a no: both
    must answer alike, on messages the protocol schema allows and on broken ones."""
    from stella_conform.conformance.clients.protocol import _checks, _fits

    kind, drawn = data.draw(_MESSAGES)
    message = dict(drawn)
    for name in data.draw(st.lists(st.sampled_from(sorted(message)), max_size=2, unique=True)):
        message[name] = data.draw(st.sampled_from(_CORRUPT))
    assert _fits()[kind](message) == (_checks()[kind](message, "") is None), message


_MESSAGES = _messages()
