"""Matrix columns that are stella versions a user names, and cells that compare.

One matrix over ``examples/matrix/``'s files: a column from a wire schema file (a next
stella that adds two types), one from a bundled vocabulary with a folder of recordings
(a pinned older stella's streams), beside today's vocabulary. Every output (the terminal,
the progress lines, Markdown, HTML read back by a browser, JSON) shows each cell as the
checks it graded, failed and skipped, in the same words.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import KIT, REPO, kit
from headless_chromium import CHROMIUM, FLAGS

from stella_conform.conformance.checks import select
from stella_conform.conformance.matrix import cell_text, load_config
from stella_conform.errors import SetupError
from stella_conform.schemas.vocabulary import Vocabulary

PY = sys.executable
EXAMPLE = REPO / "examples" / "matrix"
HERE = Path(__file__).resolve().parent
#: What every text of the pinned stella's recordings says, and no generator writes.
MARKER = "pinned-0.9"


def write_config(folder: Path) -> Path:
    """The example's next stella and pinned recordings beside a config of the test's own:
    paths relative to the config, as in a client's repository."""
    shutil.copytree(EXAMPLE / "next-stella", folder / "next-stella")
    shutil.copytree(EXAMPLE / "recordings", folder / "recordings")
    adapters = REPO / "adapters" / "python"
    config = folder / "versions.toml"
    config.write_text(
        f"""
[matrix]
examples = 8
seed = 1
jobs = 2
max_shrinks = 0

[[client]]
name = "reference"
command = ["{PY}", "{adapters / "reference_client.py"}"]
mode = "persistent"
profiles = ["reader"]

[[client]]
name = "older"
command = ["{PY}", "{adapters / "older_client.py"}"]
mode = "persistent"
profiles = ["reader"]

[[client]]
name = "trips"
command = ["{PY}", "{HERE / "trips_on_pinned_recordings.py"}"]
mode = "persistent"
profiles = ["reader"]

[[vocabulary]]
name = "today"

[[vocabulary]]
name = "next"
wire_schema = "next-stella/agentevent.schema.json"

[[vocabulary]]
name = "stella-0.9"
vocabulary = "stella-older"
seed_corpus = "recordings/stella-0.9"
"""
    )
    return config


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    folder = tmp_path_factory.mktemp("versions")
    config = write_config(folder)
    done = kit("matrix", str(config), "--out", str(folder / "out"), cwd=folder)
    assert done.returncode == 1, done.stdout + done.stderr  # a client falls behind a column
    return folder, done


def _doc(folder: Path) -> dict:
    return json.loads((folder / "out" / "matrix.json").read_text())


def _by(doc: dict) -> dict[tuple[str, str], dict]:
    return {(c["client"], c["vocabulary"]): c for c in doc["cells"]}


def test_each_cell_counts_what_it_graded_failed_and_skipped(graded: tuple) -> None:
    folder, _ = graded
    doc = _doc(folder)
    reader = len(select(("reader",)))
    for cell in doc["cells"]:
        counts, summary = cell["counts"], cell["report"]["summary"]
        assert counts["graded"] + counts["skipped"] == reader, cell["client"]
        assert counts["skipped"] == summary["skip"]
        assert counts["failed"] == summary["fail"] + summary["crash"] + summary["error"]
        words = cell_text(cell["report"])
        assert f"{counts['graded']} graded · {counts['failed']} failed" in words
        assert words.endswith(f"· {counts['skipped']} skipped")
    by = _by(doc)
    assert by[("reference", "today")]["counts"]["failed"] == 0
    assert by[("older", "stella-0.9")]["counts"]["failed"] == 0


def test_a_wire_schema_column_shows_what_a_client_of_today_lacks(graded: tuple) -> None:
    """The next stella's two new types are what the reference client, which knows today's
    twelve, is found to read as unknown; nothing else fails it there."""
    folder, _ = graded
    doc = _doc(folder)
    column = doc["vocabularies"][1]
    assert column["name"] == "next" and column["wire_schema"].endswith("agentevent.schema.json")
    newer = Vocabulary.from_wire_schema(folder / column["wire_schema"]).known
    newer -= Vocabulary.default().known
    assert newer == {"plan", "cache_hit"}  # the example's wire schema adds these two
    report = _by(doc)[("reference", "next")]["report"]
    failing = [c for c in report["checks"] if c["outcome"] != "pass" and c["outcome"] != "skip"]
    assert failing, "no gap shown for a client that knows 12 types"
    for check in failing:
        assert any(f"'{t}'" in check["message"] or f'"{t}"' in check["message"] for t in newer)


def test_a_recordings_column_starts_cases_from_the_recordings(graded: tuple) -> None:
    """A client that dies on the pinned stella's lines is graded as the older client is in
    every column without them, and fails, on a case holding them, where they are."""
    folder, done = graded
    doc = _doc(folder)
    column = doc["vocabularies"][2]
    assert column["seed_corpus"] == ["recordings/stella-0.9"] and column["recordings"] == 2
    assert "vocabulary 'stella-0.9': seed corpus: 2 recording(s) read" in done.stderr
    by = _by(doc)

    def outcomes(client: str, vocab: str) -> dict[str, str]:
        return {c["id"]: c["outcome"] for c in by[(client, vocab)]["report"]["checks"]}

    for vocab in ("today", "next"):
        assert outcomes("trips", vocab) == outcomes("older", vocab)
    tripped = [
        c for c in by[("trips", "stella-0.9")]["report"]["checks"] if c["outcome"] == "crash"
    ]
    assert tripped, by[("trips", "stella-0.9")]["counts"]
    saved = [f["saved"] for c in tripped for f in c["failures"] if f.get("saved")]
    assert saved and all(MARKER in (folder / s).read_text() for s in saved)


def test_the_terminal_and_the_progress_lines_say_each_cell_alike(graded: tuple) -> None:
    folder, done = graded
    doc = _doc(folder)
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if "graded" in line}
    for cell in doc["cells"]:
        text = cell_text(cell["report"])
        assert f"{cell['vocabulary']}: {text}" in rows[cell["client"]]
        # without a terminal, each cell gets a line once its last check is graded
        said = f"] {cell['client']} × {cell['vocabulary']} done: {text}"
        assert sum(said in line for line in done.stderr.splitlines()) == 1, done.stderr


def test_markdown_shows_each_cell_and_where_each_column_comes_from(graded: tuple) -> None:
    folder, _ = graded
    doc = _doc(folder)
    text = (folder / "out" / "matrix.md").read_text()
    for cell in doc["cells"]:
        assert cell_text(cell["report"]) in text
    assert "graded (judged), failed" in text  # the legend says what the numbers count
    assert "`bundled stella-older, 2 recording(s) from recordings/stella-0.9`" in text
    assert "`wire schema agentevent.schema.json`" in text


class _Overview(HTMLParser):
    """The overview table of a DOM: each cell's text and attributes, by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, dict[str, str | None]]]] = []
        self._in = False
        self._cell: list[str] | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._in = dict(attrs).get("id") == "matrix"
        elif self._in and tag == "tr":
            self.rows.append([])
        elif self._in and tag in ("td", "th"):
            self._cell, self._attrs = [], dict(attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in = False
        elif self._in and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(("".join(self._cell).strip(), self._attrs))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_a_browser_reads_back_comparable_cells(graded: tuple) -> None:
    if CHROMIUM is None:
        if os.environ.get("STELLA_CONFORM_REQUIRE_BROWSER"):
            pytest.fail("no chromium, and STELLA_CONFORM_REQUIRE_BROWSER is set (.ci/run)")
        pytest.skip("no chromium (.ci/run installs Debian's)")
    folder, _ = graded
    doc = _doc(folder)
    page = folder / "out" / "matrix.html"
    profile = f"--user-data-dir={folder / 'chromium'}"
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, profile, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Overview()
    dom.feed(done.stdout)
    header, *rows = dom.rows
    vocabs = [v["name"] for v in doc["vocabularies"]]
    assert [text for text, _ in header] == ["client", "mode", *vocabs]
    # each column's heading says where it comes from, on hover
    assert header[3][1]["title"] == "wire schema agentevent.schema.json"
    pinned = "bundled stella-older, 2 recording(s) from recordings/stella-0.9"
    assert header[4][1]["title"] == pinned
    by = _by(doc)
    for row in rows:
        client = row[0][0]
        for vocab, (text, attrs) in zip(vocabs, row[2:], strict=True):
            cell = by[(client, vocab)]
            assert text == cell_text(cell["report"], icons=False)
            for key in ("graded", "failed", "skipped"):
                assert attrs[f"data-{key}"] == str(cell["counts"][key])
    assert "bundled stella-older, 2 recording(s) from recordings/stella-0.9" in done.stdout


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"no-such-folder"', "seed_corpus: no-such-folder: no such file or folder"),
        ("3", "seed_corpus: a list of texts, got 3"),
        ("[]", "seed_corpus: name a folder or file of recorded streams"),
        ('"empty"', "seed_corpus: no recorded stream read (no .jsonl or .json file)"),
        ('"bad"', "seed_corpus: no recorded stream read (" + "{bad}"),
        # never opened: a FIFO nobody writes would hold the matrix before it starts
        ('["empty", "fifo"]', "seed_corpus: fifo: is a FIFO, neither"),
    ],
)
def test_a_recordings_column_that_reads_nothing_is_refused(
    tmp_path: Path, value: str, said: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "torn.jsonl").write_text('{"type":"text","text":"x"}\n{"type"')
    os.mkfifo(tmp_path / "fifo")
    config = tmp_path / "m.toml"
    config.write_text(
        f'[[client]]\nname = "c"\ncommand = ["true"]\nmode = "exit"\n\n'
        f'[[vocabulary]]\nname = "old"\nseed_corpus = {value}\n'
    )
    with pytest.raises(SetupError) as refused:
        load_config(config)
    expected = said.replace("{bad}", str(tmp_path / "bad" / "torn.jsonl"))
    assert f"{config}: vocabulary 'old': {expected}" in str(refused.value)
    # the command line says the same, exit 2, before any client starts
    done = subprocess.run(
        [str(KIT), "matrix", str(config), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and expected in done.stderr
