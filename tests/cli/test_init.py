"""`stella-conform init LANG`: every template passes `smoke` and the reader profile as written.

Each language's template is written to a fresh folder, built with its own toolchain
(Python: nothing; TypeScript: tsc and @types/node; Go: go build; Rust: cargo with Debian's
serde crates, offline), and graded on every reader check in both the modes its hello
lists, report and persistent.  A missing toolchain skips its language here
and fails under ``.ci/run``, which installs them (STELLA_CONFORM_REQUIRE_TOOLCHAINS).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kit, kit_inline
from toolchains import build_template

from stella_conform.cli.init import TEMPLATES, templates_dir
from stella_conform.conformance.checks import select


def test_init_writes_the_files_and_the_next_steps(tmp_path: Path) -> None:
    out = kit("init", "typescript", str(tmp_path / "adapter"))
    assert out.returncode == 0, out.stderr
    for name in TEMPLATES["typescript"].files:
        assert (tmp_path / "adapter" / name).is_file()
    assert "npx tsc" in out.stdout
    assert "stella-conform smoke --mode report -- node dist/stella_adapter.js" in out.stdout
    assert "stella-conform run -- node dist/stella_adapter.js" in out.stdout  # auto
    assert "stella-conform run --mode exit -- " in out.stdout  # the real program, graded too
    again = kit_inline("init", "typescript", str(tmp_path / "adapter"))
    assert again.returncode == 2 and "--force" in again.stderr  # never overwrites silently
    assert kit("init", "typescript", str(tmp_path / "adapter"), "--force").returncode == 0
    assert kit_inline("init", "cobol", str(tmp_path)).returncode == 2


@pytest.mark.parametrize("language", sorted(TEMPLATES))
def test_every_template_marks_the_lines_an_author_edits(language: str) -> None:
    source = templates_dir() / language
    text = "".join((source / name).read_text() for name in TEMPLATES[language].files)
    # the client's name, the types it knows, and the parser, which is handed the stream
    # itself (its raw bytes), never lines the template split for it
    marked = [line for line in text.splitlines() if "EDIT:" in line]
    assert len(marked) >= 3, marked
    assert any("parser" in line and "stream" in line for line in marked), marked


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(TEMPLATES))
def test_every_template_passes_smoke_and_the_reader_profile(language: str, tmp_path: Path) -> None:
    folder = tmp_path / language
    assert kit("init", language, str(folder)).returncode == 0
    build_template(language, folder)
    command = list(TEMPLATES[language].command)
    if command[0] == "python3":
        # any Python 3.11+ runs the template (it imports only json and sys); this one
        # starts in 0.01 CPU-s, where a `python3` on PATH may be a version manager's shim
        # that costs 0.09 s a start, in report mode once per case (20 of the test's 21 s)
        command[0] = sys.executable
    smoke = kit("smoke", "--mode", "report", "--", *command, cwd=folder)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "the adapter speaks the protocol, and the client reads both streams right" in (
        smoke.stdout
    )
    # every fixture of every reader check and one generated case each: the template is
    # proven to read the streams right as written (a template is the protocol around an
    # author's parser; a power run of its parser is the author's own `run`).  A process
    # per case: a Node.js start is 0.1 CPU-s here, so each generated case per check costs
    # about 2.5 CPU-seconds for the TypeScript template.  In the older stella's column too:
    # the vocabulary says which stella wrote the streams, the hello's `knows` what the
    # template knows (today's types: the older `complete` is unknown to it).
    for vocabulary in ("stella-default", "stella-older"):
        outcomes = _graded(folder, command, "report", 1, vocabulary)
        assert outcomes == _every_reader_check_passes("report"), vocabulary
    # one process for every case: all of them, at a few ms of CPU each
    assert _modes(folder, command) == ["report", "persistent"]
    assert _graded(folder, command, "persistent", 5) == _every_reader_check_passes("persistent")


def _every_reader_check_passes(mode: str) -> dict[str, str]:
    """Each reader check's outcome for a conforming client graded in ``mode``: ``pass``, or
    ``skip`` where the catalogue says the check grades in other modes only."""
    return {c.id: "pass" if c.grades_in(mode) else "skip" for c in select(("reader",))}


def _graded(
    folder: Path, command: list[str], mode: str, examples: int, vocabulary: str = "default"
) -> dict[str, str]:
    """Each reader check's outcome for the template, graded in ``mode`` on the streams of
    ``vocabulary``'s stella."""
    report = folder.parent / f"{mode}-{vocabulary}.json"
    graded = kit(
        "run", "--mode", mode, "--examples", str(examples), "--no-database", "-j", "1",
        "--vocabulary", vocabulary, "--json", str(report), "--", *command, cwd=folder,
    )  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    return {c["id"]: c["outcome"] for c in json.loads(report.read_text())["checks"]}


def _modes(folder: Path, command: list[str]) -> list[str]:
    """The modes a template's hello lists."""
    hello = subprocess.run(
        command, cwd=folder, input=b"", capture_output=True, timeout=30,
        env={**os.environ, "STELLA_CONFORM_MODE": "report"},
    ).stdout.splitlines()[0]  # fmt: skip
    return list(json.loads(hello).get("modes", ["report", "persistent"]))
