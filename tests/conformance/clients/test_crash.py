"""Crash is not reject: a runtime's crash report on stderr makes the case a ``crash``, the
client's own failure, apart from the kit's ``error`` (nothing to judge)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import REPO, kit, kit_inline

from stella_conform.conformance.clients.crash import crash_signature
from stella_conform.conformance.clients.runner import Client, run_exit, run_report
from stella_conform.oracle.corpus import bundled_fixtures_dir

FIXTURES = bundled_fixtures_dir()
NAIVE_PY = (sys.executable, str(REPO / "tests" / "crashing" / "naive_reader.py"))
NAIVE_JS = ("node", str(REPO / "tests" / "crashing" / "naive_reader.js"))
pytest_plugins = ["pytester"]
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# What each runtime really prints when a program dies of an uncaught exception or a
# panic (captured from python3, node 20, java 17, rustc 1.95, go 1.22, dotnet 8, ruby 3.4).
SAMPLES = {
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/tmp/c.py", line 4, in <module>\n'
        '    e["type"]\n'
        "    ~^^^^^^^^\n"
        "KeyError: 'type'\n",
        "KeyError: 'type'",
    ),
    "python-chained": (
        'Traceback (most recent call last):\n  File "c.py", line 2\nValueError: x\n\n'
        "During handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "c.py", line 4\n'
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 9\n",
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 9",
    ),
    "node": (
        '/tmp/c.js:3\nif(!e.type) throw new TypeError("missing type");\n            ^\n\n'
        "TypeError: missing type\n    at Object.<anonymous> (/tmp/c.js:3:19)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1521:14)\n\nNode.js v20.20.2\n",
        "TypeError: missing type",
    ),
    "node-code": (
        "node:internal/fs/utils:356\n    throw err;\n    ^\n\n"
        'Error [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string\n'
        "    at Object.openSync (node:fs:581:10)\n\nNode.js v20.20.2\n",
        'Error [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string',
    ),
    "node-thrown-value": (
        '/tmp/d.js:1\nthrow "plain";\n^\nplain\n'
        "(Use `node --trace-uncaught ...` to show where the exception was thrown)\n\n"
        "Node.js v20.20.2\n",
        "uncaught plain",
    ),
    "go": (
        "panic: runtime error: index out of range [3] with length 0\n\n"
        "goroutine 1 [running]:\nmain.main()\n\t/tmp/x.go:5 +0x1d\nexit status 2\n",
        "panic: runtime error: index out of range [3] with length 0",
    ),
    "rust": (
        "thread 'main' (12014) panicked at r.rs:1:55:\n"
        "index out of bounds: the len is 0 but the index is 3\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        "panic at r.rs:1:55: index out of bounds: the len is 0 but the index is 3",
    ),
    "rust-old": (
        "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', "
        "src/main.rs:4:37\n",
        "panic: 'called `Option::unwrap()` on a `None` value', src/main.rs:4:37",
    ),
    "jvm": (
        'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
        '"Object.toString()"\n\tat C.main(C.java:1)\n',
        'java.lang.NullPointerException: Cannot invoke "Object.toString()"',
    ),
    "dotnet": (
        "Unhandled exception. System.Text.Json.JsonException: 'x' is an invalid start of a "
        "value.\n   at Program.Main()\n",
        "System.Text.Json.JsonException: 'x' is an invalid start of a value.",
    ),
    "ruby": (
        "c.rb:3:in 'Hash#fetch': key not found: \"type\" (KeyError)\n\tfrom c.rb:3:in '<main>'\n",
        'KeyError: key not found: "type"',
    ),
}


@pytest.mark.parametrize("runtime", sorted(SAMPLES))
def test_each_runtime_crash_report_is_recognised(runtime: str) -> None:
    stderr, exception = SAMPLES[runtime]
    assert crash_signature("some logging first\n" + stderr) == exception


@pytest.mark.parametrize(
    "stderr",
    [
        "",
        "stella-reader-python: line 2: not JSON: Expecting value\n",  # a deliberate rejection
        'jq: error (at <stdin>:2): Cannot index string with "type"\n',  # the jq client's way
        "error: line 3 is not an object\nat line 3\n",
        "warning: unknown event type 'x'\n",
    ],
)
def test_a_deliberate_rejection_message_is_not_a_crash(stderr: str) -> None:
    assert crash_signature(stderr) is None


def _exit_client(argv: tuple[str, ...], **settings: object) -> Client:
    return Client(argv=argv, timeout=20.0, **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argv", "fixture", "exception"),
    [
        (NAIVE_PY, "missing_type", "crashed: KeyError: 'type'"),
        (NAIVE_PY, "corrupt_middle_line", "crashed: json.decoder.JSONDecodeError: "),
        pytest.param(
            NAIVE_JS, "missing_type", "crashed: TypeError: event has no type", marks=needs_node
        ),
        pytest.param(NAIVE_JS, "corrupt_middle_line", "crashed: SyntaxError: ", marks=needs_node),
    ],
)
def test_exit_mode_uncaught_exception_is_a_crash_not_a_reject(
    argv: tuple[str, ...], fixture: str, exception: str
) -> None:
    stream = (FIXTURES / f"{fixture}.jsonl").read_bytes()
    obs = run_exit(_exit_client(argv), stream)
    assert obs.status == "crash" and obs.verdict is None, obs.describe()
    assert obs.detail.startswith(exception) and "exit status 1" in obs.detail
    assert obs.to_json()["stderr_tail"] and "Error" in obs.to_json()["stderr_tail"]
    # the same client still answers a stream it can read
    ok = run_exit(_exit_client(argv), (FIXTURES / "minimal_run.jsonl").read_bytes())
    assert ok.ok and ok.verdict == "accept"


def test_detection_off_keeps_the_exit_status_as_the_verdict() -> None:
    stream = (FIXTURES / "missing_type.jsonl").read_bytes()
    obs = run_exit(_exit_client(NAIVE_PY, detect_crashes=False), stream)
    assert obs.ok and obs.verdict == "reject"


def test_reject_exit_codes_name_the_statuses_that_mean_rejected(tmp_path: Path) -> None:
    script = tmp_path / "exits3.py"
    script.write_text("import sys\nsys.stdin.read()\nsys.exit(3)\n")
    stream = (FIXTURES / "minimal_run.jsonl").read_bytes()
    default = run_exit(_exit_client((sys.executable, str(script))), stream)
    assert default.status == "crash" and "1 = reject" in default.detail
    told = run_exit(
        _exit_client((sys.executable, str(script)), reject_exit_codes=frozenset({1, 3})), stream
    )
    assert told.ok and told.verdict == "reject"


def test_a_crash_report_with_a_non_verdict_status_names_the_exception(tmp_path: Path) -> None:
    script = tmp_path / "panics.py"
    script.write_text(
        "import sys\nsys.stdin.read()\n"
        "sys.stderr.write('panic: assignment to entry in nil map\\n\\ngoroutine 1 [running]:\\n')\n"
        "sys.exit(2)\n"
    )
    obs = run_exit(_exit_client((sys.executable, str(script))), b"{}\n")
    assert obs.detail == "crashed: panic: assignment to entry in nil map (exit status 2)"


ADAPTER_THAT_DIES = """
import json, sys
hello = {"kind": "hello", "protocol": 1, "client": {"name": "x"}, "profiles": ["reader"]}
print(json.dumps(hello), flush=True)
for number, line in enumerate(sys.stdin, 1):
    json.loads(line)["type"]
    print(json.dumps({"kind": "line", "line": number, "outcome": "known"}), flush=True)
"""


def test_report_mode_adapter_dying_before_its_summary_names_the_exception(tmp_path: Path) -> None:
    script = tmp_path / "adapter.py"
    script.write_text(ADAPTER_THAT_DIES)
    client = Client(argv=(sys.executable, str(script)), mode="report", timeout=20.0)
    obs = run_report(client, (FIXTURES / "missing_type.jsonl").read_bytes())
    assert obs.status == "crash" and "KeyError: 'type'" in obs.detail


def test_a_crash_is_graded_crash_with_the_exception_in_every_report(tmp_path: Path) -> None:
    """A client's crash is its own failure (CRASH), never the kit's ERROR, in every format."""
    paths = {name: tmp_path / name for name in ("r.json", "r.xml", "r.md")}
    out = kit(
        "run",
        "--only",
        "R3.missing-or-non-string-type",
        "--examples",
        "0",
        "--json",
        str(paths["r.json"]),
        "--junit-xml",
        str(paths["r.xml"]),
        "--markdown",
        str(paths["r.md"]),
        "--",
        *NAIVE_PY,
        cwd=tmp_path,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "CRASH" in out.stdout and "ERROR" not in out.stdout
    assert "client crash: KeyError: 'type'" in out.stdout and "\n1 crash\n" in out.stdout
    assert "client stderr" in out.stdout and "Traceback (most recent call last):" in out.stdout
    doc = json.loads(paths["r.json"].read_text())
    check = doc["checks"][0]
    assert check["outcome"] == "crash" and "KeyError: 'type'" in check["message"]
    assert doc["summary"]["crash"] == 1 and doc["summary"]["error"] == 0
    assert "Traceback" in check["failures"][0]["observed"]["stderr_tail"]
    assert check["failures"][0]["verdict"] == "crash"
    suite = ET.parse(paths["r.xml"]).getroot()
    assert suite.get("failures") == "1" and suite.get("errors") == "0"
    case = suite.find("testcase")
    assert case is not None and case.find("error") is None
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "crash"
    system_err = case.find("system-err")
    assert system_err is not None and "KeyError: 'type'" in (system_err.text or "")
    md = paths["r.md"].read_text()
    assert "💥 crash" in md and "error" not in md.split("| --- |")[-1]
    assert "client stderr" in md and "KeyError: &#39;type&#39;" not in md
    assert "KeyError: 'type'" in md


@pytest.mark.slow
@needs_node
def test_a_node_crash_is_graded_error_and_detection_can_be_turned_off(tmp_path: Path) -> None:
    args = ("run", "--only", "R3.missing-or-non-string-type", "--examples", "0")
    out = kit(*args, "--json", str(tmp_path / "r.json"), "--", *NAIVE_JS, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    check = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert check["outcome"] == "crash" and "client crash: TypeError" in check["message"]
    assert "Node.js v" in check["failures"][0]["observed"]["stderr_tail"]
    assert "--no-crash-detection" not in check["failures"][0]["replay"]
    # with detection off the exit status is the verdict: the crash counts as a rejection of
    # the line without a type, which is reading B of a registered point (stella's own
    # reader rejects it too), so the check passes and the report names the reading
    off = kit(
        *args,
        "--no-crash-detection",
        "--json",
        str(tmp_path / "off.json"),
        "--",
        *NAIVE_JS,
        cwd=tmp_path,
    )
    assert off.returncode == 0, off.stdout + off.stderr
    check = json.loads((tmp_path / "off.json").read_text())["checks"][0]
    assert check["outcome"] == "pass"
    assert check["readings"].get("missing-or-non-string-type=B"), check


@pytest.mark.parametrize("spec", ["0", "x", "1,,2", "256", ""])
def test_bad_reject_exit_codes_are_a_setup_error(spec: str) -> None:
    from stella_conform.cli.client import parse_exit_codes
    from stella_conform.errors import SetupError

    with pytest.raises(SetupError, match="--reject-exit-codes"):
        parse_exit_codes(spec)
    assert parse_exit_codes("3,1") == frozenset({1, 3})


def test_bad_reject_exit_codes_are_one_line_and_exit_2() -> None:
    out = kit_inline("run", "--reject-exit-codes", "0", "--", *NAIVE_PY)
    assert out.returncode == 2 and "--reject-exit-codes" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_crash_report_is_found_after_a_flood_of_logging(tmp_path: Path) -> None:
    """Only the first 64 KiB of stderr is kept whole; the end is kept apart for this."""
    script = tmp_path / "chatty.py"
    script.write_text(
        "import sys\nsys.stdin.read()\n"
        "for i in range(3000): sys.stderr.write(f'debug: line {i} of chatter\\n')\n"
        "raise KeyError('type')\n"
    )
    obs = run_exit(_exit_client((sys.executable, str(script))), b"{}\n")
    assert obs.stderr_bytes > 64 * 1024
    assert obs.status == "crash" and obs.detail.startswith("crashed: KeyError: 'type'")
    tail = obs.to_json()["stderr_tail"]
    assert tail.endswith("KeyError: 'type'\n") and len(tail.encode()) <= 2000
    assert tail.startswith("debug: line ")  # cut at a line boundary, not mid-line


def test_client_text_in_reports_cannot_break_the_markdown_or_the_terminal() -> None:
    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.report.markdown import markdown_text
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.report.terminal import terminal_report
    from stella_conform.conformance.suite import CaseFailure, CheckResult, SuiteConfig

    check = BY_ID["R3.missing-or-non-string-type"]
    failure = CaseFailure(
        "c",
        "fixture",
        "client crash",
        {},
        {"status": "crash", "stderr_tail": "a|b <i>x</i> `y`\x1b[31m\n"},
    )
    result = CheckResult(
        check.id, check.name, check.rule, check.tier, "error", "m", failures=[failure]
    )
    report = Report(SuiteConfig(Client(argv=("x",))), [result], "v")
    md = markdown_text(report)
    # inside <code>, every markup character a reference: no tag, no code span, no escape
    assert "a&#124;b &#60;i&#62;x&#60;/i&#62; &#96;y&#96;&#92;x1b&#91;31m" in md
    assert "<i>" not in md and "\x1b" not in md
    assert "\x1b" not in terminal_report(report) and "\\x1b[31m" in terminal_report(report)


@pytest.mark.slow
def test_the_stderr_tail_reaches_the_matrix_json(tmp_path: Path) -> None:
    """The matrix embeds each cell's report: the crash and its stderr are in the cell."""
    from stella_conform.conformance.matrix import load_config, run_matrix, to_html, to_markdown

    config_path = tmp_path / "matrix.toml"
    config_path.write_text(
        '[matrix]\nexamples = 0\njobs = 1\n\n[[client]]\nname = "naive"\n'
        f'command = {json.dumps(list(NAIVE_PY))}\nmode = "exit"\nprofiles = ["reader"]\n'
    )
    config = load_config(config_path)
    ids = [check.id for _, check in config.tasks()]
    only = ids.index("R3.missing-or-non-string-type") + 1  # a shard of one task: cheap
    doc = run_matrix(config, shard=(only, len(ids)))
    (check,) = doc["cells"][0]["report"]["checks"]
    assert check["outcome"] == "crash" and "client crash: KeyError: 'type'" in check["message"]
    assert "Traceback" in check["failures"][0]["observed"]["stderr_tail"]
    # the matrix's renderings read it as the client's failure, apart from the kit's errors
    md, page = to_markdown(doc), to_html(doc)
    assert (
        "💥 1 graded · 1 failed (1 crash)" in md
        and "💥 crash" in md
        and "error" not in md.split("### checks")[1].split("### failures")[0]
    )
    assert '<td class="crash"><span class="outcome">crash</span>' in page


@pytest.mark.slow
def test_the_stderr_tail_reaches_the_pytest_output(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--stella-client", shlex.join(NAIVE_PY), "--stella-examples", "0",
        "-k", "missing-or-non-string-type", "-p", "no:cacheprovider", "-p", "no:randomly",
    )  # fmt: skip
    text = result.stdout.str()
    assert "crashed: KeyError: 'type'" in text and "client stderr" in text
    assert "Traceback (most recent call last):" in text  # the client's, shown as its stderr


# ------------------------------------------- what docs/reliability.md says of each behaviour

HOSTILE = REPO / "tests" / "hostile" / "hostile.py"
DIES_MID_CASE = """\
import json, os, signal, sys
print(json.dumps({"kind": "hello", "protocol": 1, "client": {"name": "x"},
                  "profiles": ["reader"], "modes": ["persistent"]}), flush=True)
sys.stdin.buffer.readline()
os.kill(os.getpid(), signal.SIGKILL)
"""


def _hostile_table() -> dict[str, str]:
    """docs/reliability.md's table of hostile behaviours: the client's row, its outcome."""
    text = (REPO / "docs" / "reliability.md").read_text()
    table = text.split("| the client | outcome |\n| --- | --- |\n", 1)[1]
    rows = {}
    for line in table.splitlines():
        if not line.startswith("|"):
            break  # the table ends (a blank line would end it too: the rest is no table)
        client, outcome = (c.strip() for c in line.strip("|").split(" | ", 1))
        rows[client] = outcome
    return rows


@pytest.mark.parametrize(
    ("row", "argv", "feed"),
    [
        ("dies by SIGSEGV, SIGKILL, SIGABRT", ("signal", "SIGSEGV"), "lines"),
        ("exits 2, 127, 255", ("exit", "127"), "lines"),
        ("hangs without reading stdin", ("hang-no-read",), "lines"),
        ("recorder: the `{record}` file is a FIFO", ("record-fifo", "{record}"), "record"),
        ("recorder: the `{record}` file is a link to `/dev/zero`", ("record-zero", "{record}"),
         "record"),
        ("persistent mode: dies in the middle of a case", (), "persistent"),
    ],
)  # fmt: skip
def test_the_hostile_behaviours_table_names_the_outcome_the_grader_gives(
    tmp_path: Path, row: str, argv: tuple[str, ...], feed: str
) -> None:
    from stella_conform.conformance.checks import unanswered
    from stella_conform.conformance.clients.runner import Feed, PersistentSession

    valid = (FIXTURES / "minimal_run.jsonl").read_bytes()
    if feed == "persistent":
        (tmp_path / "dies.py").write_text(DIES_MID_CASE)
        client = Client(argv=(sys.executable, str(tmp_path / "dies.py")), mode="persistent")
        with PersistentSession(client) as session:
            obs = session.run(valid)
    else:
        client = Client(argv=(sys.executable, str(HOSTILE), *argv), timeout=1.0)
        obs = run_exit(client, valid, Feed(record=True) if feed == "record" else Feed())
    judged = unanswered(obs)
    documented = _hostile_table()[row]
    said = re.match(r"`(\w+)`(: )?", documented)
    assert said is not None, documented
    assert said[1] == judged.verdict, (documented, judged)
    words = re.findall(r'"([^"]+)"', documented[said.end() :].split(";")[0])
    assert all(w.replace("…", "") in judged.message for w in words), (documented, judged)
