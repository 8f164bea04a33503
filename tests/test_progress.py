"""Progress a CI log can show, and colour only where it belongs."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from conftest import KIT, PY_REFERENCE, kit

from stella_conform.cli._common import use_color
from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.report import Report, progress_line
from stella_conform.conformance.runner import Client
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
    plain = report.terminal()
    assert "\x1b" not in plain
    coloured = report.terminal(color=True)
    assert coloured.startswith("\x1b[32mPASS\x1b[0m ")
    assert "\n\x1b[1;35mERROR\x1b[0m " in coloured  # an error is not a failure's red
    # the client's own escape sequences stay visible text, coloured or not
    assert coloured.count("\x1b[") == 4 and "\\x1b[31mboom" in coloured
    line = progress_line(2, 9, results[1], color=False)
    assert (
        line.startswith("[2/9] ERROR R3.unknown-type-inert (0.0 s): crash ") and "\x1b" not in line
    )


def test_without_a_tty_each_check_is_printed_the_moment_it_finishes(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [str(KIT), "run", "--timeout", "0.5", "-j", "1", "--only", "R1.*", "--no-database",
         "--", "sleep", "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        lines = []
        while not any(line.startswith("[1/") for line in lines):
            line = proc.stderr.readline()
            assert line, f"stderr closed before any progress: {lines}"
            lines.append(line)
        # the first check's line is out while three more checks (a timeout each) remain
        assert proc.poll() is None
        assert lines[0].startswith("grading 4 check(s) in exit mode with 1 worker(s)")
        rest, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert "\x1b" not in "".join(lines) + rest  # no colour and no cursor control in a log


@pytest.mark.slow
def test_a_ci_log_gets_one_line_per_check_and_colour_only_when_asked(tmp_path: Path) -> None:
    args = ("run", "--examples", "0", "--only", "R3.*", "--")
    out = kit(*args, *PY_REFERENCE, cwd=tmp_path)
    progress = [line for line in out.stderr.splitlines() if line.startswith("[")]
    assert [p.split("] ")[0] for p in progress] == [f"[{i}/5" for i in range(1, 6)]
    assert "\x1b" not in out.stdout + out.stderr
    forced = kit(*args[:-1], "--color", "always", "--", *PY_REFERENCE, cwd=tmp_path)
    assert "\x1b[32mPASS\x1b[0m" in forced.stdout and "\x1b[32mPASS\x1b[0m" in forced.stderr
