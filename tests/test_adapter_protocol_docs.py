"""docs/adapter-protocol.md's per-language section: every summary field, every allowed
value, read-ahead warned of first, and a minimal adapter per language that the docs run.

The adapters themselves are run by tests/test_docs.py (each ``file=`` block is written
where the console block after it runs, so the program shown is the program graded).
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from conftest import REPO
from doc_console import blocks
from full_pipe import answers_after_a_full_pipe

from stella_conform.schemas.vocabulary import load_schema

DOC = REPO / "docs" / "adapter-protocol.md"
LANGUAGES = {
    "Python": "minimal_adapter.py",
    "TypeScript": "minimal_adapter.ts",
    "Go": "minimal_adapter.go",
    "Rust": "minimal_adapter.rs",
}


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(f"\n### {title}\n", 1)[1].split("\n### ", 1)[0]


def test_the_summary_table_has_every_field_and_every_allowed_value() -> None:
    section = _section("The summary, field by field")
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.MULTILINE)}
    defs = load_schema("protocol.schema.json")["$defs"]
    fields = defs["Summary"]["properties"]
    assert set(rows) == set(fields) - {"kind"}
    for name, spec in fields.items():
        for value in spec.get("enum", ()):
            assert (f"`{json.dumps(value)}`" if value is not None else "null") in rows[name], (
                name,
                value,
            )
    for outcome in defs["Line"]["properties"]["outcome"]["enum"]:
        assert f"`{outcome}`" in section.split("\n\n", 1)[0]  # a line's outcomes, first


def test_read_ahead_is_warned_of_first() -> None:
    first = _section("Read stdin one line at a time, never ahead").strip().split("\n\n", 1)[0]
    assert first.startswith("**A reader that reads ahead deadlocks report mode.**")
    assert "lines().peekable()" in first and "R1.line-by-line" in first


def test_each_language_has_a_minimal_adapter_the_docs_grade() -> None:
    found = blocks(DOC)
    for language, name in LANGUAGES.items():
        graded = [
            b
            for b in found
            if name in b.files
            and any("stella-conform run --mode report" in c.text for c in b.commands)
            and any("stella-conform smoke --mode report" in c.text for c in b.commands)
        ]
        # the first console block after the file is the one that runs it
        assert graded and graded[0].commands[-1].expected[-1] == "20 pass", language
        assert f"#### {language}" in DOC.read_text(encoding="utf-8")


#: Node.js writing more than a pipe holds, then ending the way the advice names (``exit``:
#: ``process.exit(0)``; ``drain``: ``process.exitCode = 0``, the output left to drain).
NODE_WRITES_THEN = """\
process.stdout.write(JSON.stringify({kind: "hello", protocol: 1, client: {name: "x"},
  profiles: ["reader"], modes: ["report"]}) + "\\n");
for (let n = 1; n <= LINES; n++) {
  process.stdout.write(JSON.stringify({kind: "line", line: n, outcome: "known", type: "text"})
    + "\\n");
}
END;
"""


def test_node_authors_are_told_a_pipe_is_written_asynchronously() -> None:
    """Node.js writes to a pipe asynchronously on POSIX (its own docs, "A note on process
    I/O"): the advice says so and names the way out, and it is true of node here: what the
    pipe could not take yet is lost by ``process.exit()`` and written with ``exitCode``."""
    section = _section("Read stdin one line at a time, never ahead")
    (advice,) = [p for p in section.split("\n\n") if p.startswith("Flush after every message")]
    words = " ".join(advice.split())
    assert "asynchronous on a pipe" in words, advice
    assert "never end with `process.exit()`" in words and "`process.exitCode`" in words, advice
    shown = [text for b in blocks(DOC) for name, text in b.files.items() if name.endswith(".ts")]
    assert shown and not any("process.exit(" in text for text in shown)
    if shutil.which("node") is None:
        if os.environ.get("STELLA_CONFORM_REQUIRE_TOOLCHAINS"):
            pytest.fail("node is not installed (.ci/run installs it)")
        return
    lines = 4000  # about 300 KB: several pipes' worth
    got = {}
    for ending, end in (("exit", "process.exit(0)"), ("drain", "process.exitCode = 0")):
        script = NODE_WRITES_THEN.replace("LINES", str(lines)).replace("END", end)
        # grace: node may reach process.exit() after the pipe is full (a loaded machine);
        # the one that drains stays until the pipe is read, the grace spent in vain
        answers = answers_after_a_full_pipe(["node", "-e", script], "report", b"", grace=5.0)
        got[ending] = sum(1 for a in answers if a["kind"] == "line")
    assert got["drain"] == lines and got["exit"] < lines, got
