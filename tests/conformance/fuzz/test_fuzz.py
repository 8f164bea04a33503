"""`stella-conform fuzz`: finds, stops, reports, and leaves a corpus `run` replays."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, KIT, PY_REFERENCE, kit
from database_artifact import as_downloaded_artifact
from hypothesis import HealthCheck, settings

from stella_conform.conformance.checks import BY_ID, CATALOGUE, Judgment
from stella_conform.conformance.clients.process import ClientProcess
from stella_conform.conformance.clients.runner import (
    Client,
    Observation,
    PersistentSession,
    run_once,
)
from stella_conform.conformance.fuzz import FuzzConfig, Fuzzer, parse_duration, reaction
from stella_conform.conformance.fuzz.feedback import (
    Blind,
    NodeCoverage,
    PythonCoverage,
    client_language,
    feedback_for,
    traced_client,
)
from stella_conform.conformance.suite import SuiteConfig

pytest_plugins = ["pytester"]
BROKEN_TORN = (sys.executable, str(ADAPTERS / "broken" / "fails_on_torn_final_line.py"))
DEEP_R5 = (sys.executable, str(ADAPTERS / "deep" / "extra_fields_on_failed_tool.py"))
MINIMAL = (ADAPTERS.parent / "fixtures" / "minimal_run.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("5m", 300), ("1h30m", 5400), ("0.5s", 0.5)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "m5", "0", "1h 30m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_one_bug_is_one_reaction_whatever_the_case() -> None:
    check = BY_ID["R6.torn-final-line"]
    a, b = Observation(verdict="reject"), Observation(verdict="reject")
    ja = Judgment("fail", "expected accept; client: reject at line 2")
    jb = Judgment("fail", "expected accept; client: reject at line 17")
    assert reaction(check, ja, a) == reaction(check, jb, b)
    crash = Observation(status="crash", stderr_tail="Traceback\nKeyError: 'call_7'\n")
    other = Observation(status="crash", stderr_tail="Traceback\nTypeError: 'NoneType'\n")
    j = Judgment("error", "client crash")
    assert reaction(check, j, crash) != reaction(check, j, other)


def test_client_language_from_command_or_shebang(tmp_path: Path) -> None:
    assert client_language(["python3", "x.py"]) == "python"
    assert client_language(["node", "x.js"]) == "node"
    assert client_language([str(ADAPTERS / "deep" / "legacy_text_after_failed_tool.js")]) == "node"
    script = tmp_path / "client"
    script.write_text("#!/usr/bin/env python3\n")
    assert client_language([str(script)]) == "python"
    assert client_language(["sh", str(ADAPTERS / "shell" / "jq_client.sh")]) is None
    assert isinstance(feedback_for(["python3", "x.py"], wanted=False), Blind)


def test_python_client_reports_coverage_through_its_environment() -> None:
    feedback = PythonCoverage()
    try:
        client = Client(argv=PY_REFERENCE, mode="exit", env=feedback.environment())
        feedback.start_case()
        obs = run_once(client, MINIMAL)
        first = feedback.end_case()
        feedback.start_case()
        run_once(client, MINIMAL + b'{"type":"x_new"}\n')
        second = feedback.end_case()
    finally:
        feedback.close()
    assert obs.verdict == "accept"
    assert first and feedback.arrived
    assert second - first  # an unknown event runs code the minimal run does not


def test_a_python_client_s_coverage_does_not_depend_on_where_it_is(tmp_path: Path) -> None:
    """The same client and case give the same edges from two checkouts (its files named
    from its working folder), so a --seed/--max-cases session is the same in any folder:
    the doc's fuzz sessions ran in random scratch folders and found other cases."""
    import shutil

    features = []
    for where in ("one", "another/deeper"):
        folder = tmp_path / where
        shutil.copytree(ADAPTERS / "python", folder / "adapters" / "python")
        feedback = PythonCoverage()
        try:
            argv = (sys.executable, "adapters/python/reference_client.py")
            client = Client(argv=argv, mode="exit", env=feedback.environment(), cwd=str(folder))
            feedback.start_case()
            assert run_once(client, MINIMAL + b'{"type":"x_new"}\n').verdict == "accept"
            features.append(feedback.end_case())
        finally:
            feedback.close()
    assert features[0] and features[0] == features[1]


AFTER_ANSWER = """
import sys, time
sys.path.insert(0, {adapters!r})
from stella_reader import Adapter, main

class AfterAnswer(Adapter):
    drop_unterminated_last_line = {torn!r}

    def emit(self, message):
        super().emit(message)
        if message.get("kind") == "summary":
            time.sleep({pause!r})  # the kit has the answer meanwhile
            for _ in range({loops!r} or len(repr(message)) % 150):  # this case's lines still
                pass

main(AfterAnswer)
"""


def _after_answer(folder: Path, pause: float, loops: int, torn: bool = False) -> tuple[str, ...]:
    """A persistent Python client that runs lines of its case after writing its answer:
    ``loops`` times round a loop (0: as many as its summary's length modulo 150), after a
    ``pause``; ``torn``: with the torn-final-line bug."""
    script = folder / "after_answer.py"
    adapters = str(ADAPTERS / "python")
    text = AFTER_ANSWER.format(adapters=adapters, pause=pause, loops=loops, torn=torn)
    script.write_text(text)
    return (sys.executable, str(script))


def test_a_live_python_client_s_lines_after_its_answer_count_for_that_case(
    tmp_path: Path,
) -> None:
    """The map is read once the client waits for its next case: the lines it ran after
    writing its answer (here, a pause and 300 turns of a loop: the hit class 128+, which
    the case's own code never reaches) are in the case's coverage, not lost or lent to
    the next case as the two processes happen to be scheduled."""
    from stella_conform.conformance.clients.runner import PersistentSession

    def heavy_edges(argv: tuple[str, ...]) -> int:
        feedback = PythonCoverage()
        client = Client(argv=argv, mode="persistent", env=feedback.environment())
        try:
            with PersistentSession(client) as session:
                feedback.start_case()
                assert session.run(MINIMAL).verdict == "accept"
                assert session.proc is not None
                features = feedback.end_case(session.proc)
        finally:
            feedback.close()
        assert features
        return sum(1 for f in features if f % 8 == 7)

    assert heavy_edges(_after_answer(tmp_path, 0.0, 1)) == 0  # the case's own code
    assert heavy_edges(_after_answer(tmp_path, 0.3, 300)) >= 2  # the loop's two edges
    # started by a shell that waits for it: the reader is the shell's child
    wrapped = (
        "/bin/sh",
        "-c",
        f'"{sys.executable}" "$0"; exit $?',
        str(tmp_path / "after_answer.py"),
    )
    assert heavy_edges(wrapped) >= 2


@pytest.mark.slow
def test_a_seeded_session_with_coverage_is_the_same_every_time(tmp_path: Path) -> None:
    """``fuzz --seed N --max-cases M`` on a live Python client runs the same cases, keeps
    the same inputs and finds the same bug at the same case, however the kit and the
    client are scheduled: two sessions at once, on a client whose lines after each answer
    (as many as the answer is long) raced the kit's read of its coverage map."""
    client = _after_answer(tmp_path, 0.0, 0, torn=True)
    sessions = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        args = ["fuzz", "--for", "1h", "--max-cases", "300", "--seed", "3", "--no-database"]
        args += ["--only", "R6.*", "--only", "R1.*", "--max-shrinks", "0", "--mode"]
        args += ["persistent", "--json", "r.json", "--", *client]
        sessions.append((folder, subprocess.Popen([str(KIT), *args], cwd=folder)))
    fuzzed = []
    for folder, proc in sessions:
        assert proc.wait(timeout=600) == 1
        doc = json.loads((folder / "r.json").read_text())["fuzz"]
        assert doc["stopped"] == "300 cases"
        for timed in ("seconds", "cases_per_second", "time_to_first_failure"):
            doc.pop(timed)
        for found in doc["failures"]:
            found.pop("seconds")
        fuzzed.append(doc)
    assert fuzzed[0]["failures"]
    assert fuzzed[0] == fuzzed[1]


SET_ORDER = """
import sys
NAMES = {names!r}
sys.stdin.buffer.read()
# the order of a set of strings is Python's per-process salt's: three loops (three sets
# of edges) that stop where the name they look for happens to be
for name in NAMES:
    if name == "name1":
        break
for name in NAMES:
    if name == "name5":
        break
for name in NAMES:
    if name == "name9":
        break
"""


def test_a_seeded_session_s_python_client_has_one_hash_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A traced client is started with ``PYTHONHASHSEED`` from the fuzz seed (unless the
    user set one), so a loop over a set of strings runs the same lines in every process
    the session starts: three processes, one coverage."""
    from stella_conform.conformance.fuzz.feedback import with_environment

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    script = tmp_path / "set_order.py"
    script.write_text(SET_ORDER.format(names={f"name{i}" for i in range(12)}))
    features = []
    for _ in range(3):
        feedback = PythonCoverage()
        try:
            env = with_environment({}, feedback, seed=7)
            client = Client(argv=(sys.executable, str(script)), mode="exit", env=env)
            feedback.start_case()
            assert run_once(client, MINIMAL).verdict == "accept"
            features.append(feedback.end_case())
        finally:
            feedback.close()
    assert features[0] and features[0] == features[1] == features[2]


#: A client that rejects every stream under one string-hash salt in 64: a stand-in for a
#: reader whose set of strings, iterated in hash order, decides what it does (argument: the
#: ``hash("stella-text") % 64`` it fails on).
HASH_ORDER = """
import sys
sys.stdin.buffer.read()
sys.exit(1 if hash("stella-text") % 64 == int(sys.argv[1]) else 0)
"""


def _hash_mod_64(salt: int) -> int:
    env = {**os.environ, "PYTHONHASHSEED": str(salt)}
    code = 'print(hash("stella-text") % 64)'
    return int(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True).stdout)  # fmt: skip


@pytest.mark.slow
def test_a_hash_order_failure_replays_with_the_session_s_hash_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session gives its traced client ``PYTHONHASHSEED`` = the seed; its final pass and
    its replay line carry it too: a failure that depends on the hash order is found again
    in the final pass and fails again when the printed line is run, from a copy of the
    failures folder, in a shell whose own hash seed would hide it.  Without it the final
    pass would say "not when replayed" and the line pass under another salt."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    script = tmp_path / "hash_order.py"
    script.write_text(HASH_ORDER)
    bad = _hash_mod_64(3)  # fuzz --seed 3: the session's salt is 3
    other = next(salt for salt in range(100, 300) if _hash_mod_64(salt) != bad)
    session = tmp_path / "session"
    session.mkdir()
    done = kit(
        "fuzz", "--mode", "exit", "--only", "R1.valid-runs-accepted", "--max-cases", "5",
        "--seed", "3", "--no-database", "--json", "r.json", "--",
        sys.executable, str(script), str(bad), cwd=session,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    [check] = json.loads((session / "r.json").read_text())["checks"]
    # the final pass fails it too (it passed under another salt: "not when replayed")
    assert check["outcome"] == "fail" and "not when replayed" not in check["message"], check
    lines = [f["replay"] for f in check["failures"]]
    assert lines and all(line.startswith("PYTHONHASHSEED=3 ") for line in lines), lines
    [line] = [line for line in lines if ".stella-conform/failures/" in line]  # a saved case
    copy = tmp_path / "copy"
    shutil.copytree(session / ".stella-conform", copy / ".stella-conform")
    shell_env = {**os.environ, "PYTHONHASHSEED": str(other)}  # a salt the client passes
    for _ in range(3):
        again = subprocess.run(["sh", "-c", line], cwd=copy, env=shell_env,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        assert again.returncode == 1, (line, again.stdout, again.stderr)
        assert re.search(r"client: +reject", again.stdout), again.stdout


def test_node_client_reports_v8_coverage_per_case() -> None:
    feedback = NodeCoverage()
    try:
        client = Client(
            argv=("node", str(ADAPTERS / "node" / "reference_client.js")),
            mode="persistent",
            env=feedback.environment(),
        )
        feedback.start_case()
        obs = run_once(client, MINIMAL)
        features = feedback.end_case()
    finally:
        feedback.close()
    assert obs.verdict == "accept"
    assert features and feedback.arrived


#: A client whose reader calls a small function fifty times a line: once V8's optimizing
#: compiler has its caller, it inlines the function and its blocks stop being counted.
HOT_NODE_CLIENT = """
"use strict";
const { Reader, main } = require(%s);
const small = (v) => typeof v === "number" && v >= 0;
class Counting extends Reader {
  push(line, buf) {
    let n = 0;
    for (let i = 0; i < 50; i++) if (small(i)) n += 1;
    return n >= 0 ? super.push(line, buf) : [];
  }
}
main(Counting);
"""


def test_a_node_client_s_case_reaches_the_same_blocks_however_often_it_runs(
    tmp_path: Path,
) -> None:
    """One case sent again and again to one persistent Node.js client reaches the same
    features every time: the hook keeps V8's optimizing compilers off.  With TurboFan on,
    the client's hot reader is optimized after about thirty cases, the small function it
    inlines stops being counted, and the same case has other features from then on (from
    a case that depends on when V8's background compiler finishes)."""
    script = tmp_path / "hot_client.js"
    script.write_text(HOT_NODE_CLIENT % json.dumps(str(ADAPTERS / "node" / "reference_client.js")))
    feedback = NodeCoverage()
    reached = []
    try:
        client = Client(argv=("node", str(script)), mode="persistent", env=feedback.environment())
        with PersistentSession(client) as session:
            for _ in range(80):
                feedback.start_case()
                assert session.run(MINIMAL).verdict == "accept"
                reached.append(feedback.end_case(session.proc))
    finally:
        feedback.close()
    # the first case has the client's start in it, the second the rest of the first's loop
    assert reached[2] and all(features == reached[2] for features in reached[2:])


class _EachCase(NodeCoverage):
    """Node.js coverage that keeps what each case reached, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.reached: list[frozenset[int]] = []

    def end_case(self, client: ClientProcess | None = None) -> frozenset[int]:
        features = super().end_case(client)
        self.reached.append(features)
        return features


@pytest.mark.slow
def test_a_seeded_session_on_a_node_client_is_the_same_every_time(tmp_path: Path) -> None:
    """Two fuzz sessions of one seed on the Node.js deep client reach the same features
    case by case, keep the same corpus and see the same answers.  With V8's optimizing
    compiler on, two such sessions first reached other features after about a hundred
    cases (the reference client's ts check: counted until case 93 in one session, 270 in
    another), as its background thread happened to finish."""
    sessions = []
    for name in ("one", "two"):
        argv = ("node", str(ADAPTERS / "deep" / "legacy_text_after_failed_tool.js"))
        client = Client(argv=argv, mode="persistent", cwd=str(tmp_path))
        suite = SuiteConfig(
            client,
            examples=1,
            seed=3,
            database_dir=None,
            failures_dir=tmp_path / name,
            shrink_budget=0,
        )
        config = FuzzConfig(suite, 600.0, max_cases=250)
        feedback = _EachCase()
        try:
            checks = [c for c in CATALOGUE if c.id.startswith("R4.")]
            fuzzer = Fuzzer(checks, config, feedback)
            outcome = fuzzer.run()
        finally:
            feedback.close()
        assert feedback.arrived and outcome.cases == 250
        corpus = [[entry.choices for entry in arm.corpus] for arm in fuzzer.arms]
        answers = [(arm.check.id, arm.cases, arm.novel) for arm in fuzzer.arms]
        sessions.append((feedback.reached, corpus, answers, sorted(fuzzer.seen)))
    assert sessions[0][0][0] and sessions[0] == sessions[1]


def test_fuzz_scales_a_node_client_s_timeouts_and_says_why() -> None:
    """The default timeout and a user's alike, per case and per line; every timeout's
    message names the reason."""
    for asked in (10.0, 2.5):
        client = Client(argv=("node", "x.js"), timeout=asked, line_timeout=asked / 2)
        traced = traced_client(client, NodeCoverage())
        factor = NodeCoverage.slowdown
        assert factor > 1
        assert (traced.timeout, traced.line_timeout) == (asked * factor, asked / 2 * factor)
        assert traced.timeout_text == (
            f"{asked * factor:g} s: {asked:g} s × {factor:g}, "
            "Node.js coverage runs without V8's optimizer"
        )
        assert traced_client(client, Blind()).timeout == asked  # a blind client's are kept
        assert traced_client(client, Blind()).timeout_text == f"{asked:g} s"


#: A client doing a fixed amount of its own JS work for each case (a byte-by-byte scan,
#: the kind of hot loop a hand-written reader runs), then accepting its stream.
BUSY_NODE_CLIENT = """
"use strict";
const line = JSON.stringify({ kind: "event", text: "hello world ".repeat(20), n: [1, 2] });
let depth = 0;
for (let k = 0; k < %d; k++) {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
  }
}
process.stdin.resume();
process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(depth === 0 ? 0 : 3));
"""


def _seconds_of(argv: list[str], env: dict[str, str]) -> float:
    best = float("inf")
    for _ in range(2):
        began = time.monotonic()
        subprocess.run(argv, input=b"{}\n", env=env, capture_output=True, timeout=300, check=True)
        best = min(best, time.monotonic() - began)
    return best


@pytest.mark.slow
def test_fuzz_does_not_time_out_a_node_client_its_coverage_slows_down(tmp_path: Path) -> None:
    """A Node.js client whose case takes a fixed amount of JS work, with a ``--timeout``
    between its time without the coverage hook and its time with it (calibrated here
    against the same client run both ways, no constant), passes fuzz: fuzz scales a
    Node.js client's timeouts by the hook's slowdown, or each case would time out (ERROR,
    exit 1)."""
    script = tmp_path / "busy_client.js"
    script.write_text(BUSY_NODE_CLIENT % 30000)
    plain = _seconds_of(["node", str(script)], dict(os.environ))
    feedback = NodeCoverage()
    try:
        hooked = _seconds_of(["node", str(script)], {**os.environ, **feedback.environment()})
    finally:
        feedback.close()
    if hooked < 2.5 * plain:
        pytest.skip(f"the hook does not slow this node down enough ({plain:.2f} -> {hooked:.2f} s)")
    timeout = round((plain * hooked) ** 0.5, 2)  # as far from the one as from the other
    report = tmp_path / "r.json"
    out = kit(
        "fuzz", "--mode", "exit", "--only", "R1.valid-runs-accepted", "--max-cases", "3",
        "--no-database", "--timeout", f"{timeout:g}", "--json", str(report),
        "--", "node", str(script), cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, (plain, hooked, out.stdout, out.stderr)
    factor = NodeCoverage.slowdown
    assert f"case timeout {timeout * factor:g} s: {timeout:g} s × {factor:g}," in out.stderr
    doc = json.loads(report.read_text())
    assert "without V8's optimizer" in doc["fuzz"]["feedback"], doc["fuzz"]
    assert doc["fuzz"]["cases"] >= 1


@pytest.mark.slow
def test_a_short_fuzz_finds_a_shallow_broken_client(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    out = kit(
        "fuzz", "--for", "90s", "--only", "R6.torn-final-line", "--stop-on-first",
        "--json", str(report), "--", *BROKEN_TORN, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(report.read_text())
    assert doc["fuzz"]["stopped"] == "every check failed"
    assert doc["fuzz"]["feedback"].startswith("python (line edges")
    found = doc["fuzz"]["failures"][0]
    assert found["check"] == "R6.torn-final-line" and found["replay"]
    check = next(c for c in doc["checks"] if c["id"] == "R6.torn-final-line")
    assert check["outcome"] == "fail"
    saved = tmp_path / found["saved"]
    replay = kit("replay", str(saved), "--mode", "persistent", "--", *BROKEN_TORN, cwd=tmp_path)
    assert replay.returncode == 1 and "expected: accept" in replay.stdout
    assert "found after" in out.stdout and "fuzzed" in out.stdout


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_with_the_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [str(KIT), "fuzz", "-v", "--only", "R6.*", "--json", str(report), "--", *PY_REFERENCE],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    for line in proc.stderr:  # wait until cases are running
        if " cases (" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, stdout
    doc = json.loads(report.read_text())
    assert doc["fuzz"]["stopped"] == "interrupted"
    assert doc["fuzz"]["cases"] > 0
    ids = {c["id"] for c in doc["checks"]}
    assert "R6.torn-final-line" in ids and all(i.startswith("R6.") for i in ids)
    assert "stopped: interrupted" in stdout
    assert not os.listdir(scratch)  # the coverage map and the clients' files are gone


@pytest.mark.slow
def test_what_fuzz_found_is_what_the_next_run_replays(tmp_path: Path) -> None:
    """A deep bug a one-example run misses, until fuzz has put it in the database.

    ``--max-shrinks 0`` on the fuzz: its closing report replays the failure without
    shrinking it, so the database holds the very case fuzz found, as found (``.secondary``).
    """
    only = ("--only", "R5.unknown-fields-ignored")
    run_args = ("run", "--mode", "persistent", *only, "--examples", "1", "--max-shrinks", "0")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert kit(*run_args, "--", *DEEP_R5, cwd=fresh).returncode == 0
    fuzzed = tmp_path / "fuzzed"
    fuzzed.mkdir()
    out = kit(
        "fuzz", "--for", "150s", *only, "--stop-on-first", "--max-shrinks", "0",
        "--", *DEEP_R5, cwd=fuzzed,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    replayed = kit(*run_args, "--", *DEEP_R5, cwd=fuzzed)
    assert replayed.returncode == 1, replayed.stdout
    assert "reasoning lacks the fields of the failed call" in replayed.stdout
    # a pull-request job: no local database, the nightly's uploaded as an artifact
    pull_request = tmp_path / "pull-request"
    pull_request.mkdir()
    as_downloaded_artifact(fuzzed / ".stella-conform" / "hypothesis", pull_request)
    from_ci = kit(*run_args, "--github-artifact", "acme/reader", "--", *DEEP_R5, cwd=pull_request)
    assert from_ci.returncode == 1, from_ci.stdout + from_ci.stderr
    assert "reasoning lacks the fields of the failed call" in from_ci.stdout


TARGET_MODULE = '''
import json

from hypothesis import Phase, settings

from stella_conform.pytest_plugin import fuzz_targets

# few examples, no shrinking: this proves the wiring, not the search
settings.register_profile("wiring", max_examples=10, phases=[Phase.generate])
settings.load_profile("wiring")

KNOWN = {"stage", "text", "text_delta", "reasoning", "tool_start", "tool_result",
         "step_usage", "turn_complete", "run_complete", "error", "budget_tick", "file_change"}


def read(lines):
    """Breaks rule 3: an unknown type fails the stream."""
    for raw in lines:
        if not raw.strip():
            continue
        event = json.loads(raw)
        if not isinstance(event, dict):
            raise ValueError("not an object")
        if event.get("type") not in KNOWN:
            raise ValueError(f"unknown type {event.get('type')!r}")


test_stella_fuzz = fuzz_targets(read, only=["R1.valid-runs-accepted", "R3.unknown-type-inert"])
'''


@pytest.mark.slow
def test_fuzz_targets_are_what_hypofuzz_collects(pytester: pytest.Pytester) -> None:
    """HypoFuzz takes pytest.Function items that are @given tests without fixtures."""
    pytester.makepyfile(test_target=TARGET_MODULE)
    # Collecting in this process imports the target module, whose load_profile("wiring")
    # (no shrink phase, 10 examples) would become every later test's default in this
    # worker: the shrink tests in test_generators.py then report unshrunk streams.
    settings.register_profile("before-fuzz-target", settings.default)
    try:
        items, _ = pytester.inline_genitems("-m", "hypothesis", "-p", "no:cacheprovider")
    finally:
        settings.load_profile("before-fuzz-target")
    assert [i.name for i in items] == [
        "test_stella_fuzz[R1.valid-runs-accepted]",
        "test_stella_fuzz[R3.unknown-type-inert]",
    ]
    for item in items:
        assert isinstance(item, pytest.Function)
        assert item.obj.hypothesis.inner_test is not None  # a @given test
        assert set(item.fixturenames) == set(item.callspec.params)  # no fixtures
        # HypoFuzz 25.11 refuses a test that suppresses this health check ("nested_given")
        suppressed = item.obj._hypothesis_internal_use_settings.suppress_health_check
        assert HealthCheck.nested_given not in suppressed
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert "R3.unknown-type-inert (skips an unrecognized type" in result.stdout.str()


SOLIDUS_TARGET_MODULE = r'''
import json, re

from hypothesis import Phase, settings

from stella_conform.pytest_plugin import fuzz_targets

settings.register_profile("wiring", max_examples=10, phases=[Phase.generate], derandomize=True)
settings.load_profile("wiring")


def read(lines):
    """A hand-written lexer without the solidus escape."""
    for raw in lines:
        if re.search(rb'(?<!\\)(?:\\\\)*\\/', raw):
            raise ValueError("unknown escape")
        if raw.strip():
            json.loads(raw)


test_stella_fuzz = fuzz_targets(read, only=["R1.valid-runs-accepted"])
'''


@pytest.mark.slow
def test_a_fuzz_target_grades_its_check_s_strata(pytester: pytest.Pytester) -> None:
    """A plugin fuzz run reaches at least what ``run`` reaches: the check's strata too,
    graded as ``run`` grades them (one mechanism, the shrink included).  A
    lexer without ``\\/`` (which only a stratum spells on this seed) fails the target with
    ``run``'s report: the case shrunk to the two lines that spell it, a replay line; without
    the strata its ten examples pass."""
    pytester.makepyfile(test_target=SOLIDUS_TARGET_MODULE)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "R1.valid-runs-accepted (accepts every valid run): FAIL" in out, out
    assert "(and 1 more stratum alike)" in out and "replay:" in out, out
    shown = out.rsplit("stream:", 1)[1].split("saved:", 1)[0]
    assert shown.count("\\/") == 2 and '"text"' not in shown, shown  # shrunk: 2 lines


def test_the_rule_3_deep_bug_follows_a_line_without_a_string_type_too() -> None:
    """``fuzz --no-feedback`` reports the rule-3 deep client failing R3.missing-or-non-
    string-type and R3.no-loud-warning as well as R3.unknown-type-inert: the same crash (its
    look-behind left empty: ``TypeError: 'NoneType' object is not subscriptable``).  A line
    whose type is missing or not a string is an unrecognized line (rule 3's sketch:
    ``typeof event.type !== "string"`` is skipped like an unknown type), so the client's
    bug is real there too: the case fails it, a conforming client passes it, and without
    that line the client passes."""
    from stella_conform.conformance.checks import Context, GradedCase, judge
    from stella_conform.conformance.suite import CaseRunner, SuiteConfig

    def line(event: object) -> bytes:
        return json.dumps(event).encode() + b"\n"

    turn = [
        {"type": "text", "text": "first turn"},
        {"type": "turn_complete", "model": "m", "cost_usd": 0.1},
    ]
    skipped = [{"type": 5, "text": "x"}, {"text": "no type"}]  # not a string, none at all
    after = [
        {"type": "tool_start", "call": {"call_id": "c1", "name": "bash", "input": {}}},
        {
            "type": "tool_result",
            "call_id": "c1",
            "output": {"error": {"message": "no", "class": "internal"}},
            "duration_ms": 1,
        },
        {"type": "text_delta", "delta": "retrying"},
        {"type": "text", "text": "retrying"},
        {"type": "run_complete", "model": "m", "cost_usd": 0.2},
    ]
    check = BY_ID["R3.missing-or-non-string-type"]
    deep = Client(argv=(sys.executable, str(ADAPTERS / "deep" / "retry_note_after_unknown.py")))
    reference = Client(argv=PY_REFERENCE)
    for bad in skipped:
        events = [*turn, after[0], bad, *after[1:]]
        for client, events_, verdict in (
            (deep, events, "crash"),  # the bug
            (reference, events, "pass"),  # the case is a fair one
            (deep, [e for e in events if e is not bad], "pass"),  # that line is the cause
        ):
            case = GradedCase("t", b"".join(line(e) for e in events_), "fixture")
            runner = CaseRunner(SuiteConfig(client), check)
            try:
                obs = runner.run(case)
            finally:
                runner.close()
            judgment = judge(check, case, obs, Context())
            assert judgment.verdict == verdict, (client.argv, bad, judgment.message)
            if verdict == "crash":
                assert "NoneType" in obs.stderr_tail


def _found(check: str, verdict: str, seconds: float) -> Any:
    from stella_conform.conformance.fuzz.arms import Found
    from stella_conform.conformance.suite import CaseFailure

    failure = CaseFailure(
        case=f"{verdict}-case", source="fuzzed", message=f"{verdict} message",
        expected={}, observed={}, saved=f"{verdict}.jsonl", verdict=verdict,
    )  # fmt: skip
    return Found(check, verdict, f"{verdict} message", seconds, 10, failure)


@pytest.mark.parametrize("final_pass", ["pass", "fail"])
def test_a_crash_found_while_fuzzing_is_tallied_as_crash(final_pass: str) -> None:
    """A crash outranks a wrong answer on the fuzz road too, whichever was found first and
    whatever the final pass said: the client has a case it cannot survive."""
    from types import SimpleNamespace

    from stella_conform.conformance.checks import BY_ID
    from stella_conform.conformance.fuzz.final import _merge
    from stella_conform.conformance.suite import CheckResult

    check = BY_ID["R3.unknown-type-inert"]
    result = CheckResult(check.id, check.name, check.rule, check.tier, final_pass, "final")
    if final_pass == "fail":
        result.failures.append(_found(check.id, "fail", 0.5).failure)
    wrong, died = _found(check.id, "fail", 1.0), _found(check.id, "crash", 2.0)
    arm = SimpleNamespace(cases=5, failures={"a": wrong, "b": died})
    _merge(result, arm, check)  # type: ignore[arg-type]
    assert result.outcome == "crash"
    assert "crashed while fuzzing: crash message" in result.message
    assert result.failures[0].verdict == "crash"
