"""The compatibility matrix: clients × vocabularies, in JSON, Markdown and HTML.

The HTML page is opened in headless Chromium and the table read back from the DOM the
browser built, so "renders correctly" means a browser sees the same table the JSON
holds. Sharded matrices merge into exactly the unsharded one.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import ADAPTERS, KIT, kit, kit_inline, replay_args
from headless_chromium import CHROMIUM, FLAGS

from stella_conform.conformance.matrix import cell_text
from stella_conform.schemas.vocabulary import Vocabulary

PY = sys.executable


def write_config(tmp_path: Path, wire_schema: Path | None, *, examples: int = 2) -> Path:
    vocabularies = '[[vocabulary]]\nname = "default"\n'
    if wire_schema is not None:
        vocabularies += f'\n[[vocabulary]]\nname = "wire"\nwire_schema = "{wire_schema}"\n'
    (tmp_path / "known.toml").write_text(
        '[known-failures]\n"R3.unknown-type-inert" = "the broken example"\n'
    )
    config = f"""
[matrix]
examples = {examples}
seed = 3
jobs = 2
max_shrinks = 0  # failures found and saved, not minimised (shrinking: test_generators.py)

[[client]]
name = "reference"
command = ["{PY}", "{ADAPTERS / "python" / "reference_client.py"}"]
mode = "persistent"
profiles = ["reader", "dashboard"]

[[client]]
name = "raises-known"
command = ["{PY}", "{ADAPTERS / "broken" / "raises_on_unknown_type.py"}"]
mode = "persistent"
profiles = ["reader"]
known_failures = "known.toml"

[[client]]
name = "appends-text"
command = ["{PY}", "adapters/broken/dashboard_appends_text_to_preview.py"]
mode = "persistent"
profiles = ["dashboard"]

[[client]]
name = "envelope"
command = ["{PY}", "{ADAPTERS / "python" / "envelope_client.py"}"]
mode = "persistent"
profiles = ["envelope"]

{vocabularies}
"""
    path = tmp_path / "matrix.toml"
    path.write_text(config)
    # one command's path is relative to the config's folder, as in a client's own repository
    if not (tmp_path / "adapters").exists():
        (tmp_path / "adapters").symlink_to(ADAPTERS)
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """One matrix run, shared by the tests below (it is the slow part)."""
    tmp = tmp_path_factory.mktemp("matrix")
    upstream = request.config.rootpath.parent / "shared" / "upstream" / "agentevent.schema.json"
    config = write_config(tmp, upstream if upstream.is_file() else None)
    out = kit("matrix", str(config), "--out", str(tmp / "out"), cwd=tmp)
    assert out.returncode == 1, out.stdout + out.stderr  # appends-text fails a MUST check
    return tmp


def test_json_records_provenance_and_every_cell(graded: Path) -> None:
    doc = json.loads((graded / "out" / "matrix.json").read_text())
    assert doc["format"] == "stella-conform/matrix/1"
    assert doc["kit"]["version"] and doc["corpus_version"] and doc["date"]
    assert doc["seed"] == 3 and doc["examples"] == 2
    clients = [c["name"] for c in doc["clients"]]
    vocabs = [v["name"] for v in doc["vocabularies"]]
    assert {(c["client"], c["vocabulary"]) for c in doc["cells"]} == {
        (c, v) for c in clients for v in vocabs
    }
    by = {(c["client"], c["vocabulary"]): c["report"] for c in doc["cells"]}

    def failing(client: str, vocab: str) -> list[dict]:
        return [c for c in by[(client, vocab)]["checks"] if c["outcome"] in ("fail", "error")]

    assert by[("reference", "default")]["exit_code"] == 0
    assert by[("raises-known", "default")]["exit_code"] == 0  # a known failure does not block
    known = [c for c in by[("raises-known", "default")]["checks"] if c.get("known_failure")]
    assert [c["id"] for c in known] == ["R3.unknown-type-inert"]
    assert [c["id"] for c in failing("appends-text", "default")] == ["D.text-replaces-preview"]
    assert by[("envelope", "default")]["summary"]["pass"] == 8
    assert doc["exit_code"] == 1
    if "wire" in vocabs:
        # The reference clients know today's twelve types. Against the wire schema's larger
        # vocabulary they fall behind, and the matrix must say so by naming the newer types
        # they read as unknown, and nothing else.
        newer = Vocabulary.from_wire_schema(doc["vocabularies"][1]["wire_schema"]).known - (
            Vocabulary.default().known
        )
        behind = failing("reference", "wire")
        assert behind, "the wire column shows no gap for a client that knows 12 types"
        for check in behind:
            assert any(repr(t) in check["message"] or f'"{t}"' in check["message"] for t in newer)
        assert "D.text-replaces-preview" in [c["id"] for c in failing("appends-text", "wire")]


def test_markdown_has_the_overview_and_a_check_table_per_vocabulary(graded: Path) -> None:
    from stella_conform.safe_text import markdown_name

    doc = json.loads((graded / "out" / "matrix.json").read_text())
    text = (graded / "out" / "matrix.md").read_text()
    for cell in doc["cells"]:
        assert cell_text(cell["report"]) in text
    for vocab in doc["vocabularies"]:
        assert f"### checks, vocabulary {markdown_name(vocab['name'])}" in text
    assert "| `D.text-replaces-preview` |" in text
    assert doc["kit"]["version"] in text and doc["corpus_version"] in text


class _Tables(HTMLParser):
    """Rows of each table in a DOM, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.links: list[str] = []
        self.legend: list[str] = []
        self._swatch = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name in ("src", "href"):
            if a.get(name):
                self.links.append(str(a[name]))
        if tag == "span" and "swatch" in (a.get("class") or ""):
            self._swatch = True
        if tag == "table":
            self._table = a.get("id") or f"checks:{a.get('data-vocabulary')}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._swatch:
            self.legend.append(data.strip())
            self._swatch = False
        if self._cell is not None:
            self._cell.append(data)


def test_html_is_self_contained_and_a_browser_reads_back_the_table(graded: Path) -> None:
    if CHROMIUM is None:
        if os.environ.get("STELLA_CONFORM_REQUIRE_BROWSER"):
            pytest.fail("no chromium, and STELLA_CONFORM_REQUIRE_BROWSER is set (.ci/run)")
        pytest.skip("no chromium (.ci/run installs Debian's)")
    doc = json.loads((graded / "out" / "matrix.json").read_text())
    page = graded / "out" / "matrix.html"
    profile = graded / "chromium-profile"
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Tables()
    dom.feed(done.stdout)
    assert dom.links == []  # nothing fetched: the page is self-contained
    vocabs = [v["name"] for v in doc["vocabularies"]]
    header, *rows = dom.tables["matrix"]
    assert header == ["client", "mode", *vocabs]
    by = {(c["client"], c["vocabulary"]): c["report"] for c in doc["cells"]}
    assert [row[0] for row in rows] == [c["name"] for c in doc["clients"]]
    for row in rows:
        assert row[2:] == [cell_text(by[(row[0], v)], icons=False) for v in vocabs]
    for vocab in vocabs:
        header, *checks = dom.tables[f"checks:{vocab}"]
        assert header[1:] == [c["name"] for c in doc["clients"]]
        appends = header.index("appends-text")
        outcome = {row[0]: row[appends] for row in checks}
        envelope = header.index("envelope")
        assert {row[0]: row[envelope] for row in checks}["R1.line-by-line"] == "—"  # not its
        # profile (appends-text's dashboard profile adds the reader checks)
        # a failing cell carries its outcome, the message and the replay command
        check = next(
            c for c in by[("appends-text", vocab)]["checks"] if c["id"] == "D.text-replaces-preview"
        )
        cell = outcome["D.text-replaces-preview"]
        assert cell.startswith("fail") and check["message"][:60] in cell
        assert check["failures"][0]["replay"] in cell
    assert dom.legend == ["pass", "fail", "crash", "error", "warn", "skip", "(known)"]


def test_failures_are_saved_under_out_and_replay_from_the_matrix_s_folder(
    graded: Path, tmp_path: Path
) -> None:
    doc = json.loads((graded / "out" / "matrix.json").read_text())
    assert not (graded / "matrix-failures").exists()  # not beside the config
    cell = next(c for c in doc["cells"] if c["client"] == "appends-text")
    check = next(c for c in cell["report"]["checks"] if c["id"] == "D.text-replaces-preview")
    failure = next(f for f in check["failures"] if f["source"] == "generated")
    saved = Path(failure["saved"])
    assert not saved.is_absolute() and (graded / saved).is_file()
    assert (graded / "out" / "failures") in (graded / saved).parents
    # the client's command has a path relative to the config's folder; the replay command
    # says where to start it, relative to the folder the matrix ran in (a copy of it
    # elsewhere works as well: tests/conformance/suite/test_failures.py)
    argv = replay_args(failure["replay"])
    assert argv[argv.index("--cwd") + 1] == "."
    done = subprocess.run(
        [str(KIT), *argv], cwd=graded, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "judgment: fail" in done.stdout


def test_a_saved_failure_of_every_stream_check_can_be_read_back(tmp_path: Path) -> None:
    """The expectation a failure is saved with names the check's rule in words it accepts."""
    from stella_conform.conformance.checks import BY_ID
    from stella_conform.oracle.corpus import expectation_from, read_jsonl_fixture, write_fixture
    from stella_conform.oracle.decoder import decode_all

    stream = b'{"type":"text","text":"a"}\n'
    summary = decode_all(stream).summary
    for check in BY_ID.values():
        if check.input != "stream":
            continue
        name = f"{check.id}-case"
        write_fixture(tmp_path, name, stream, expectation_from(summary, rules=[check.rule]))
        read_jsonl_fixture(tmp_path / f"{name}.jsonl")  # raises on a rule it does not know


def test_errors_look_different_from_failures_in_html_and_markdown(graded: Path) -> None:
    from stella_conform.conformance.matrix import to_html, to_markdown

    doc = json.loads((graded / "out" / "matrix.json").read_text())
    cell = next(c for c in doc["cells"] if c["client"] == "reference")
    crashed = cell["report"]["checks"][0]
    crashed.update(outcome="error", message="client timeout: no exit within the timeout")
    crashed["failures"] = [{"observed": {"stderr_tail": "Traceback\nKeyError: 'type'"}}]
    cell["report"]["exit_code"] = 1
    page = to_html(doc)
    assert '<td class="error"><span class="outcome">error</span>' in page
    assert "KeyError: &#x27;type&#x27;</pre>" in page  # the stderr tail, escaped
    assert '<td class="error" data-graded=' in page.split('id="matrix"')[1].split("</table>")[0]
    assert ".error {" in page and ".fail {" in page
    text = to_markdown(doc)
    assert "⚙️ error" in text and "### failures, crashes and errors" in text


@pytest.mark.slow
def test_shards_merge_into_the_unsharded_matrix(tmp_path: Path) -> None:
    # The same clients on one vocabulary, one generated case per check, one worker:
    # sharding and merging are mechanics (the graded fixture above runs two workers), and
    # the whole matrix is graded here again to compare with.
    config = write_config(tmp_path, None, examples=1)
    whole_run = kit(
        "matrix", str(config), "--out", str(tmp_path / "whole"), "-j", "1", cwd=tmp_path
    )
    assert whole_run.returncode == 1, whole_run.stdout + whole_run.stderr
    parts = []
    for index in (1, 2):
        out = tmp_path / f"shard{index}"
        run = kit(
            "matrix", str(config), "--out", str(out), "--shard", f"{index}/2", "-j", "1",
            cwd=tmp_path,
        )  # fmt: skip
        assert run.returncode in (0, 1), run.stderr
        parts.append(str(out / "matrix.json"))
    merged = tmp_path / "merged.json"
    html = tmp_path / "merged.html"
    run = kit_inline("report", "merge", "--html", str(html), str(merged), *parts)
    assert run.returncode == 1, run.stdout + run.stderr
    whole = json.loads((tmp_path / "whole" / "matrix.json").read_text())
    got = json.loads(merged.read_text())

    def outcomes(doc: dict) -> dict:
        return {
            (cell["client"], cell["vocabulary"], check["id"]): check["outcome"]
            for cell in doc["cells"]
            for check in cell["report"]["checks"]
        }

    assert outcomes(got) == outcomes(whole)
    assert [c["report"]["summary"] for c in got["cells"]] == [
        c["report"]["summary"] for c in whole["cells"]
    ]
    assert got["exit_code"] == whole["exit_code"] == 1
    assert html.read_text().count("<tr>") == (tmp_path / "whole" / "matrix.html").read_text().count(
        "<tr>"
    )


def test_fixtures_per_check_is_read_and_must_be_a_count(tmp_path: Path) -> None:
    from stella_conform.conformance.matrix import load_config
    from stella_conform.errors import SetupError

    path = tmp_path / "m.toml"
    client = '[[client]]\nname = "a"\ncommand = ["true"]\n'
    path.write_text(f"[matrix]\nfixtures_per_check = 1\n{client}")
    assert load_config(path).fixtures_per_check == 1
    path.write_text(client)
    assert load_config(path).fixtures_per_check is None  # every fixture
    for bad in ("-1", "0", "1.5", "true", '"1"'):
        path.write_text(f"[matrix]\nfixtures_per_check = {bad}\n{client}")
        with pytest.raises(SetupError, match="fixtures_per_check must be a whole number"):
            load_config(path)


def test_shards_of_different_samples_are_not_merged() -> None:
    from stella_conform.conformance.matrix import merge_matrices
    from stella_conform.conformance.report.compare import merge
    from stella_conform.errors import SetupError

    whole = {"seed": 0, "examples": 1, "checks": [], "cells": []}
    sampled = {**whole, "fixtures_per_check": 1}
    with pytest.raises(SetupError, match="'fixtures_per_check' differs"):
        merge([whole, sampled])
    with pytest.raises(SetupError, match="'fixtures_per_check' differs"):
        merge_matrices([sampled, whole])


def test_a_sampled_run_never_says_a_known_failure_can_leave_the_list() -> None:
    """A known failure may pass on a sample only because its fixture was left out."""
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.conformance.report.json_report import report_document
    from stella_conform.conformance.report.markdown import markdown_text
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.report.terminal import terminal_report
    from stella_conform.conformance.suite import CheckResult, SuiteConfig

    result = CheckResult("R1.line-by-line", "reads line by line", "R1", "MUST", "pass", "")
    known = {"R1.line-by-line": "buffers"}
    client = Client(("true",), "report")
    whole = Report(SuiteConfig(client), [result], "default", known_failures=known)
    assert whole.now_passing == ["R1.line-by-line"]
    assert "remove it from the list: R1.line-by-line" in terminal_report(whole, color=False)
    sampled = Report(
        SuiteConfig(client, fixtures_per_check=1), [result], "default", known_failures=known
    )
    assert sampled.now_passing == []
    for text in (terminal_report(sampled, color=False), markdown_text(sampled)):
        assert "remove it from the list" not in text
        assert "not proven fixed: R1.line-by-line" in text
    assert report_document(sampled)["known_failures_now_passing"] == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[matrix]\nexamples = 1\n", "no [[client]]"),
        ('[[client]]\nname = "a"\ncommand = ["/no/such/client"]\n', "not found"),
        ('[[client]]\nname = "a"\ncommand = ["true"]\nmode = "fast"\n', "unknown mode"),
        ('[[client]]\nname = "a"\ncommand = ["true"]\nprofiles = ["x"]\n', "unknown profile"),
        (
            '[[client]]\nname = "a"\ncommand = ["true"]\n[[vocabulary]]\nname = "v"\n'
            'wire_schema = "missing.json"\n',
            "vocabulary 'v'",
        ),
        ("[[client]\n", "malformed"),
        ('[[client]]\nname = "' + "n" * 201 + '"\ncommand = ["true"]\n', "(at most 200)"),
        ('[[vocabulary]]\nname = "' + "v" * 201 + '"\n', "(at most 200)"),
        # a config is a few kilobytes; parsed, a 60 MiB one took the kit to 460 MiB
        ("# padding\n" * 120_000, "larger than 1048576 bytes"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else v,
)
def test_bad_config_is_a_setup_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(text)
    run = kit_inline("matrix", str(path), "--out", str(tmp_path / "out"))
    assert run.returncode == 2
    assert message in run.stderr


def test_every_renderer_shows_how_many_more_strata_failed_alike(tmp_path: Path) -> None:
    """A failure's ``alike`` (more strata that failed the same way) is in every output: the
    terminal, the JSON, matrix.md, matrix.html and the report's Markdown, each renderer
    taking it from one place (``report.alike``), from the failure or from its JSON, where
    a shard's value that is no count shows nothing."""
    from stella_conform.conformance import matrix as m
    from stella_conform.conformance.matrix.document import matrix_document
    from stella_conform.conformance.matrix.run import cell_suite_config
    from stella_conform.conformance.report.failures import alike
    from stella_conform.conformance.report.json_report import report_document
    from stella_conform.conformance.report.junit import junit_xml
    from stella_conform.conformance.report.markdown import markdown_text
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.report.terminal import terminal_report
    from stella_conform.conformance.suite import CaseFailure, CheckResult

    (tmp_path / "m.toml").write_text(
        '[matrix]\nexamples = 0\n\n[[client]]\nname = "c"\ncommand = ["true"]\nmode = "exit"\n'
    )
    config = m.load_config(tmp_path / "m.toml")
    tasks = config.tasks()
    suites = [cell_suite_config(config, c, v) for c, v in config.cells()]
    cell, check = tasks[0]

    def failure(case: str, n: int) -> CaseFailure:
        return CaseFailure(case, "generated", "wrong", {}, {"verdict": "accept"}, alike=n)

    failed = CheckResult(check.id, check.name, check.rule, check.tier, "fail", "wrong")
    failed.failures = [failure("gen-1", 3), failure("gen-2", 1)]
    failed.failed_cases = 2
    shown, second = " (and 3 more strata alike)", " (and 1 more stratum alike)"
    doc = matrix_document(config, tasks, suites, {(cell, check.id): failed}, None)
    assert shown in m.to_markdown(doc), m.to_markdown(doc)
    assert shown in m.to_html(doc)
    report = Report(suites[0], [failed], "stella-default")
    for rendered in (markdown_text(report), terminal_report(report), junit_xml(report)):
        assert shown in rendered and second in rendered, rendered
    assert report_document(report)["checks"][0]["failures"][0]["alike"] == 3
    # a shard anyone could have edited: only a count is shown
    for bad in ("3", True, -2, 2.5, None):
        assert alike({"alike": bad}) == "", bad
    assert alike({"alike": 2}) == " (and 2 more strata alike)"


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_task_is_told_under_its_cell(tmp_path: Path, jobs: int) -> None:
    """Each (cell, check) task is told started, its cases, then finished, under the cell's
    name, in one process or in workers that grade a cell's checks in turn."""
    from collections import defaultdict

    from stella_conform.conformance.matrix import load_config, run_matrix
    from stella_conform.conformance.report.events import CaseGraded, CheckFinished, CheckStarted

    config = load_config(write_config(tmp_path, None, examples=1))
    config.jobs = jobs
    events: list = []
    doc = run_matrix(config, tell=events.append)
    told: dict[tuple[str | None, str], list[str]] = defaultdict(list)
    for event in events:
        check = event.result.id if isinstance(event, CheckFinished) else event.check_id
        told[event.cell, check].append(type(event).__name__)
    graded = {
        (f"{cell['client']} × {cell['vocabulary']}", check["id"]): check
        for cell in doc["cells"]
        for check in cell["report"]["checks"]
    }
    assert set(told) == set(graded)
    for task, names in told.items():
        assert names[0] == CheckStarted.__name__ and names[-1] == CheckFinished.__name__
        assert set(names[1:-1]) <= {CaseGraded.__name__}
        if graded[task]["outcome"] == "pass":
            assert len(names) - 2 == graded[task]["cases"], task
    finished = [e for e in events if isinstance(e, CheckFinished)]
    assert [e.done for e in finished] == list(range(1, len(graded) + 1))


def test_a_cell_whose_client_cannot_start_is_a_setup_error_as_in_run(tmp_path: Path) -> None:
    """A client that cannot start (its script is missing) is not graded, in the matrix as
    in ``run``: its cell says why, the other cells are graded, and the matrix exits 2 (a
    setup error outranks a failure), not 1 for a page of crashes."""
    (tmp_path / "m.toml").write_text(
        f'[matrix]\nexamples = 1\njobs = 1\n\n[[client]]\nname = "dies"\n'
        f'command = ["{PY}", "missing.py"]\nmode = "exit"\n\n'
        f'[[client]]\nname = "reference"\n'
        f'command = ["{PY}", "{ADAPTERS / "python" / "reference_client.py"}"]\n'
        'mode = "persistent"\n'
    )
    out = tmp_path / "out"
    matrix = kit("matrix", str(tmp_path / "m.toml"), "--out", str(out), cwd=tmp_path)
    alone = kit("run", "--mode", "exit", "--examples", "1", "--", PY, "missing.py", cwd=tmp_path)
    assert alone.returncode == 2, alone.stderr
    assert matrix.returncode == 2, matrix.stdout + matrix.stderr
    doc = json.loads((out / "matrix.json").read_text())
    assert doc["exit_code"] == 2
    dies, reference = doc["cells"]
    assert "can't open file" in dies["report"]["error"]
    assert dies["report"]["checks"] == [] and dies["report"]["exit_code"] == 2
    assert reference["report"]["exit_code"] == 0 and reference["report"]["checks"]
    assert "dies" in matrix.stdout and "not graded" in matrix.stdout
    markdown = (out / "matrix.md").read_text()
    assert "### not graded" in markdown and "can't open file" in markdown
    assert "**a client could not be graded**" in markdown
    page = (out / "matrix.html").read_text()
    assert 'id="not-graded"' in page and "can't open file" in html.unescape(page)
