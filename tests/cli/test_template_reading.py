"""A template grades the client's own reading of the stream, not the template's.

The point an author edits is handed the raw bytes of a stream (a reader over them), and
the trivial reader there splits the lines itself.  So an author who puts a parser with its
own line reading there is graded on that reading: a Go parser reading with a
``bufio.Scanner`` capped at 1 MiB (failing at the line the Scanner cannot hold) fails
``R1.long-lines`` through the Go template, as the real binary does in exit mode, and a
Python parser reading text lines (which end at a lone CR too) fails
``R1.lines-end-only-at-newline`` through the Python template.
Each is graded in persistent mode, the mode ``run``'s ``auto`` picks for a template.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import kit
from toolchains import go_build

#: The Go template's trivial reader, its line reading swapped for a 1 MiB Scanner.
GO_READING = """\
	in := bufio.NewReader(stream)
	for number := 1; ; number++ {
		raw, err := in.ReadBytes('\\n')
		if len(raw) > 0 {
			r.push(number, raw)
		}
		if err != nil || r.rejected != nil {
			break // the end of the stream, or the first error, which ends it
		}
	}
"""
GO_SCANNER = """\
	in := bufio.NewScanner(stream)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	number := 1
	for ; in.Scan(); number++ {
		r.push(number, append(in.Bytes(), '\\n'))
		if r.rejected != nil {
			break
		}
	}
	if err := in.Err(); err != nil && r.rejected == nil {
		r.reject(number, err.Error()) // bufio.Scanner: token too long
	}
"""

#: The Python template's trivial reader, its line reading swapped for text lines.
PY_READING = 'for number, raw in enumerate(iter(stream.readline, b""), 1):'
PY_TEXT_LINES = (
    "for number, raw in enumerate((text.encode() for text in "
    'io.TextIOWrapper(stream, encoding="utf-8", newline="")), 1):'
)


def _outcomes(folder: Path, command: list[str], check: str) -> dict[str, str]:
    report = folder / "report.json"
    graded = kit(
        "run", "--only", check, "--examples", "2", "--no-database", "--no-case-cache",
        "-j", "1", "--json", str(report), "--", *command, cwd=folder,
    )  # fmt: skip
    assert graded.returncode in (0, 1), graded.stdout + graded.stderr
    assert "mode persistent (--mode auto" in graded.stdout, graded.stdout
    return {c["id"]: c["outcome"] for c in json.loads(report.read_text())["checks"]}


def _write(language: str, folder: Path, old: str, new: str) -> None:
    assert kit("init", language, str(folder)).returncode == 0
    source = next(folder.glob("stella_adapter.*"))
    text = source.read_text()
    assert text.count(old) == 1, "the template's own line reading moved"
    source.write_text(text.replace(old, new))


@pytest.mark.slow
def test_a_go_parser_s_scanner_limit_fails_long_lines_through_the_template(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "go"
    _write("go", folder, GO_READING, GO_SCANNER)
    go_build(folder, "stella-adapter")
    outcomes = _outcomes(folder, ["./stella-adapter"], "R1.long-lines")
    assert outcomes == {"R1.long-lines": "fail"}


@pytest.mark.slow
def test_a_python_parser_s_text_lines_fail_through_the_template(tmp_path: Path) -> None:
    folder = tmp_path / "python"
    _write("python", folder, PY_READING, PY_TEXT_LINES)
    command = [sys.executable, "stella_adapter.py"]
    outcomes = _outcomes(folder, command, "R1.lines-end-only-at-newline")
    assert outcomes == {"R1.lines-end-only-at-newline": "fail"}


@pytest.mark.parametrize("language", ["go", "python"])
def test_the_reading_the_tests_swap_is_the_template_s(language: str, tmp_path: Path) -> None:
    """The fast half of the above: the line reading they replace is in the template as
    written, so a change to it fails here before the slow tests."""
    assert kit("init", language, str(tmp_path)).returncode == 0
    text = next(tmp_path.glob("stella_adapter.*")).read_text()
    assert (GO_READING if language == "go" else PY_READING) in text
