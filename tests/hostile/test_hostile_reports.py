"""Hostile reports and inputs of CI: a poisoned or tampered shard, the composite action's
inputs; nothing is evaluated, run or written raw.  What every command prints and writes
of a hostile client's words is ``test_hostile_outputs.py``'s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import KIT
from hostile_kit import (  # noqa: F401 (no_leaks: autouse, the leak check)
    no_leaks,
)
from test_hostile_outputs import EVIL, assert_inert_html, assert_inert_markdown


def test_the_action_never_evaluates_its_inputs(tmp_path: Path) -> None:
    """$(…), backticks, ; and globs in every input: nothing runs, words arrive as written."""
    import yaml
    from test_ci_action import ACTION, github_outputs

    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "grade")
    assert "eval" not in step["run"] and "${{" not in step["run"]
    for other in ACTION["runs"]["steps"]:
        assert "${{" not in other.get("run", ""), other["name"]  # inputs only through env
    yaml.safe_dump(ACTION)
    (tmp_path / "decoy.txt").touch()  # an unquoted * would expand to it
    env = dict(os.environ)
    env["PATH"] = f"{KIT.parent}{os.pathsep}{env['PATH']}"
    env.update(
        CLIENT="'/no/such dir/$(touch pwned1)' `touch pwned2`; touch pwned3 | touch pwned4 *",
        MODE="exit",
        PROFILES="reader;touch${IFS}pwned5 $(touch pwned6) *",
        KNOWN="$(touch pwned7)",
        EXAMPLES="1",
        SEED="0",
        GITHUB_OUTPUT=str(tmp_path / "output"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary"),
    )
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("pwned*")), "an input was executed"
    assert github_outputs((tmp_path / "output").read_text()) == {"exit-code": "2"}
    assert "unknown profile 'reader;touch${IFS}pwned5'" in done.stderr
    # with good profiles, the first word reaches the kit whole, quotes honoured
    env.update(PROFILES="reader", KNOWN="")
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert "client not found: /no/such dir/$(touch pwned1)" in done.stderr
    assert not list(tmp_path.glob("pwned*"))


POISON = (
    '"><script>document.documentElement.setAttribute("data-pwned","script")</script>'
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
    " @octocat [x](https://evil.invalid) |" + EVIL
)


def poisoned_matrix(shard: str) -> dict[str, object]:
    """A matrix shard that passes the schema, with markup in every string a page shows."""
    report = {
        "format": "stella-conform/report/1",
        "kit": {"name": "stella-conform", "version": POISON},
        "corpus_version": POISON, "vocabulary": POISON, "seed": 0, "examples": 0,
        "date": POISON, "client": {"command": [POISON], "mode": "exit"},
        "summary": {"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0},
        "exit_code": 0, "known_failures_now_passing": [], "shard": shard,
        "checks": [{"id": POISON + shard, "outcome": "pass", "message": POISON,
                    "known_failure": POISON, "failures": []}],
    }  # fmt: skip
    return {
        "format": "stella-conform/matrix/1",
        "kit": report["kit"], "corpus_version": POISON, "date": POISON, "seed": 0,
        "examples": 0, "shard": shard, "exit_code": 0,
        "clients": [{"name": POISON, "command": [POISON], "mode": "exit", "profiles": []}],
        "vocabularies": [{"name": POISON + "v", "ident": POISON, "wire_schema": POISON}],
        "cells": [{"client": POISON, "vocabulary": POISON + "v", "report": report}],
    }  # fmt: skip


def _elements(page: str) -> tuple[list[str], dict[str, str | None]]:
    """Every element's tag, and the root element's attributes, as a parser sees them."""
    from html.parser import HTMLParser

    tags: list[str] = []
    root: dict[str, str | None] = {}

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)
            if tag == "html":
                root.update(attrs)

    Parser().feed(page)
    return tags, root


def test_a_poisoned_shard_cannot_run_script_in_the_matrix_page(tmp_path: Path) -> None:
    """Markup in every name and message: the merged page and Markdown show it as text."""
    from click.testing import CliRunner
    from headless_chromium import CHROMIUM, FLAGS

    from stella_conform.cli import main

    shards = []
    for shard in ("1/2", "2/2"):
        path = tmp_path / f"shard{shard[0]}.json"
        path.write_text(json.dumps(poisoned_matrix(shard)))
        shards.append(str(path))
    page, markdown = tmp_path / "m.html", tmp_path / "m.md"
    args = ["report", "merge", "--html", str(page), "--markdown", str(markdown)]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "m.json"), *shards])
    assert result.exit_code == 0, (result.output, result.exception)
    tags, root = _elements(page.read_text())
    assert "script" not in tags and "img" not in tags and "data-pwned" not in root
    assert_inert_html("m.html", page.read_text())
    assert_inert_markdown("m.md", markdown.read_text())
    if CHROMIUM is None:
        if os.environ.get("STELLA_CONFORM_REQUIRE_BROWSER"):
            pytest.fail("no chromium, and STELLA_CONFORM_REQUIRE_BROWSER is set (.ci/run)")
        pytest.skip("no chromium (.ci/run installs Debian's)")
    short = Path(tempfile.mkdtemp(prefix="chromium-", dir="/tmp"))  # its socket path is short
    try:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={short / 'profile'}", "--dump-dom",
             page.as_uri()],
            capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(short)},
        )  # fmt: skip
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    tags, root = _elements(done.stdout)
    assert "script" not in tags and "img" not in tags, "the shard's markup became elements"
    assert "data-pwned" not in root, "a script from the shard ran in the browser"
    assert "data-pwned" in done.stdout  # the poison is on the page, as text


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("cells", 0, "report", "checks", 0, "outcome"), "<img src=x onerror=alert(1)>"),
        (("cells", 0, "report", "summary"), {"pass": 1}),
        (("clients", 0, "name"), ["not", "a", "string"]),
        (("cells", 0, "client"), "someone else"),
    ],
)
def test_a_tampered_shard_is_refused_in_one_line(
    tmp_path: Path, where: tuple[object, ...], value: object
) -> None:
    from click.testing import CliRunner

    from stella_conform.cli import main

    doc: Any = poisoned_matrix("1/1")
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    shard = tmp_path / "shard.json"
    shard.write_text(json.dumps(doc))
    out = tmp_path / "m.json"
    args = ["report", "merge", "--markdown", str(tmp_path / "m.md"), str(out), str(shard)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.startswith("stella-conform: malformed") and result.stderr.count("\n") == 1
    assert not out.exists()
