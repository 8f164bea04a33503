"""Every failure actionable, once: every failing case listed, one protocol error said once,
the client's own words, a crash as the client's, replay lines that travel.

The clients here are the Python template (``stella-conform init python``) with a bug or
two put in the way a client author would: the template reads every stream right, so each
bug is all a run can find.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, KIT, kit

from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.clients.runner import Client, Observation
from stella_conform.conformance.fuzz import FAILURES_PER_CHECK
from stella_conform.conformance.report.compare import load_report
from stella_conform.conformance.report.failures import LISTED
from stella_conform.conformance.report.model import Report
from stella_conform.conformance.report.terminal import terminal_report
from stella_conform.conformance.suite import (
    IN_PROCESS_SKIP,
    SAVED_WHOLE,
    CaseFailure,
    CheckResult,
    SuiteConfig,
    keep_bounded,
    run_check,
    smallest_first,
)

pytest_plugins = ["pytester"]
PY = sys.executable
#: The kit started as a module, from a PATH that has no stella-conform script on it.
KIT_MODULE = (PY, "-m", "stella_conform")
NO_SCRIPT_PATH = "/usr/bin:/bin"


def template(folder: Path, *edits: tuple[str, str]) -> tuple[str, str]:
    """The Python template in ``folder``, each ``(old, new)`` edit made (old must be there)."""
    assert kit("init", "python", str(folder)).returncode == 0
    source = folder / "stella_adapter.py"
    text = source.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    source.write_text(text)
    return PY, "stella_adapter.py"


#: Two bugs of rule 4 in one client: a bare string as a tool's output, any stage scope.
BARE_STRING_OUTPUT = (
    "def tool_output(v):\n",
    "def tool_output(v):\n    if isinstance(v, str):\n        return True  # the bug\n",
)
ANY_SCOPE = ('"scope": one_of("turn", "run")', '"scope": string')
#: A summary that names a turn's end as the run's terminator (not a value it may take).
TURN_TERMINATOR = (
    '("error" if self.last_known == "error" else None)',
    '("error" if self.last_known == "error" else "turn_complete")',
)
#: Rejecting an unknown type, with a reason (the README's rule-3 bug).
REJECTS_UNKNOWN = (
    "self.unknown += 1  # rule 3: unrecognized events are counted, nothing more",
    'return self.reject(line, f"unknown type {tag}")',
)


def test_two_bugs_in_one_check_both_show_in_the_terminal(tmp_path: Path) -> None:
    client = template(tmp_path, BARE_STRING_OUTPUT, ANY_SCOPE)
    report = tmp_path / "r.json"
    out = kit(
        "run", "--mode", "exit", "--only", "R4.bad-body-rejected", "--examples", "0",
        "--no-database", "--json", str(report), "--", *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    (check,) = json.loads(report.read_text())["checks"]
    assert check["failed_cases"] == 2
    first, second = check["failures"]
    assert {first["case"], second["case"]} == {"bad_body_bare_string_output", "bad_body_enum"}
    assert first["size"] <= second["size"]  # the smallest first, in full
    text = out.stdout
    assert f"    case: {first['case']} (fixture)" in text
    assert "    1 more failing case, smallest first:\n" in text
    assert f"\n      {second['case']} (fixture): expected reject at line" in text


def _failure(name: str, size: int, verdict: str = "fail") -> CaseFailure:
    return CaseFailure(
        name, "fixture", f"{name} went wrong", {}, {"verdict": "accept"},
        saved=f"fixture:{name}", stream=b"x" * size, verdict=verdict, size=size,
        identity=verdict,
    )  # fmt: skip


def test_failing_cases_are_listed_smallest_first_with_a_count() -> None:
    check = BY_ID["R4.bad-body-rejected"]
    failures = [_failure(f"case{n}", 100 - n) for n in range(LISTED + 5)]
    failures.append(_failure("case0", 100))  # the same case twice is one
    failures.append(_failure("crashed", 1, verdict="crash"))  # not this check's outcome
    kept = smallest_first(failures, "fail")
    assert [f.case for f in kept][:2] == [f"case{LISTED + 4}", f"case{LISTED + 3}"]
    assert kept[-1].case == "crashed" and len(kept) == LISTED + 6
    result = CheckResult(
        check.id, check.name, check.rule, check.tier, "fail", kept[0].message,
        failures=kept, failed_cases=len(kept) + 4,  # four more than were kept
    )  # fmt: skip
    text = terminal_report(Report(SuiteConfig(Client(argv=("x",))), [result], "v"))
    assert f"    {LISTED + 9} more failing cases, smallest first:" in text
    listed = [line for line in text.splitlines() if line.startswith("      case")]
    assert len(listed) == LISTED and listed[0].startswith(f"      case{LISTED + 3} (fixture): ")
    assert f"      … and {LISTED + 9 - LISTED} more (the JSON report has {len(kept)})" in text


def test_one_protocol_error_is_reported_once_naming_the_allowed_values(tmp_path: Path) -> None:
    client = template(tmp_path, TURN_TERMINATOR)
    out = kit(
        "run", "--mode", "report", "--examples", "0", "--no-database", "-j", "1",
        "--only", "R1.object-per-line", "--only", "R3.unknown-counted", "--only", "R6.torn*",
        "--", *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    text = out.stdout
    errors = [line for line in text.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 4, text
    allowed = (
        '\'terminator\' is "turn_complete"; the allowed values are "run_complete", "error" or null'
    )
    assert allowed in errors[0] and text.count("    case: ") == 1  # one block, in full
    assert all(e.endswith("the protocol error shown under R1.object-per-line") for e in errors[1:])
    assert (
        f"one protocol error left 4 checks ungraded: malformed summary message ({allowed}" in text
    )


def test_the_adapter_s_reason_is_shown_by_run_and_replay(tmp_path: Path) -> None:
    client = template(tmp_path, REJECTS_UNKNOWN)
    out = kit(
        "run", "--mode", "report", "--only", "R3.unknown-type-inert", "--examples", "0",
        "--no-database", "--", *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    said = re.search(r"client:   reject at line (\d+) \(unknown type (\w+)\)\n", out.stdout)
    assert said is not None, out.stdout
    assert f"; client: reject at line {said[1]} (unknown type {said[2]})" in out.stdout
    fixture = re.search(r"saved:    (fixture:\w+)", out.stdout)
    assert fixture is not None, out.stdout
    replayed = kit("replay", fixture[1], "--mode", "report", "--", *client, cwd=tmp_path)
    assert replayed.returncode == 1
    assert f"client:   reject at line {said[1]} (unknown type {said[2]})\n" in replayed.stdout


def test_the_adapter_s_reason_is_shown_by_the_plugin(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    client = template(pytester.path, REJECTS_UNKNOWN)
    result = pytester.runpytest_inprocess(
        "--stella-client", shlex.join(client), "--stella-mode", "report",
        "--stella-examples", "0", "-k", "unknown-type-inert", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    assert re.search(r"client: +reject at line \d+ \(unknown type \w+\)", result.stdout.str())


def test_replay_names_bundled_fixtures_and_refuses_other_names(tmp_path: Path) -> None:
    client = (PY, str(ADAPTERS / "python" / "reference_client.py"))
    out = kit("replay", "fixture:bad_body_enum", "--mode", "report", "--", *client)
    assert out.returncode == 0 and "expected: reject at line 1" in out.stdout
    envelope = kit(
        "replay", "fixture:envelopes/raw_unknown_keys", "--check", "E.unknown-keys-ignored",
        "--", PY, str(ADAPTERS / "python" / "envelope_client.py"), cwd=tmp_path,
    )  # fmt: skip
    assert envelope.returncode == 0 and "case:     fixture:envelopes/raw_unknown_keys" in (
        envelope.stdout
    )
    for bad, said in (("fixture:nope", "no bundled fixture named 'nope'"), ("fixture:../x", "")):
        refused = kit("replay", bad, "--", PY, "-c", "pass")
        assert refused.returncode == 2 and said in refused.stderr


STRICT_CLIENT = """\
import json, sys
for line in sys.stdin.buffer:
    if line.strip():
        try:
            json.loads(line)
        except ValueError:
            sys.exit(1)  # the bug: a torn final line fails the whole stream
"""


@pytest.mark.slow
def test_a_matrix_s_replay_lines_reproduce_from_a_copied_artifact_folder(tmp_path: Path) -> None:
    """CI grades in one folder and uploads matrix-report/; a developer runs its replay lines
    in a checkout elsewhere, with no stella-conform script on PATH."""
    ci = tmp_path / "ci"
    (ci / "clients").mkdir(parents=True)
    (ci / "clients" / "strict.py").write_text(STRICT_CLIENT)
    (ci / "matrix.toml").write_text(
        "[matrix]\nexamples = 1\njobs = 1\n\n"
        f'[[client]]\nname = "strict"\ncommand = ["{PY}", "clients/strict.py"]\nmode = "exit"\n'
    )
    env = {**os.environ, "PATH": NO_SCRIPT_PATH}
    graded = subprocess.run(
        [*KIT_MODULE, "matrix", "matrix.toml", "--out", "matrix-report"],
        cwd=ci, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert graded.returncode == 1, graded.stdout + graded.stderr
    doc = json.loads((ci / "matrix-report" / "matrix.json").read_text())
    checks = doc["cells"][0]["report"]["checks"]
    replays = [f["replay"] for c in checks for f in c["failures"]]
    markdown = (ci / "matrix-report" / "matrix.md").read_text()
    shown = [m[1] for m in re.finditer(r"replay: `([^`]+)`", markdown)]
    assert shown and set(shown) <= set(replays)
    assert any("replay fixture:" in r for r in replays)  # a bundled fixture, by name
    assert any("replay matrix-report/failures/" in r for r in replays)  # a saved case
    saved = [f["saved"] for c in checks for f in c["failures"]]
    assert all(s.startswith(("fixture:", "matrix-report/failures/")) for s in saved), saved
    for line in replays:
        assert str(tmp_path) not in line and "site-packages" not in line, line
        assert shlex.split(line)[:4] == [PY, "-m", "stella_conform", "replay"], line
    # the checkout elsewhere: the same files, the artifact folder copied in
    elsewhere = tmp_path / "laptop"
    shutil.copytree(ci, elsewhere)
    shutil.rmtree(ci)
    for line in replays:
        done = subprocess.run(
            line, shell=True, cwd=elsewhere, capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 1, (line, done.stdout, done.stderr)  # the failure, again
        assert "client:" in done.stdout and "expected" in done.stdout, done.stdout


# ---------------------------------------------------------------- what a report costs

#: What a run against a client that fails on every line over 64 KiB may leave, whatever it
#: fails on: report.json (1.1 MB before the cap) and the failures folder (4.3 MB before:
#: every failing case of R1.long-lines whole, 1 MiB each, with 2 MB of expected text).
REPORT_CAP = 64 * 1024
FAILURES_CAP = SAVED_WHOLE
LINE_LIMIT = (PY, str(ADAPTERS / "broken" / "line_limit_64k.py"))


def _long_lines_run(folder: Path, examples: int = 25) -> dict[str, Any]:
    """R1.long-lines graded on the 64 KiB line-limit client in ``folder``: its one check."""
    folder.mkdir(parents=True)
    out = kit(
        "run", "--mode", "exit", "--only", "R1.long-lines", "--examples", str(examples),
        "--no-database", "--no-case-cache", "-j", "1", "--json", "report.json",
        "--failures-dir", "failures", "--", *LINE_LIMIT, cwd=folder,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    (check,) = load_report(folder / "report.json")["checks"]  # the report schema's shape
    return check


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("examples", [25, 60])
def test_a_run_s_report_and_failures_stay_bounded_however_big_its_failing_cases(
    tmp_path: Path, examples: int
) -> None:
    """The smallest failing case saved whole (it is the one replayed); the others over
    256 KiB listed by size and sha256, not saved; later expected strings digested."""
    check = _long_lines_run(tmp_path / "run", examples)
    assert (tmp_path / "run" / "report.json").stat().st_size <= REPORT_CAP
    assert _folder_bytes(tmp_path / "run" / "failures") <= FAILURES_CAP
    failures = check["failures"]
    first, rest = failures[0], failures[1:]
    saved = tmp_path / "run" / first["saved"]
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == first["sha256"]  # whole
    assert saved.stat().st_size == first["size"]
    big = [f for f in rest if f["source"] == "generated" and f["size"] > SAVED_WHOLE]
    assert big, [(f["source"], f["size"]) for f in rest]  # what the caps are about
    for f in big:
        assert f["saved"] is None
        assert f["not_saved"].startswith(f"{f['size']} bytes, over 256 KiB")
        assert re.fullmatch("[0-9a-f]{64}", f["sha256"]) and f["replay"] == first["replay"]
    assert all(len(f["sha256"]) == 64 and f["size"] > 0 for f in failures)
    long_texts = [v for f in rest for v in f["expected"].values() if isinstance(v, str)]
    assert all(len(v) < 4096 + 200 for v in long_texts)
    assert any("characters, sha256 " in v for v in long_texts)  # a megabyte text, digested


@pytest.mark.parametrize("first", ["generated", "fixture"])
def test_only_the_smallest_big_case_of_each_distinct_failure_stays_in_the_failures_folder(
    tmp_path: Path, first: str
) -> None:
    """However many large cases fail, and in whatever order they come, the folder keeps
    the smallest generated case of each distinct failure whole (case2 of the fails, case1,
    the one crash), and any other this run wrote within 256 KiB; a file that was there
    before the run stays.  The rest: not saved, replayed by the smallest of their kind."""
    failures = [_failure("line_over_64kib", 100)] if first == "fixture" else []
    # case0 (found first) is the largest fail; case1 crashed; case2 is the smallest fail
    sizes = [
        SAVED_WHOLE + 41,
        SAVED_WHOLE,
        SAVED_WHOLE + 1,
        *range(SAVED_WHOLE + 2, SAVED_WHOLE + 40, 2),
    ]
    for n, size in enumerate(sizes):
        path = tmp_path / f"case{n}.jsonl"
        path.write_bytes(b"x")
        failure = _failure(f"case{n}", size, verdict="crash" if n == 1 else "fail")
        failure.source, failure.saved, failure.replay = "generated", str(path), f"replay {path}"
        failure.written = (str(path),)
        failures.append(failure)
    cases = {f.case: f for f in failures if f.source == "generated"}
    cases["case5"].written = ()  # there before the run
    keep_bounded(failures)
    whole = ["case1", "case2", "case5"]
    assert sorted(p.stem for p in tmp_path.iterdir()) == whole
    for name, f in cases.items():
        if name in whole:
            assert f.not_saved is None and f.saved == str(tmp_path / f"{name}.jsonl")
            assert f.replay == f"replay {tmp_path / name}.jsonl"  # its own failure
        else:
            assert f.saved is None and f.replay == f"replay {tmp_path / 'case2'}.jsonl"
            assert f.not_saved and f"({tmp_path / 'case2'}.jsonl)" in f.not_saved


#: The line-limit client, after a pause per case: a run slow enough to be stopped mid-check.
SLOW_LINE_LIMIT = f"""\
import runpy, sys, time
time.sleep(0.3)
sys.argv = ["line_limit_64k.py"]
runpy.run_path({str(LINE_LIMIT[1])!r}, run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "jobs"), [(signal.SIGTERM, "1"), (signal.SIGINT, "1"), (signal.SIGTERM, "2")]
)
def test_a_run_stopped_mid_check_leaves_its_failures_folder_bounded(
    tmp_path: Path, signum: int, jobs: str
) -> None:
    """A CI cancel (SIGINT, then SIGTERM) mid-check: the check's cases are written as it
    goes and bounded once it finishes, so the stop bounds them as the end of the check
    would, or it would leave every one (here 6 files, over 4 MB): inline (``-j 1``: the
    Stopped) and in a worker (``-j 2``: its stop handler, before it goes)."""
    (tmp_path / "client.py").write_text(SLOW_LINE_LIMIT)
    failures = tmp_path / "failures"
    proc = subprocess.Popen(
        [str(KIT), "run", "--mode", "exit", "--only", "R1.long-lines", "--only",
         "R1.valid-runs-accepted", "--examples", "60", "--no-database", "--no-case-cache",
         "-j", jobs, "--json", "report.json",
         "--failures-dir", "failures", "--", PY, "client.py"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(list(failures.glob("R1.long-lines-*.expect.json"))) < 3:
            assert time.monotonic() < deadline and proc.poll() is None, "no failures saved"
            time.sleep(0.2)
        assert _folder_bytes(failures) > 2 * FAILURES_CAP  # the premise: big cases on disk
        proc.send_signal(signum)
        assert proc.wait(timeout=60) == 128 + signum
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # one distinct failure (a reject of a long line): its smallest case so far, no other
    left = sorted(p.name for p in failures.iterdir())
    assert len([name for name in left if name.endswith(".expect.json")]) <= 1, left
    assert len(left) <= 2, left


@pytest.mark.slow
def test_a_run_s_replay_line_reproduces_from_a_copied_artifact(tmp_path: Path) -> None:
    """CI uploads report.json and failures/; a developer copies them elsewhere and runs the
    replay line the report gives, for the smallest case and for each case not saved."""
    check = _long_lines_run(tmp_path / "ci")
    elsewhere = tmp_path / "laptop"
    shutil.copytree(tmp_path / "ci", elsewhere)
    shutil.rmtree(tmp_path / "ci")
    first = check["failures"][0]
    assert hashlib.sha256((elsewhere / first["saved"]).read_bytes()).hexdigest() == first["sha256"]
    lines = {f["replay"] for f in check["failures"] if f.get("not_saved")}
    assert lines == {first["replay"]}  # each big case points to the smallest, which travels
    for line in lines:
        done = subprocess.run(
            line, shell=True, cwd=elsewhere, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 1, (line, done.stdout, done.stderr)  # the failure, again
        assert "expected: accept\nclient:   reject\n" in done.stdout, done.stdout
        assert f"stream ({first['size']} bytes):" in done.stdout


#: A client that crashes on any line over 64 KiB, in words that name the event's type: each
#: type is a distinct bug to fuzz (one saved case each, before the bound).
CRASHES_ON_LONG_LINES = """\
import json, sys

for line in sys.stdin.buffer.read().split(b"\\n"):
    if len(line) > 64 * 1024:
        raise BufferError(f"line too long in a {json.loads(line).get('type')} event")
"""


@pytest.mark.slow
def test_fuzz_keeps_its_failures_folder_bounded_however_big_the_cases_it_finds(
    tmp_path: Path,
) -> None:
    """Each distinct failure fuzz finds (two bugs on 1 MiB and 2 MiB lines: one crash
    message per event type) keeps its smallest case whole, with a replay line that
    reproduces *that* failure; any other case of it over 256 KiB is listed by size and
    sha256, its replay line its kind's smallest, in the check's failures and in the fuzz
    section alike.  (Was: only the check's smallest kept, the other bug's case deleted and
    given a replay line that reproduces the first bug.)"""
    (tmp_path / "client.py").write_text(CRASHES_ON_LONG_LINES)
    out = kit(
        "fuzz", "--max-cases", "60", "--only", "R1.long-lines", "--no-database",
        "--no-feedback", "--mode", "exit", "--json", "report.json", "--failures-dir",
        "failures", "--", PY, "client.py", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    doc = load_report(tmp_path / "report.json")
    (check,) = doc["checks"]
    generated = [f for f in check["failures"] if f["source"] != "fixture"]
    kinds: dict[str, list[dict[str, Any]]] = {}
    for f in generated:
        kinds.setdefault(re.sub(r"\d+", "N", f["message"]), []).append(f)
    assert len(kinds) >= 2, sorted(kinds)  # the premise: two distinct bugs, both big
    kept = []
    for message, alike in kinds.items():
        smallest = min(alike, key=lambda f: f["size"])
        case = tmp_path / smallest["saved"]
        assert hashlib.sha256(case.read_bytes()).hexdigest() == smallest["sha256"]  # whole
        kept += [case, case.with_name(case.name.removesuffix(".jsonl") + ".expect.json")]
        for f in alike:
            assert f["replay"] == smallest["replay"], (message, f)
            if f["saved"] != smallest["saved"]:
                assert f["saved"] is None and f["not_saved"].startswith(f"{f['size']} bytes")
        done = subprocess.run(
            smallest["replay"], shell=True, cwd=tmp_path, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, (smallest["replay"], done.stdout, done.stderr)
        said = re.search(r"BufferError: line too long in a \w+ event", message)
        assert said and said.group() in done.stdout, (message, done.stdout)  # its own bug
    for found in doc["fuzz"]["failures"]:  # each find's replay line: its own kind's smallest
        alike = kinds[re.sub(r"\d+", "N", found["message"])]
        assert found["replay"] == min(alike, key=lambda f: f["size"])["replay"], found
    files = sorted(p for p in (tmp_path / "failures").rglob("*") if p.is_file())
    assert files == sorted(set(kept)), files  # no other case: every other is over 256 KiB
    big = [a for a in kinds.values() if min(f["size"] for f in a) > SAVED_WHOLE]
    assert len(big) >= 2, sorted(kinds)  # what the bound was wrong about: two big bugs
    assert _folder_bytes(tmp_path / "failures") <= FAILURES_PER_CHECK * 3 * max(
        f["size"] for f in generated
    )  # the bound: each distinct failure's smallest case (and its expect file)


@pytest.mark.slow
def test_a_matrix_keeps_its_failures_and_reports_bounded_however_big_its_failing_cases(
    tmp_path: Path,
) -> None:
    """The matrix grades through run_check too: its failures/CLIENT/VOCABULARY/ and the
    reports it writes (matrix.json holds every cell's whole report) stay under the caps
    a run's do, with the line-limit client failing on 64 KiB to 1 MiB lines."""
    (tmp_path / "matrix.toml").write_text(
        "[matrix]\nexamples = 25\njobs = 2\n\n"
        f'[[client]]\nname = "line-limit"\ncommand = {json.dumps(list(LINE_LIMIT))}\n'
        'mode = "exit"\n'
    )
    graded = kit("matrix", "matrix.toml", "--out", "out", cwd=tmp_path)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    out = tmp_path / "out"
    for name in ("matrix.json", "matrix.md", "matrix.html"):
        assert (out / name).stat().st_size <= REPORT_CAP, name
    assert _folder_bytes(out / "failures") <= FAILURES_CAP
    (cell,) = json.loads((out / "matrix.json").read_text())["cells"]
    (check,) = [c for c in cell["report"]["checks"] if c["id"] == "R1.long-lines"]
    first = check["failures"][0]
    assert hashlib.sha256((tmp_path / first["saved"]).read_bytes()).hexdigest() == first["sha256"]
    big = [f for f in check["failures"][1:] if f["source"] == "generated"]
    assert big and all(f["not_saved"] and f["replay"] == first["replay"] for f in big), big


def test_the_pytest_plugin_keeps_its_failures_folder_bounded(pytester: pytest.Pytester) -> None:
    """The plugin's check items grade through run_check, saving under the rootdir's
    .stella-conform/failures: the smallest generated failing case whole, no other case of
    the line-limit client's (each over 256 KiB) beside it, the failure's text bounded."""
    result = pytester.runpytest_inprocess(
        "--stella-client", shlex.join(LINE_LIMIT), "--stella-mode", "exit",
        "--stella-examples", "25", "-k", "R1.long-lines", "-p", "no:cacheprovider",
        "-p", "no:randomly",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    folder = pytester.path / ".stella-conform" / "failures"
    assert _folder_bytes(folder) <= FAILURES_CAP
    (case,) = folder.glob("R1.long-lines-*.jsonl")  # the smallest, whole
    text = result.stdout.str()
    assert f"saved:    {case.relative_to(pytester.path)}" in text, text[-3000:]
    assert ", not saved (generated, mutations: " in text
    assert len(text.encode()) <= REPORT_CAP


# ---------------------------------------------------------------- words that misled


def test_an_in_process_parser_without_report_is_told_why_a_check_skips() -> None:
    def read(lines):  # type: ignore[no-untyped-def]
        for _ in lines:
            pass

    client = Client(argv=(), mode="exit", function=read)
    result = run_check(BY_ID["R1.line-by-line"], SuiteConfig(client, examples=0, database_dir=None))
    assert result.outcome == "skip" and result.message == IN_PROCESS_SKIP
    assert "exit mode" not in result.message and "report argument" in result.message


def test_an_envelope_replay_promises_no_marks_and_lists_only_summary_fields(tmp_path: Path) -> None:
    out = kit(
        "replay", "fixture:envelopes/raw_unknown_keys", "--check", "E.unknown-keys-ignored",
        "--mode", "report", "--", PY, str(ADAPTERS / "python" / "envelope_client.py"),
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "▶" not in out.stdout and re.search(r"\ndocument \(\d+ bytes\):\n", out.stdout)
    # the oracle's own notes (why it would reject, which shape) are no summary field
    assert "\n  reason:" not in out.stdout and "\n  shape:" not in out.stdout
    assert '\n  status:        "completed" (both)\n' in out.stdout


def test_an_exit_mode_replay_compares_the_verdict_alone(tmp_path: Path) -> None:
    out = kit(
        "replay", "fixture:bad_body_enum", "--check", "R4.bad-body-rejected", "--mode", "exit",
        "--", PY, str(ADAPTERS / "python" / "reference_client.py"), cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "did not report" not in out.stdout
    reading = out.stdout.split("field by field (expected against the client's):\n")[1]
    assert reading.startswith('  verdict: "reject" (both)\n  (in exit mode the exit status')


@pytest.mark.slow
def test_fuzz_without_a_database_says_a_deterministic_failure_came_back(tmp_path: Path) -> None:
    """The deep client's bug is not in the fixtures (a default run on seed 2 passes), so only
    the fuzzed case shows it; without a database the kit replays that case itself."""
    report = tmp_path / "r.json"
    out = kit(
        "fuzz", "--for", "150s", "--seed", "2", "--only", "R5.*", "--stop-on-first",
        "--no-database", "--json", str(report), "--",
        PY, str(ADAPTERS / "deep" / "extra_fields_on_failed_tool.py"), cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    (check,) = json.loads(report.read_text())["checks"]
    assert check["message"].startswith("found while fuzzing, and again when replayed: ")
    assert "not when replayed" not in out.stdout


def test_the_client_s_own_words_mark_no_line_of_the_stream() -> None:
    """``line 1 column 2`` in a JSON parser's reason is not the stream's line 1."""
    from stella_conform.conformance.checks import GradedCase
    from stella_conform.conformance.clients.runner import Observation
    from stella_conform.conformance.report.excerpt import decisive_lines

    case = GradedCase("c", b'{"type":"turn_complete","model":"m","cost_usd":0}\n{', "fixture")
    obs = Observation(verdict="reject", detail="corrupt: Expecting x: line 1 column 2 (char 1)")
    obs.summary = {"kind": "summary", "verdict": "reject", "rejected_line": 2}
    assert decisive_lines(case, obs, f"expected accept; client: {obs.describe()}") == (2,)


# ------------------------------------------- fuzz's own replay of what it found (no database)

#: A persistent-mode client that fails every case while ``flag`` exists (the fuzzing) and
#: reads like the reference client once it is gone (the final pass); it logs each case it
#: is given as ``PID N`` (its Nth case).
WHILE_FLAGGED = """\
import os, sys
sys.path.insert(0, {adapters!r})
from stella_reader import Adapter, main


class WhileFlagged(Adapter):
    served = 0

    def read(self, stream, emit):
        WhileFlagged.served += 1
        with open({log!r}, "a") as fh:
            fh.write(f"{{os.getpid()}} {{WhileFlagged.served}}\\n")
        if os.path.exists({flag!r}):
            raise RuntimeError("the flag is up")
        return super().read(stream, emit)


main(WhileFlagged)
"""


def _fuzz_while_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: float, *, use_up_budget: bool
) -> tuple[CheckResult, list[tuple[str, int]], int]:
    """Fuzz ``R1.valid-runs-accepted`` (no database) with the client failing every case,
    then let the final pass see it conform; ``use_up_budget``: the final pass grades the
    check in full just as the budget runs out.  The result, every case the client was
    given (pid, its Nth), and how many of them the final pass had given it."""
    from stella_conform.conformance import fuzz
    from stella_conform.conformance.fuzz import final
    from stella_conform.conformance.fuzz.feedback import Blind

    log, flag = tmp_path / "cases.log", tmp_path / "flag"
    flag.touch()
    script = tmp_path / "while_flagged.py"
    script.write_text(
        WHILE_FLAGGED.format(adapters=str(ADAPTERS / "python"), log=str(log), flag=str(flag))
    )
    graded = []
    real_run_check = final.run_check

    def final_pass(check: Any, config: SuiteConfig) -> CheckResult:
        flag.unlink(missing_ok=True)  # fuzzing is over: the client conforms from here
        result = real_run_check(check, config)
        if use_up_budget:
            assert config.deadline is not None
            while time.monotonic() <= config.deadline:
                time.sleep(0.05)
        graded.append(len(log.read_text().splitlines()))
        return result

    monkeypatch.setattr(final, "run_check", final_pass)
    client = Client(argv=(PY, str(script)), mode="persistent", timeout=10)
    suite = SuiteConfig(client, examples=1, database_dir=None, failures_dir=tmp_path / "failures")
    config = fuzz.FuzzConfig(suite, seconds, max_cases=None if use_up_budget else 20)
    outcome = fuzz.Fuzzer([BY_ID["R1.valid-runs-accepted"]], config, Blind()).run()
    assert outcome.failures, "the fuzzing found nothing"
    (result,) = outcome.results
    cases = [(pid, int(n)) for pid, n in (line.split() for line in log.read_text().splitlines())]
    return result, cases, graded[0]


def test_fuzz_replays_nothing_once_its_for_has_run_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a database fuzz replays what it found itself, after the final pass; with the
    --for spent it gives the client no more cases (each could cost a whole --timeout), and
    says why the failure was not replayed."""
    result, cases, final = _fuzz_while_flagged(tmp_path, monkeypatch, 3.0, use_up_budget=True)
    assert len(cases) == final, "a case was run after the --for ran out"
    assert result.outcome == "crash", result.message  # what the fuzzing saw it do
    assert "not replayed: the --for of 3 s ran out" in result.message, result.message
    assert "not when replayed" not in result.message


def test_fuzz_replays_what_it_found_on_a_client_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'Again when replayed … on its own': a persistent client's replayed case is the first
    case of a process of its own, not one more on the final pass's shared session."""
    result, cases, final = _fuzz_while_flagged(
        tmp_path, monkeypatch, float("inf"), use_up_budget=False
    )
    replayed = cases[final:]
    assert replayed, "nothing was replayed"
    assert all(n == 1 for _, n in replayed), replayed
    final_pids = {pid for pid, _ in cases[:final]}
    assert not final_pids & {pid for pid, _ in replayed}, cases
    # the client conforms now: the failure did not come back
    assert result.message.startswith("failed while fuzzing but not when replayed"), result.message


def test_one_bug_rejecting_in_its_own_words_is_one_fuzz_finding(tmp_path: Path) -> None:
    """The adapter's reason names each case's particulars ("unknown type text_v2", "unknown
    type Text"): one bug still, found once, and --max-failures counts bugs, not its cases."""
    client = template(tmp_path, REJECTS_UNKNOWN)
    report = tmp_path / "r.json"
    out = kit(
        "fuzz", "--mode", "report", "--max-cases", "60", "--max-failures", "2",
        "--only", "R3.unknown-type-inert", "--no-database", "--no-feedback",
        "--json", str(report), "--", *client, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(report.read_text())
    said = {f["message"] for f in doc["fuzz"]["failures"]}
    assert len(said) == 1 and "(unknown type " in said.pop(), doc["fuzz"]["failures"]
    assert doc["fuzz"]["stopped"] == "60 cases", doc["fuzz"]["stopped"]
    assert " for 60 cases; " in out.stderr and "Ctrl-C" not in out.stderr, out.stderr
    assert out.stdout.count("found after ") == 1, out.stdout


def test_a_rejection_is_signed_without_the_client_s_reason() -> None:
    """Two cases the client rejects for one bug, in words naming each case's unknown type:
    one reaction (the fuzzer's sign of a bug), the words still in the message shown."""
    from stella_conform.conformance.checks import Context, GradedCase, judge
    from stella_conform.conformance.clients.runner import Observation
    from stella_conform.conformance.fuzz import reaction
    from stella_conform.oracle.corpus import bundled_fixtures_dir

    check = BY_ID["R3.unknown-type-inert"]
    run = (bundled_fixtures_dir() / "minimal_run.jsonl").read_bytes()
    signed = set()
    for tag in ("text_v2", "Text"):
        case = GradedCase("c", f'{{"type":"{tag}"}}\n'.encode() + run, "generated")
        obs = Observation(verdict="reject", detail=f"unknown type {tag}")
        obs.summary = {"kind": "summary", "verdict": "reject", "rejected_line": 1}
        j = judge(check, case, obs, Context())
        assert j.verdict == "fail" and j.message.endswith(f"(unknown type {tag})"), j.message
        signed.add(reaction(check, j, obs))
    assert len(signed) == 1, signed


def test_every_judge_signs_a_wrong_verdict_without_the_client_s_words() -> None:
    """Every judge (JUDGES), on each of its checks' first fixture: an observation with the
    wrong verdict, given in two wordings, is one reaction, and a fail quoting the client's
    words carries a signature without them.  (A judge building its message by hand would
    make fuzz split one bug by the client's wording; a judge doing so is red here.)  A
    judge no check uses yet is tried on a reader check's fixture."""
    from dataclasses import replace

    from stella_conform.conformance.checks import CATALOGUE, JUDGES, Context, judge
    from stella_conform.conformance.fuzz import reaction
    from stella_conform.conformance.suite import fixture_case
    from stella_conform.oracle.corpus import bundled_fixtures_dir
    from stella_conform.schemas.vocabulary import Vocabulary

    vocab, fixtures = Vocabulary.default(), bundled_fixtures_dir()
    stand_in = BY_ID["R1.valid-runs-accepted"]
    for name in JUDGES:
        checks = [c for c in CATALOGUE if c.judge == name and c.fixtures_for(False)]
        for check in checks or [replace(stand_in, judge=name)]:
            case = fixture_case(check, check.fixtures_for(False)[0], vocab, fixtures)
            for verdict in ("accept", "reject"):
                signed = set()
                for said in ("OWN-WORDS-ONE", "OWN-WORDS-TWO"):
                    obs = Observation(verdict=verdict, detail=said)
                    obs.summary = {"kind": "summary", "verdict": verdict}
                    obs.summary["rejected_line"] = 1 if verdict == "reject" else None
                    j = judge(check, case, obs, Context())
                    signed.add(reaction(check, j, obs))
                    if j.verdict == "fail" and said in j.message:
                        assert j.signature and said not in j.signature, (check.id, j)
                assert len(signed) == 1, (name, check.id, verdict, signed)
