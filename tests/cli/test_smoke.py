"""`stella-conform smoke` blames the right side: the adapter's protocol, or the client's reading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, PY_REFERENCE, kit

from stella_conform.cli.smoke import CORRUPT
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.oracle.decoder import decode_all

SKIPS_BAD_LINES = (sys.executable, str(ADAPTERS / "broken" / "skips_bad_lines.py"))


def report_only_adapter(tmp_path: Path, *, declare: bool) -> Path:
    """The reference adapter, speaking report mode whatever mode it is started in."""
    script = tmp_path / "report_only.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ADAPTERS / 'python')!r})\n"
        "from stella_reader import Adapter, main\n"
        "class ReportOnly(Adapter):\n"
        f"    modes = {('report',) if declare else ('report', 'persistent')!r}\n"
        "    def main(self, argv=None):\n"
        "        return self.run_report()\n"
        "main(ReportOnly)\n"
    )
    return script


@pytest.mark.parametrize("mode", ["exit", "report", "persistent"])
def test_a_working_adapter_and_client_pass_both_verdicts(mode: str) -> None:
    out = kit("smoke", "--mode", mode, "--", *PY_REFERENCE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout
    assert "the client reads both streams right" in out.stdout


def test_the_corrupt_stream_is_corrupt_not_a_bad_body() -> None:
    stream = (bundled_fixtures_dir() / f"{CORRUPT[0]}.jsonl").read_bytes()
    decoded = decode_all(stream)
    assert decoded.summary.verdict == "reject"
    rejected = [o for o in decoded.outcomes if o.kind.value == "reject"]
    assert rejected and rejected[0].reason and "not JSON" in rejected[0].reason


def test_a_broken_adapter_is_blamed_and_the_client_not_judged(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sh"
    garbage.write_text("#!/bin/sh\necho hello world\ncat >/dev/null\n")
    garbage.chmod(0o755)
    out = kit("smoke", "--mode", "report", "--", str(garbage))
    assert out.returncode == 1
    assert "the adapter is broken" in out.stderr
    assert "not judged" in out.stdout and "'hello world'" in out.stdout


def test_a_wrong_client_behind_a_working_adapter_is_blamed_on_the_client() -> None:
    out = kit("smoke", "--mode", "report", "--", *SKIPS_BAD_LINES)
    assert out.returncode == 0, out.stdout + out.stderr  # the adapter is fine: go and grade it
    assert "ok   speaks the protocol on corrupt_middle_line.jsonl" in out.stdout
    assert (
        "FAIL rejects corrupt_middle_line.jsonl: accept (a correct client: reject at line 2)"
        in (out.stdout)
    )
    assert "the adapter speaks the protocol; the client looks wrong" in out.stdout
    assert "the adapter is broken" not in out.stderr


def test_a_mode_the_hello_does_not_list_is_one_setup_error(tmp_path: Path) -> None:
    adapter = report_only_adapter(tmp_path, declare=True)
    out = kit("run", "--mode", "persistent", "--examples", "2", "--", sys.executable, str(adapter))
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "stella-conform: stella-reader-python does not support --mode persistent: "
        "its hello lists the modes report"
    ]
    smoke = kit("smoke", "--mode", "persistent", "--", sys.executable, str(adapter))
    assert smoke.returncode == 1 and "does not support --mode persistent" in smoke.stdout


def test_an_adapter_that_answers_without_case_ids_gets_a_hint(tmp_path: Path) -> None:
    adapter = report_only_adapter(tmp_path, declare=False)
    out = kit("smoke", "--mode", "persistent", "--", sys.executable, str(adapter))
    assert out.returncode == 1
    assert "may not support persistent mode; try --mode report" in out.stdout


def test_the_plugin_and_the_matrix_refuse_an_unsupported_mode_up_front(tmp_path: Path) -> None:
    import shlex
    import subprocess

    adapter = report_only_adapter(tmp_path, declare=True)
    command = shlex.join([sys.executable, str(adapter)])
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--stella-client", command,
         "--stella-mode", "persistent"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert plugin.returncode == 4, plugin.stdout + plugin.stderr  # pytest's usage error
    assert "does not support --mode persistent" in plugin.stderr
    config = tmp_path / "matrix.toml"
    argv = json.dumps([sys.executable, str(adapter)])
    config.write_text(f'[[client]]\nname = "ro"\ncommand = {argv}\n')
    matrix = kit("matrix", str(config), "--out", str(tmp_path / "out"))
    assert matrix.returncode == 2, matrix.stdout + matrix.stderr
    assert "client 'ro': stella-reader-python does not support --mode persistent" in matrix.stderr


@pytest.mark.parametrize("mode", ["report", "persistent"])
def test_an_adapter_is_said_to_grade_the_parser_and_the_exit_mode_line_shown(mode: str) -> None:
    """Through an adapter the kit grades the parser on the bytes the adapter hands it, not
    the program users run: smoke says so and gives the line that grades that program."""
    out = kit("smoke", "--mode", mode, "--", *PY_REFERENCE)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert "graded through an adapter" in out.stdout
    assert "  stella-conform run --mode exit -- YOUR-CLI [ARGS]" in lines
    assert lines[-1] == "the adapter speaks the protocol, and the client reads both streams right"


def test_a_program_graded_by_its_exit_status_is_not_told_to_grade_it_again() -> None:
    out = kit("smoke", "--mode", "exit", "--", *PY_REFERENCE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "graded through an adapter" not in out.stdout and "--mode exit" not in out.stdout
