"""The pytest plugin, exercised through pytester.

The runs are in this process (``runpytest_inprocess``: pytester isolates their modules,
``sys.path`` and output), not a pytest process each: a pytest start with the kit's
plugins loaded costs more CPU than grading one of these runs.  The xdist run is a real
``pytest -n 2`` process, as a user starts it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, KIT, PY_REFERENCE, REPO

# The plugin's run-time imports, made here once: pytester's in-process runs put sys.modules
# back after each run, so what one run imported first the next would import again.
import stella_conform.conformance.checks.claims
import stella_conform.conformance.clients.inprocess
import stella_conform.conformance.report.failures
import stella_conform.conformance.suite  # noqa: F401
from stella_conform.conformance.checks import select

CATALOGUE = select(("reader",))  # QUICK asks for the reader profile (a hello may claim more)

pytest_plugins = ["pytester"]
TARGETS = json.loads((ADAPTERS / "broken" / "targets.json").read_text())["clients"]
#: These tests prove the plugin's mechanics (items, outcomes, options, reports): one
#: generated case per check, with every fixture; the clients' power is proven in
#: test_client_matrix.py.
QUICK = [
    "--stella-examples", "1", "--stella-profile", "reader", "-p", "no:cacheprovider",
    "-p", "no:randomly",
]  # fmt: skip


def client_arg(*argv: str) -> str:
    return shlex.join(argv)


def stella_ids(result: pytest.RunResult, outcome: str) -> set[str]:
    ids = set()
    for line in result.outlines:
        if line.startswith(outcome + " ") and "::" in line:
            node = line.split(" ", 1)[1].split(" - ")[0]
            ids.add(node.split("::")[-1].strip("[]").split("[")[-1].rstrip("]"))
    return ids


def test_inert_without_a_client(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest_inprocess("-q")
    result.assert_outcomes(passed=1)
    assert "stella-conform" not in result.stdout.str()


def test_reference_client_passes_one_item_per_check(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(
        "--stella-client", client_arg(*PY_REFERENCE), "--stella-mode", "persistent", "-rA", *QUICK
    )
    graded = sum(1 for c in CATALOGUE if c.grades_in("persistent"))
    result.assert_outcomes(passed=graded, skipped=len(CATALOGUE) - graded)
    assert "PASSED stella-conform::R3.unknown-type-inert" in result.stdout.str()


def test_broken_client_fails_exactly_the_targeted_items(pytester: pytest.Pytester) -> None:
    client = str(ADAPTERS / "broken" / "fails_on_torn_final_line.py")
    result = pytester.runpytest_inprocess(
        "--stella-client",
        client_arg(sys.executable, client),
        "--stella-mode",
        "persistent",
        "-rA",
        *QUICK,
    )
    failed = {
        line.split("::")[1].split(" ")[0]
        for line in result.outlines
        if line.startswith("FAILED stella-conform::")
    }
    assert failed == set(TARGETS["fails_on_torn_final_line.py"])
    text = result.stdout.str()
    # the failure reads like a good pytest failure: stream with visible line ends, seed, replay
    assert "∅ (no final newline)" in text and "seed: 0" in text and "replay:" in text
    assert "pytest_plugin.py" not in text and "Traceback" not in text  # no plugin internals


def _reader_checks(rule: str, mode: str) -> list[str]:
    """The reader checks of a rule gradable in a mode (what ``-k RULE`` selects)."""
    from stella_conform.conformance.checks import CATALOGUE

    return [
        c.id
        for c in CATALOGUE
        if c.profile == "reader" and c.id.startswith(f"{rule}.") and c.grades_in(mode)
    ]


def test_k_selects_rules_and_junit_names_checks(pytester: pytest.Pytester, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_inprocess(
        "--stella-client",
        client_arg(*PY_REFERENCE),
        "--stella-mode",
        "persistent",
        "-k",
        "R6",
        f"--junitxml={junit}",
        *QUICK,
    )
    result.assert_outcomes(passed=len(_reader_checks("R6", "persistent")))
    assert 'name="R6.torn-final-line"' in junit.read_text()


def test_known_failures_become_xfail(pytester: pytest.Pytester) -> None:
    known = pytester.path / "known.toml"
    known.write_text('[known-failures]\n"R6.torn-final-line" = "tracked in #7"\n')
    client = str(ADAPTERS / "broken" / "fails_on_torn_final_line.py")
    result = pytester.runpytest_inprocess(
        "--stella-client",
        client_arg(sys.executable, client),
        "--stella-mode",
        "persistent",
        "--stella-known-failures",
        str(known),
        "-k",
        "R6",
        *QUICK,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 1 and not outcomes.get("failed"), outcomes
    # the rest pass, or skip where every case depended on the torn line it mishandles
    rest = outcomes.get("passed", 0) + outcomes.get("skipped", 0)
    assert rest == len(_reader_checks("R6", "persistent")) - 1, outcomes


def test_ini_configuration(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        f"[pytest]\nstella_client = {client_arg(*PY_REFERENCE)}\n"
        "stella_mode = persistent\nstella_examples = 2\n"
    )
    result = pytester.runpytest_inprocess("-k", "R5", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_ini_claims_and_a_bundled_vocabulary(pytester: pytest.Pytester) -> None:
    """stella_knows narrows the oracle in exit mode; stella_vocabulary names a bundled one."""
    narrow = client_arg(sys.executable, str(ADAPTERS / "python" / "narrow_client.py"))
    pytester.makeini(
        f"[pytest]\nstella_client = {narrow}\nstella_examples = 1\n"
        "stella_knows = text, run_complete, error\n"
    )
    result = pytester.runpytest_inprocess("-k", "R4 and bad", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    older = client_arg(sys.executable, str(ADAPTERS / "python" / "older_client.py"))
    pytester.makeini(
        f"[pytest]\nstella_client = {older}\nstella_mode = persistent\nstella_examples = 1\n"
        "stella_vocabulary = stella-older\n"
    )
    result = pytester.runpytest_inprocess(
        "-k", "unknown-counted or turns-counted", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)  # the hello's profiles: reader and dashboard


def test_an_unknown_claimed_name_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(
        "--stella-client", client_arg(*PY_REFERENCE), "--stella-computes", "texts,turns"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown computes name 'turns'" in result.stderr.str()


def test_bad_client_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--stella-client", "/no/such/client")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "client not found" in result.stderr.str()


@pytest.mark.slow
def test_under_xdist_same_verdicts(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    client = str(ADAPTERS / "broken" / "rejects_unknown_fields.py")
    args = [
        "--stella-client",
        client_arg(sys.executable, client),
        "--stella-mode",
        "persistent",
        "-k",
        "R5 or R6",  # a failing item and passing ones: enough to compare the verdicts
        *QUICK,
    ]
    serial = pytester.runpytest_inprocess(*args)
    parallel = pytester.runpytest_subprocess(*args, "-n", "2")
    # (xdist does not count the items -k deselects)
    assert {k: v for k, v in serial.parseoutcomes().items() if k != "deselected"} == {
        k: v for k, v in parallel.parseoutcomes().items()
    }
    assert serial.parseoutcomes()["failed"] == 1


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("node"), reason="no node")
def test_node_example_repository(pytester: pytest.Pytester) -> None:
    example = REPO / "examples" / "node-client"
    pytester.path.joinpath("tail.js").write_text(
        example.joinpath("tail.js")
        .read_text()
        .replace(
            '"../../adapters/node/reference_client.js"',
            json.dumps(str(ADAPTERS / "node" / "reference_client.js")),
        )
    )
    pytester.path.joinpath("pytest.ini").write_text(example.joinpath("pytest.ini").read_text())
    # The example's wiring (its pytest.ini, the node command, one item per check) is what
    # this proves; every check of the Node.js client in exit mode is in test_client_matrix.py
    # (each case is a node start here: one rule's checks, one generated case each).
    result = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "--stella-examples", "1", "-k", "R6"
    )
    rule = [c for c in CATALOGUE if c.id.startswith("R6.")]
    graded = sum(1 for c in rule if c.grades_in("exit"))
    result.assert_outcomes(
        passed=graded, skipped=len(rule) - graded, deselected=len(CATALOGUE) - len(rule)
    )


def test_in_process_api_example_repository(pytester: pytest.Pytester) -> None:
    example = REPO / "examples" / "python-client"
    for name in ("mini_stella.py", "test_conformance.py"):
        pytester.path.joinpath(name).write_text(
            example.joinpath(name)
            .read_text()
            .replace(
                'os.path.join(HERE, "..", "..", "adapters", "python")',
                repr(str(ADAPTERS / "python")),
            )
        )
    # one generated case per check (the example asks for 5): the in-process API's mechanics
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--stella-examples", "1")
    # every check is graded in-process (report-like), plus the example's own unit test
    result.assert_outcomes(passed=len(CATALOGUE) + 1)


def test_in_process_broken_parser_fails_its_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_parser=f"""
import sys
sys.path.insert(0, {str(ADAPTERS / "python")!r})
from stella_reader import Reader
from stella_conform.pytest_plugin import conformance_tests

def parse(lines):
    reader = Reader()
    for n, raw in enumerate(lines, 1):
        reader.push(n, raw.rstrip(b"\\n"))
        if reader.unrecognized_events:
            raise ValueError("unknown event type")  # the rule-3 bug
        if reader.rejected:
            raise ValueError(reader.rejected[1])
    reader.finish()

test_parse = conformance_tests(parse, examples=3, only=["R3.unknown-type-inert", "R5.*"])
"""
    )
    result = pytester.runpytest_inprocess("-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert "FAILED test_parser.py::test_parse[R3.unknown-type-inert]" in result.stdout.str()


# ---------------------------------------------------------------------- in-process crashes


def test_only_the_named_exception_types_mean_reject() -> None:
    from stella_conform.conformance.clients.inprocess import Parser, run_inprocess

    class StreamError(Exception):
        line = 2

    def rejecting(lines: object) -> None:
        raise StreamError("bad line")

    def buggy(lines: object) -> None:
        raise TypeError("'NoneType' object is not subscriptable")

    stream = b'{"type":"text","text":"a"}\nnot json\n'
    rejected = run_inprocess(Parser(rejecting, (StreamError,)), stream)
    assert rejected.ok and rejected.verdict == "reject" and rejected.rejected_line == 2
    crashed = run_inprocess(Parser(buggy, (StreamError,)), stream)
    assert crashed.status == "crash" and crashed.verdict is None
    assert crashed.detail.startswith("TypeError: 'NoneType' object is not subscriptable")
    assert "in buggy" in crashed.stderr_tail and "inprocess.py" not in crashed.stderr_tail
    # with no types named, ValueError (json.JSONDecodeError among them) is the rejection
    assert run_inprocess(buggy, stream).status == "crash"


CRASHING_PARSER = """
import json


class StreamError(ValueError):
    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")
        self.line = line


def read(lines):
    for n, raw in enumerate(lines, 1):
        try:
            event = json.loads(raw)
        except ValueError:
            raise StreamError(n, "not JSON") from None
        event["type"]  # the bug: KeyError on an event without a type
"""


def test_in_process_crash_is_a_clean_error_with_a_working_replay(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(myparser=CRASHING_PARSER)
    pytester.makepyfile(
        test_conf="""
from myparser import StreamError, read
from stella_conform.pytest_plugin import conformance_tests

test_read = conformance_tests(
    read, examples=2, rejects=StreamError, only=["R3.missing-or-non-string-type"]
)
test_lambda = conformance_tests(
    lambda lines: read(lines), examples=2, only=["R3.missing-or-non-string-type"]
)
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "CRASH" in text and "KeyError: 'type' (a crash, not a rejection" in text
    # nothing of the plugin's own code: the report, and the parser's frames of its traceback
    for internal in ("pytest_plugin.py", "suite.py", "inprocess.py", "def test_stella_conformance"):
        assert internal not in text
    assert 'myparser.py", line 16, in read' in text
    replays = [line.split("replay:", 1)[1].strip() for line in result.outlines if "replay:" in line]
    assert replays and all("--parser myparser.py:read" in r for r in replays)
    assert "--reject myparser.py:StreamError" in replays[0]
    done = subprocess.run(
        [str(KIT.parent / shlex.split(replays[0])[0]), *shlex.split(replays[0])[1:]],
        cwd=pytester.path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "KeyError: 'type'" in done.stdout and 'event["type"]' in done.stdout
    # a lambda cannot be imported again: the pytest command that re-runs the check instead
    assert "re-run:   pytest 'test_conf.py::test_lambda[R3.missing-or-non-string-type]'" in text


@pytest.mark.parametrize(
    ("ini", "said"),
    [
        ('stella_client = "unbalanced', "stella_client (--stella-client): No closing quotation"),
        ("stella_examples = abc", "stella_examples (--stella-examples): a whole number"),
        ("stella_examples = -1", "stella_examples (--stella-examples): at least 0"),
        ("stella_seed = 1.5", "stella_seed (--stella-seed): a whole number"),
        ("stella_timeout = nan", "stella_timeout (--stella-timeout): seconds"),
        ("stella_timeout = inf", "stella_timeout (--stella-timeout): seconds"),
        ("stella_timeout = 0", "stella_timeout (--stella-timeout): seconds"),
        ("stella_database = ftp://example.invalid/x", "stella_database: not a redis:// URL"),
        ("stella_reads = bogus", "unknown reads name 'bogus'"),
        ("stella_profile = bogus", "unknown profile 'bogus'"),
        ("stella_known_failures = missing.toml", "missing.toml"),
        ("stella_vocabulary = no-such-vocabulary", "no-such-vocabulary"),
        ("stella_database = fifo", "stella_database fifo: is a FIFO, not a folder"),
        ("stella_case_cache = fifo", "stella_case_cache fifo: is a FIFO, not a folder"),
        ("stella_database = /dev/null", "stella_database /dev/null: is a character device"),
        ("stella_case_cache = /dev/null", "stella_case_cache /dev/null: is a character devi"),
        ("stella_known_failures = fifo", "stella_known_failures fifo: is a FIFO, not a reg"),
        ("stella_wire_schema = fifo", "stella_wire_schema fifo: is a FIFO, not a regular"),
    ],
)
def test_every_bad_ini_value_is_a_usage_error(
    pytester: pytest.Pytester, ini: str, said: str
) -> None:
    """An unbalanced quote, ``abc`` for a count, ``nan`` for a timeout, a bad
    ``stella_database``, bad claims, profiles or known failures: every value is a usage
    error (exit 4) naming it, checked before the client starts (it logs each start), not
    an INTERNALERROR, a traceback, a value accepted, or a check failed once it has run."""
    pytester.makepyfile(
        starts="""
import pathlib, sys
with open(pathlib.Path(__file__).with_name("starts.log"), "a") as log:
    log.write("started\\n")
sys.exit(0)
"""
    )
    client = (
        ""
        if ini.startswith("stella_client")
        else f"stella_client = {client_arg(sys.executable, 'starts.py')}\n"
    )
    os.mkfifo(pytester.path / "fifo")  # a stella option naming it: a usage error, no hang
    pytester.makeini(f"[pytest]\n{client}{ini}\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert said in result.stderr.str(), result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "starts.log").exists(), "the client was started first"
