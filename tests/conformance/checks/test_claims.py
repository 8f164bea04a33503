"""Grading a client on what it claims: knows, reads, computes, summary only; profiles.

For each claim: a client that claims less is graded on less, and still fails what it
does claim.  Every report states the claims and what they left ungraded.  Runs use one
or two checks and few examples: the mechanics are under test, not the checks.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE, kit, kit_inline, replay_args

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.checks.claims import (
    Claims,
    claims_from,
    from_hello,
    merge,
    resolve_profiles,
)
from stella_conform.errors import SetupError
from stella_conform.oracle.envelope import read_envelope
from stella_conform.schemas.vocabulary import Vocabulary

PY = sys.executable
pytest_plugins = ["pytester"]
#: ``--mode exit``: the mode these tests grade in (the default is auto; a later ``--mode``
#: wins).
FAST = (
    "--mode", "exit", "--examples", "2", "--seed", "3", "--no-database", "-j", "1",
    "--max-shrinks", "5",
)  # fmt: skip
NARROW = (PY, str(ADAPTERS / "python" / "narrow_client.py"))
RUN_ENVELOPES = (PY, str(ADAPTERS / "python" / "run_envelope_client.py"))
SUMMARY_ONLY = (PY, str(ADAPTERS / "python" / "summary_only_client.py"))
DASHBOARD = (PY, str(ADAPTERS / "python" / "dashboard.py"))


def grade(tmp_path: Path, *args: str) -> dict:
    """``run ARGS`` with a JSON report; the report, its exit status and terminal text."""
    report = tmp_path / "report.json"
    out = kit("run", *FAST, "--json", str(report), *args, cwd=tmp_path)
    assert report.exists(), out.stdout + out.stderr
    doc = json.loads(report.read_text())
    doc["_exit"], doc["_stdout"] = out.returncode, out.stdout
    return doc


def outcome(doc: dict, check_id: str) -> tuple[str, str]:
    entry = next(c for c in doc["checks"] if c["id"] == check_id)
    return entry["outcome"], entry["message"]


# ------------------------------------------------------------------ knows


@pytest.mark.slow
def test_a_client_knowing_two_types_passes_every_check_when_it_says_so(tmp_path: Path) -> None:
    """narrow_client.py knows text, run_complete and error, and computes what those give;
    its hello says so (persistent mode: every reader and dashboard check but the
    report-mode lockstep one)."""
    doc = grade(tmp_path, "--mode", "persistent", "--examples", "1", "--", *NARROW)
    assert doc["_exit"] == 0, doc["_stdout"]
    got = {c["id"]: c["outcome"] for c in doc["checks"]}
    assert set(got.values()) <= {"pass", "skip"}
    assert got["R4.bad-body-rejected"] == "pass"
    assert outcome(doc, "D.stages-per-scope") == ("skip", "the client does not know stage")
    assert doc["claims"]["knows"] == ["error", "run_complete", "text"]
    hello = "hello of stella-reader-python"
    assert doc["claims"]["sources"] == {"knows": hello, "computes": hello}


@pytest.mark.slow
def test_knows_on_the_command_line_works_in_exit_mode(tmp_path: Path) -> None:
    only = ("--only", "R4.bad-body-rejected", "--only", "R3.unknown-type-inert")
    unclaimed = grade(tmp_path, *only, "--", *NARROW)
    assert outcome(unclaimed, "R4.bad-body-rejected")[0] == "fail"  # noise without the claim
    claimed = grade(tmp_path, *only, "--knows", "text,run_complete", "--", *NARROW)
    assert claimed["_exit"] == 0, claimed["_stdout"]
    assert "claims knows: run_complete, text (from the command line)" in claimed["_stdout"]
    assert "not graded: event types the client does not know (10 of 12)" in claimed["_stdout"]


@pytest.mark.slow
def test_a_client_claiming_less_still_fails_what_it_claims(tmp_path: Path) -> None:
    broken = (PY, str(ADAPTERS / "broken" / "skips_bad_lines.py"))
    doc = grade(
        tmp_path, "--only", "R4.bad-body-rejected", "--knows", "text,run_complete", "--", *broken
    )
    state, message = outcome(doc, "R4.bad-body-rejected")
    assert state == "fail" and doc["_exit"] == 1
    assert "'text'" in message or "'run_complete'" in message  # a claimed type's bad body
    # the replay command carries the claim, so it judges the case the same way
    entry = next(c for c in doc["checks"] if c["id"] == "R4.bad-body-rejected")
    replay = entry["failures"][0]["replay"]
    assert "--knows run_complete,text" in replay
    again = kit(*replay_args(replay), cwd=tmp_path)
    assert again.returncode == 1 and "expected: reject" in again.stdout, again.stdout


def test_knows_takes_a_vocabulary_file_or_name(tmp_path: Path, wire_schema: Path) -> None:
    vocab = Vocabulary.default()
    claims = claims_from(
        knows=str(wire_schema), reads=None, computes=None, summary_only=None, vocab=vocab,
        where="test",
    )  # fmt: skip
    # every type the file names: those this stella never writes are known from that stella
    assert claims.knows == Vocabulary.load(str(wire_schema)).written and claims.warnings == ()
    older = claims_from(
        knows="stella-older", reads=None, computes=None, summary_only=None, vocab=vocab,
        where="test",
    )  # fmt: skip
    assert older.knows is not None and "turn_complete" not in older.knows


def test_a_knows_file_that_is_no_file_is_refused_wherever_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ini's or a matrix entry's ``knows`` (not only ``--knows``, whose click type says
    it first): a FIFO or a misspelt file is refused, not read as a type's name with a
    warning only. A folder with a type's name leaves the name a name."""
    import os

    monkeypatch.chdir(tmp_path)
    os.mkfifo("types.fifo")
    (tmp_path / "error").mkdir()

    def knows(value: str) -> Claims:
        return claims_from(
            knows=value, reads=None, computes=None, summary_only=None,
            vocab=Vocabulary.default(), where="stella options",
        )  # fmt: skip

    for value, said in [
        ("types.fifo", "stella options knows: types.fifo: is a FIFO, not a regular file"),
        ("error/", "stella options knows: error/: is a directory, not a regular file"),
        ("nope/agentevent.schema.json", "no such file: nope/agentevent.schema.json"),
    ]:
        with pytest.raises(SetupError, match=re.escape(said)):
            knows(value)
    assert knows("error").knows == {"error"}


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--reads", "run,rows", "unknown reads name 'rows'"),
        ("--computes", "texts,turns", "unknown computes name 'turns'"),
        ("--profile", "dashbaord", "unknown profile 'dashbaord'"),
    ],
)
def test_an_unknown_claimed_name_is_a_usage_error(
    tmp_path: Path, option: str, value: str, message: str
) -> None:
    out = kit_inline("run", option, value, "--", *PY_REFERENCE, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_a_hello_claiming_an_unknown_name_is_a_usage_error() -> None:
    hello = {"client": {"name": "x"}, "computes": ["texts", "turn_count"]}
    with pytest.raises(SetupError, match="hello of x computes: unknown computes name"):
        from_hello(hello, Vocabulary.default())


def test_the_command_line_wins_over_the_hello() -> None:
    vocab = Vocabulary.default()
    told = claims_from(
        knows="text", reads=None, computes=None, summary_only=None, vocab=vocab, where="cli"
    )
    hello = from_hello({"client": {"name": "a"}, "knows": ["stage"], "reads": ["run"]}, vocab)
    both = merge(told, hello)
    assert both.knows == {"text"} and both.reads == {"run"}
    assert both.sources == {"knows": "cli", "reads": "hello of a"}
    assert not Claims().any and Claims().not_graded(vocab) == []


# ------------------------------------------------------------------ reads


@pytest.mark.slow
def test_a_run_envelope_reader_passes_with_reads_run(tmp_path: Path) -> None:
    """It ignores events and query envelopes, as the contract allows."""
    args = ("--profile", "envelope", "--only", "E.events-*", "--only", "E.query-rows",
            "--only", "E.unknown-keys-ignored")  # fmt: skip
    unclaimed = grade(tmp_path, *args, "--", *RUN_ENVELOPES)
    assert outcome(unclaimed, "E.events-follow-stream-rules")[0] == "fail"
    assert outcome(unclaimed, "E.query-rows")[0] == "fail"
    claimed = grade(tmp_path, *args, "--reads", "run", "--", *RUN_ENVELOPES)
    assert claimed["_exit"] == 0, claimed["_stdout"]
    assert outcome(claimed, "E.events-follow-stream-rules") == (
        "skip",
        "the client does not read the events array",
    )
    assert outcome(claimed, "E.query-rows") == ("skip", "the client does not read query envelopes")
    assert outcome(claimed, "E.unknown-keys-ignored")[0] == "pass"


def test_the_reference_reader_ignores_parts_a_client_does_not_read() -> None:
    bad_events = (
        b'{"schema_version":1,"status":"completed","text":"x","cost_usd":0.1,"reason":null,'
        b'"model":"m","events":[{"type":"text","text":7}],"files_touched":{"files_touched":7}}'
    )
    assert read_envelope(bad_events).verdict == "reject"
    narrow = read_envelope(bad_events, reads={"run"})
    assert narrow.verdict == "accept" and narrow.unrecognized_events is None


@pytest.mark.slow
def test_a_reader_that_invents_token_keys_fails_on_its_values(tmp_path: Path) -> None:
    broken = (PY, str(ADAPTERS / "broken" / "envelope_invents_token_keys.py"))
    doc = grade(
        tmp_path, "--mode", "report", "--profile", "envelope", "--only", "E.usage-read",
        "--", *broken,
    )  # fmt: skip
    state, message = outcome(doc, "E.usage-read")
    assert state == "fail", doc["_stdout"]
    assert re.search(r"input_tokens: expected [1-9]\d*, client 0", message), message


# ------------------------------------------------------------------ computes


NO_TURN_COUNT = """
import os, sys
sys.path.insert(0, {adapters!r})
from stella_reader import Adapter, Reader, main

class NoTurns(Reader):
    def summary(self):
        out = super().summary()
        del out["turns_completed"]
        return out

class Dashboard(Adapter):
    reader_class = NoTurns
    claims = {{"computes": ["texts", "preview", "terminator", "stages", "elapsed_ms",
                            "unrecognized_events", "unrecognized_types", "rejected_line",
                            "final_text"]}}

main(Dashboard)
"""


@pytest.mark.slow
def test_a_field_the_client_does_not_compute_is_a_skip_not_a_fail(tmp_path: Path) -> None:
    script = tmp_path / "no_turn_count.py"
    script.write_text(NO_TURN_COUNT.format(adapters=str(ADAPTERS / "python")))
    doc = grade(
        tmp_path, "--mode", "persistent", "--only", "D.run-terminator", "--only", "D.turns-counted",
        "--", PY, str(script),
    )  # fmt: skip
    assert doc["_exit"] == 0, doc["_stdout"]
    assert outcome(doc, "D.turns-counted") == (
        "skip",
        "the client does not compute turns_completed",
    )
    assert outcome(doc, "D.run-terminator")[0] == "pass"  # one missing field hides no other


def test_a_dashboard_claiming_fewer_fields_still_fails_a_computed_one(tmp_path: Path) -> None:
    broken = (PY, str(ADAPTERS / "broken" / "dashboard_waits_for_complete.py"))
    doc = grade(
        tmp_path, "--mode", "persistent", "--only", "D.*", "--computes", "terminator", "--",
        *broken,
    )  # fmt: skip
    assert outcome(doc, "D.run-terminator")[0] == "fail"
    skipped = {c["id"] for c in doc["checks"] if c["outcome"] == "skip"}
    assert "D.turns-counted" in skipped and "D.stages-per-scope" in skipped


# ------------------------------------------------------------------ summary only


@pytest.mark.slow
def test_a_summary_only_client_is_graded_without_line_observations(tmp_path: Path) -> None:
    doc = grade(
        tmp_path, "--mode", "report", "--only", "R1.line-by-line", "--only", "R2.*",
        "--only", "R4.bad-body-rejected", "--only", "R4.rejection-names-line",
        "--only", "R6.*-last-line-*", "--", *SUMMARY_ONLY,
    )  # fmt: skip
    assert doc["_exit"] == 0, doc["_stdout"]
    for check_id in ("R1.line-by-line", "R6.complete-last-line-kept"):
        state, message = outcome(doc, check_id)
        assert state == "skip" and "reports only a summary" in message
    # what needs only a summary is graded: a dispatch check on the verdict, the content of
    # an unterminated last line summary against summary
    assert outcome(doc, "R2.dispatch-on-type")[0] == "pass"
    assert outcome(doc, "R6.unterminated-last-line-read")[0] == "pass"
    assert outcome(doc, "R4.bad-body-rejected")[0] == "pass"
    assert outcome(doc, "R4.rejection-names-line")[0] == "pass"


def test_smoke_feeds_a_summary_only_adapter_whole() -> None:
    out = kit("smoke", "--mode", "report", "--", *SUMMARY_ONLY)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 observation(s), summary accept" in out.stdout


# ------------------------------------------------------------------ profiles


def test_stream_profiles_add_to_reader() -> None:
    assert resolve_profiles(["dashboard"], None) == ("reader", "dashboard")
    assert resolve_profiles(["recorder"], None) == ("reader", "recorder")
    assert resolve_profiles(["envelope"], None) == ("envelope",)
    assert resolve_profiles([], {"profiles": ["dashboard"]}) == ("reader", "dashboard")
    assert resolve_profiles([], None) == ("reader",)
    assert resolve_profiles(["envelope"], {"profiles": ["dashboard"]}) == ("envelope",)


def test_profile_dashboard_keeps_the_reader_checks(tmp_path: Path) -> None:
    doc = grade(
        tmp_path, "--mode", "persistent", "--examples", "0", "--profile", "dashboard",
        "--only", "R6.torn-final-line", "--only", "D.run-terminator", "--", *DASHBOARD,
    )  # fmt: skip
    assert [c["id"] for c in doc["checks"]] == ["R6.torn-final-line", "D.run-terminator"]


def test_without_profile_the_hello_s_profiles_are_graded(tmp_path: Path) -> None:
    doc = grade(
        tmp_path, "--mode", "persistent", "--examples", "0", "--only", "D.run-terminator",
        "--", *PY_REFERENCE,
    )  # fmt: skip
    assert [c["id"] for c in doc["checks"]] == ["D.run-terminator"]  # the hello claims dashboard


# ------------------------------------------------------------------ reports


def test_every_report_states_the_claims(tmp_path: Path) -> None:
    md, junit = tmp_path / "r.md", tmp_path / "r.xml"
    doc = grade(
        tmp_path, "--examples", "0", "--only", "R3.unknown-type-inert", "--knows", "text",
        "--markdown", str(md), "--junit-xml", str(junit), "--", *NARROW,
    )  # fmt: skip
    claims = doc["claims"]
    assert claims["knows"] == ["text"] and claims["sources"] == {"knows": "command line"}
    assert any("run_complete" in line for line in claims["not_graded"])
    assert "- claims `knows: text (from the command line)`" in md.read_text()
    props = ET.parse(junit).getroot().find("properties")
    assert props is not None and any("knows: text" in p.get("value", "") for p in props)
    assert doc["_stdout"].startswith("claims knows: text")


def test_split_terminator_checks_name_one_field_each() -> None:
    assert BY_ID["D.run-terminator"].fields == ("terminator",)
    assert BY_ID["D.turns-counted"].fields == ("turns_completed",)


# ------------------------------------------------------------------ the matrix


def _matrix(tmp_path: Path, clients: str, vocabularies: str) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text(f"[matrix]\nexamples = 1\nseed = 2\njobs = 2\n\n{clients}\n{vocabularies}\n")
    return path


@pytest.mark.slow
def test_the_matrix_shows_the_older_client_passing_its_own_stella(tmp_path: Path) -> None:
    older = ADAPTERS / "python" / "older_client.py"
    config = _matrix(
        tmp_path,
        f'[[client]]\nname = "older"\ncommand = ["{PY}", "{older}"]\nmode = "persistent"\n'
        'profiles = ["reader"]\nreads = "run"\n',  # a claim that grades nothing less here
        '[[vocabulary]]\nname = "default"\n\n[[vocabulary]]\nname = "stella-older"\n',
    )
    out = kit("matrix", str(config), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # it fails today's vocabulary
    doc = json.loads((tmp_path / "out" / "matrix.json").read_text())
    cells = {c["vocabulary"]: c["report"] for c in doc["cells"]}
    assert cells["stella-older"]["exit_code"] == 0
    assert cells["stella-older"]["vocabulary"] == "stella-older@pre-3379"
    failing = {c["id"] for c in cells["default"]["checks"] if c["outcome"] == "fail"}
    assert "R3.unknown-counted" in failing  # it counts today's unknown `complete` as known
    assert {v["name"]: v["bundled"] for v in doc["vocabularies"]} == {
        "default": None,
        "stella-older": "stella-older",
    }
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert (
        "### claims" in markdown
        and "<code>older</code> × <code>stella-older</code>: `reads: run`" in markdown
    )


@pytest.mark.slow
def test_matrix_clients_take_claim_keys(tmp_path: Path) -> None:
    from stella_conform.conformance.matrix import load_config

    narrow = ADAPTERS / "python" / "narrow_client.py"
    client = f'[[client]]\nname = "narrow"\ncommand = ["{PY}", "{narrow}"]\nmode = "exit"\n'
    good = _matrix(
        tmp_path,
        client + 'knows = ["text", "run_complete"]\nreads = "run"\ncomputes = ["texts"]\n',
        '[[vocabulary]]\nname = "older"\nvocabulary = "stella-older"\n',
    )
    config = load_config(good)
    ((spec, vocab),) = config.cells()
    claims = spec.claims_on(vocab.load())
    assert claims.knows == {"text", "run_complete"} and claims.reads == {"run"}
    assert vocab.load().ident == "stella-older@pre-3379"
    # a type of today's stella, in a column of the older one: known, never written there
    both = _matrix(tmp_path, client + 'knows = ["text", "turn_complete", "complete"]\n',
                   '[[vocabulary]]\nname = "stella-older"\n')  # fmt: skip
    ((spec, vocab),) = load_config(both).cells()
    claims = spec.claims_on(vocab.load())
    assert claims.knows == {"text", "turn_complete", "complete"} and claims.warnings == ()


# ------------------------------------------------------------------ in-process


NARROW_PARSER = """
import sys
sys.path.insert(0, {adapters!r})
from stella_reader import Reader
from stella_conform.pytest_plugin import conformance_tests


class Narrow(Reader):
    known_types = frozenset({{"text", "run_complete"}})


def read(lines):
    reader = Narrow()
    for number, raw in enumerate(lines, 1):
        reader.push(number, raw[:-1] if raw.endswith(b"\\n") else raw)
        if reader.rejected:
            raise ValueError(reader.rejected[1])
    reader.finish()
    if reader.rejected:
        raise ValueError(reader.rejected[1])


ONLY = ["R4.bad-body-rejected"]
test_claimed = conformance_tests(read, examples=1, only=ONLY, knows=["text", "run_complete"])
test_unclaimed = conformance_tests(read, examples=1, only=ONLY)
"""


@pytest.mark.slow
def test_in_process_parsers_take_claims_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_narrow=NARROW_PARSER.format(adapters=str(ADAPTERS / "python")))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert "test_unclaimed" in result.stdout.str() and "FAILED" in result.stdout.str()
