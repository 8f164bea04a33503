"""Progress a CI log can show, and colour only where it belongs."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import KIT, PY_REFERENCE, kit

from stella_conform.cli.grading import use_color
from stella_conform.conformance.checks import BY_ID, select
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.report.model import Report
from stella_conform.conformance.report.progress import progress_line
from stella_conform.conformance.report.terminal import terminal_report
from stella_conform.conformance.suite import CaseFailure, CheckResult, SuiteConfig


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "no_color", "tty", "expected"),
    [
        ("auto", None, True, True),
        ("auto", None, False, False),
        ("auto", "1", True, False),
        ("auto", "", True, True),  # NO_COLOR counts only when non-empty
        ("always", "1", False, True),  # an explicit flag wins over the environment
        ("never", None, True, False),
    ],
)
def test_colour_follows_the_flag_then_no_color_then_the_terminal(
    monkeypatch: pytest.MonkeyPatch, choice: str, no_color: str | None, tty: bool, expected: bool
) -> None:
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    stream = FakeTerminal() if tty else io.StringIO()
    assert use_color(choice, stream) is expected


def _result(outcome: str, message: str, stderr: str = "") -> CheckResult:
    check = BY_ID["R3.unknown-type-inert"]
    failures = [CaseFailure("c", "fixture", message, {}, {"stderr_tail": stderr})] if stderr else []
    return CheckResult(check.id, check.name, check.rule, check.tier, outcome, message, 3, failures)


def test_colour_marks_outcomes_and_never_revives_client_escapes() -> None:
    results = [_result("pass", "3 case(s)"), _result("error", "crash \x1b[2J", "\x1b[31mboom\n")]
    report = Report(SuiteConfig(Client(argv=("x",))), results, "v")
    plain = terminal_report(report)
    assert "\x1b" not in plain
    coloured = terminal_report(report, color=True)
    assert coloured.startswith("\x1b[32mPASS\x1b[0m ")
    assert "\n\x1b[1;35mERROR\x1b[0m " in coloured  # an error is not a failure's red
    # the client's own escape sequences stay visible text, coloured or not
    assert coloured.count("\x1b[") == 4 and "\\x1b[31mboom" in coloured
    line = progress_line(2, 9, results[1], color=False)
    assert (
        line.startswith("[2/9] ERROR R3.unknown-type-inert (0.0 s): crash ") and "\x1b" not in line
    )


#: A client that answers its first run (the kit's preflight), crashes on the next three
#: (the first check stops: three cases without an answer) and then waits for the file
#: ``release`` before it crashes again: the kit cannot finish until the test releases it.
HELD = """
import os, pathlib, sys, time
counter = pathlib.Path("runs")
runs = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(runs + 1))
sys.stdin.buffer.read()
if runs == 0:
    sys.exit(0)
while runs >= 4 and not os.path.exists("release"):
    time.sleep(0.05)
sys.exit(3)
"""


def test_without_a_tty_each_check_is_printed_the_moment_it_finishes(tmp_path: Path) -> None:
    (tmp_path / "held.py").write_text(HELD)
    proc = subprocess.Popen(
        [str(KIT), "run", "--mode", "exit", "--timeout", "60", "-j", "1", "--only", "R1.*",
         "--no-database",
         "--", sys.executable, "held.py"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        lines = []
        while not any(line.startswith("[1/") for line in lines):
            line = proc.stderr.readline()
            assert line, f"stderr closed before any progress: {lines}"
            lines.append(line)
        # the first check's line is out while the client holds a later check (and so the
        # whole run) until it is released: a line buffered to the end could not be read yet
        assert proc.poll() is None
        assert not (tmp_path / "release").exists()
        (tmp_path / "release").touch()
        out, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    header = re.match(r"grading (\d+) check\(s\) in exit mode with 1 worker\(s\)", lines[0])
    assert header, lines
    total = int(header.group(1))
    assert int((tmp_path / "runs").read_text()) > 4  # a later check was held
    assert total == len(select(only=("R1.*",))) > 1
    progress = [line for line in "".join([*lines, rest]).splitlines() if line.startswith("[")]
    assert [p.split("] ")[0] for p in progress] == [f"[{i}/{total}" for i in range(1, total + 1)]
    assert "\x1b" not in "".join(lines) + rest + out  # no colour, no cursor control in a log


@pytest.mark.slow
def test_a_ci_log_gets_one_line_per_check_and_colour_only_when_asked(tmp_path: Path) -> None:
    args = ("run", "--examples", "0", "--only", "R3.*", "--")
    out = kit(*args, *PY_REFERENCE, cwd=tmp_path)
    progress = [line for line in out.stderr.splitlines() if line.startswith("[")]
    assert [p.split("] ")[0] for p in progress] == [f"[{i}/5" for i in range(1, 6)]
    assert "\x1b" not in out.stdout + out.stderr
    forced = kit(*args[:-1], "--color", "always", "--", *PY_REFERENCE, cwd=tmp_path)
    assert "\x1b[32mPASS\x1b[0m" in forced.stdout and "\x1b[32mPASS\x1b[0m" in forced.stderr


def test_a_terminal_sees_the_check_being_graded_and_its_cases_so_far() -> None:
    """Between two ends a long check is seen working: its id and its cases, rewritten in
    place at most every ``every`` seconds; a log gets none of it (a line per check)."""
    from stella_conform.conformance.report.events import (
        CaseGraded,
        CheckFinished,
        CheckStarted,
    )
    from stella_conform.conformance.report.progress import REWRITE, CheckProgress

    now = [0.0]
    shown: list[tuple[str, bool]] = []

    def echo(message: str, *, nl: bool = True, err: bool = False, color: Any = None) -> None:
        shown.append((message, nl))

    result = CheckResult("R1.a", "a", "MUST", "must", "pass", "", cases=3)
    events = [
        CheckStarted("R1.a", "a", 2),
        CaseGraded("R1.a", 1, "pass"),  # 0.05 s after the line: not shown
        CaseGraded("R1.a", 2, "pass"),
        CaseGraded("R1.a", 3, "pass"),  # 0.05 s after the line: not shown
        CheckFinished(1, 2, result),
        CheckStarted("R2.\x1b[31mred", "b", 2),
    ]
    for tty in (True, False):
        shown.clear()
        now[0] = 0.0
        progress = CheckProgress(echo, tty=tty, every=0.1, clock=lambda: now[0])
        for event in events:
            progress.handle(event)
            now[0] += 0.05
        if not tty:
            assert [m for m, _ in shown] == [progress_line(1, 2, result)]
            continue
        assert shown == [
            (f"{REWRITE}[0/2] R1.a …", False),
            (f"{REWRITE}[0/2] R1.a: 2 case(s) …", False),
            (f"{REWRITE}{progress_line(1, 2, result, message=False)}", False),
            (f"{REWRITE}[1/2] R2.\\x1b[31mred …", False),
        ]
