"""Docs that cannot drift: every console output shown in README.md and docs/*.md is real.

Each fenced block of ``$`` commands that shows output is re-run and compared with what
it shows (``…`` stands for variable parts; see ``tests/doc_console.py``).  When one
drifts, ``scripts/regen-docs`` rewrites it.
"""

from __future__ import annotations

import pytest
from doc_console import Block, all_blocks, drift, missing_toolchains, run_block
from toolchains import missing

BLOCKS = [b for b in all_blocks() if b.shows_output]


def test_every_block_is_found_and_an_exempt_one_says_why() -> None:
    names = {b.name.split(":")[0] for b in BLOCKS}
    assert {"README.md", "docs/adapter-protocol.md", "docs/pytest-plugin.md"} <= names
    for block in BLOCKS:
        if "not run" in block.settings:
            assert block.settings["not run"], f"{block.name}: say why it is not run"


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_console_output_shown_in_the_docs_is_what_the_commands_print(block: Block) -> None:
    if "not run" in block.settings:
        pytest.skip(block.settings["not run"])
    lacking = missing_toolchains(block)
    if lacking:
        missing(f"no {', '.join(lacking)} for {block.name}")
    problems = drift(block, run_block(block))
    assert not problems, "\n\n".join(problems) + "\n\n(scripts/regen-docs rewrites them)"


def test_placeholders_match_variable_parts_and_nothing_else() -> None:
    from doc_console import matches, normalize

    assert matches(["took … to grade"], ["took 4.26s to grade"])
    assert not matches(["took 4s to grade"], ["took 5s to grade"])
    assert matches(["first", "…", "last"], ["first", "a", "b", "last"])
    assert matches(["first", "…", "last"], ["first", "last"])
    assert not matches(["first"], ["first", "and more"])
    assert not matches(["first", "second"], ["first"])
    from pathlib import Path

    assert normalize("1 passed in 1.06s\n[2/5] PASS R1 (0.3 s)\n", Path("/nowhere")) == [
        "1 passed in …s"
    ]
