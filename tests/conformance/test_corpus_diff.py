"""``corpus diff``: an external decoder against the kit's oracle, disagreements classified."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ADAPTERS, NODE_REFERENCE

from stella_conform.conformance.differential import OracleAnswer, classify
from stella_conform.oracle.corpus import bundled_fixtures_dir
from stella_conform.oracle.readings import read_stream
from stella_conform.schemas.vocabulary import Vocabulary

_BESIDE = Path(sys.executable).parent / "stella-conform"
EXE = str(_BESIDE) if _BESIDE.exists() else shutil.which("stella-conform")
#: Fixtures that touch registered points, and plain ones (a few: each case starts the oracle).
CHOSEN = (
    "minimal_run",
    "bad_body_missing_field",
    "json_not_object",
    "missing_type",
    "torn_with_trailing_newline",
    "utf8_bom",
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in CHOSEN:
        for suffix in (".jsonl", ".expect.json"):
            shutil.copy(bundled_fixtures_dir() / f"{name}{suffix}", folder)
    return folder


def diff(
    corpus: Path, oracle: str, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict]:
    assert EXE
    report = tmp_path / "diff.json"
    args = [
        EXE,
        "corpus",
        "diff",
        str(corpus),
        "--oracle",
        oracle,
        "-n",
        "4",
        "--json",
        str(report),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return done, json.loads(report.read_text()) if report.exists() else {}


def test_a_documented_bug_of_stella_s_reader_is_its_own_class() -> None:
    torn_utf8 = (bundled_fixtures_dir() / "torn_mid_utf8.jsonl").read_bytes()
    assert classify(read_stream(torn_utf8), OracleAnswer("reject"), torn_utf8) == (
        "bug:torn-utf8-rejects-stream"
    )
    last = (bundled_fixtures_dir() / "bad_body_last_line.jsonl").read_bytes()
    assert classify(read_stream(last), OracleAnswer("accept"), last) == (
        "bug:bad-final-record-dropped"
    )
    # a bad body that is not the last line, dropped, is no documented bug
    middle = (bundled_fixtures_dir() / "bad_body_missing_field.jsonl").read_bytes()
    assert classify(read_stream(middle), OracleAnswer("accept"), middle) == "unexplained"


def test_an_old_type_name_read_and_counted_unrecognized_is_a_documented_bug(
    wire_schema: Path,
) -> None:
    """stella reads ``judge_verdict`` as a verdict (a bad body rejects) and counts it among
    the unrecognized; no one reading gives both, so the count is its own bug."""
    data = (bundled_fixtures_dir() / "learnt_aliases.jsonl").read_bytes()
    readings = read_stream(data, Vocabulary.from_wire_schema(wire_schema))
    (renamed,) = [
        o
        for o in readings.default.outcomes
        if isinstance(o.raw, dict) and o.raw.get("type") == "judge_verdict"
    ]
    assert renamed.tag == "verdict"
    count = readings.default.summary.unrecognized_events
    stella = OracleAnswer("accept", unrecognized_events=count + 1)
    assert classify(readings, stella, data) == "bug:old-type-name-counted-unrecognized"
    # the count one too high without an old name on a line is no documented bug
    plain = data.replace(b'"judge_verdict"', b'"verdict"')
    others = read_stream(plain, Vocabulary.from_wire_schema(wire_schema))
    off = OracleAnswer("accept", unrecognized_events=others.default.summary.unrecognized_events + 1)
    assert classify(others, off, plain) == "unexplained"


@pytest.mark.parametrize(
    "last",
    [b"42", b"not json", b'{"no_type":1}', b'{"type":"text"}', b'"a string"', b"{"],
    ids=["a bare number", "not JSON", "no type", "a bad body", "a string", "cut JSON"],
)
def test_stella_s_reader_drops_a_failing_final_line_however_it_fails(last: bytes) -> None:
    """Its reader drops the last non-blank line whenever it fails, not only a known type
    with a bad body: an accept there is agreement (a final line that is not JSON is a torn
    one), a registered reading, or the documented bug; never unexplained."""
    stream = b'{"type":"text","text":"a"}\n' + last + b"\n\n"
    assert classify(read_stream(stream), OracleAnswer("accept"), stream) != "unexplained"


def test_an_unrecognized_count_is_compared_when_the_oracle_gives_one() -> None:
    stream = (bundled_fixtures_dir() / "from_a_newer_stella.jsonl").read_bytes()
    readings = read_stream(stream)
    assert classify(readings, OracleAnswer("accept", unrecognized_events=2)) is None
    assert classify(readings, OracleAnswer("accept", unrecognized_events=1)) == "unexplained"
    archived = read_stream((bundled_fixtures_dir() / "archived_complete.jsonl").read_bytes())
    assert classify(archived, OracleAnswer("accept", unrecognized_events=2)) == "unknown-count"


def test_classify_names_the_reading_or_unexplained() -> None:
    readings = read_stream(b'{"type":"text","text":"a"}\n[1]\n')
    assert classify(readings, OracleAnswer("reject", 2)) is None
    assert classify(readings, OracleAnswer("reject", None)) is None  # no line given
    assert classify(readings, OracleAnswer("accept")) == "non-object-line"
    assert classify(readings, OracleAnswer("reject", 1)) == "unexplained"
    assert classify(readings, OracleAnswer(None, problem="crashed")) == "unexplained"


@pytest.mark.slow
@pytest.mark.skipif(not NODE_REFERENCE or not shutil.which("node"), reason="no node")
def test_the_node_reference_agrees(corpus: Path, tmp_path: Path) -> None:
    done, doc = diff(corpus, " ".join(NODE_REFERENCE), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    classes = {c for r in doc["corpora"] for c in r["classes"]}
    assert "unexplained" not in classes  # every difference is a registered reading
    assert classes <= {"utf8-bom"}  # Node's decoder drops a BOM: reading B, and it says so


@pytest.mark.slow
def test_a_reader_taking_the_other_readings_is_explained(corpus: Path, tmp_path: Path) -> None:
    oracle = f"{sys.executable} {ADAPTERS / 'python' / 'reading_b_client.py'}"
    done, doc = diff(corpus, oracle, tmp_path)
    assert done.returncode == 0, done.stdout
    fixtures = doc["corpora"][0]
    assert {"non-object-line", "missing-or-non-string-type", "torn-then-newline"} <= set(
        fixtures["classes"]
    )
    assert "reading non-object-line" in done.stdout and "smallest: json_not_object" in done.stdout


@pytest.mark.slow
def test_a_divergent_reader_is_unexplained_and_fails(corpus: Path, tmp_path: Path) -> None:
    oracle = f"{sys.executable} {ADAPTERS / 'broken' / 'skips_bad_lines.py'}"
    done, doc = diff(corpus, oracle, tmp_path)
    assert done.returncode == 1, done.stdout
    unexplained = doc["corpora"][0]["classes"]["unexplained"]
    assert [d["case"] for d in unexplained][:1] == ["bad_body_missing_field"]
    assert "unexplained" in done.stdout and "oracle: accept" in done.stdout


@pytest.mark.slow
def test_stella_s_reader_differs_only_by_readings_and_its_documented_bugs(
    corpus: Path, tmp_path: Path
) -> None:
    """A green run for stella's own reader (modelled): its two bugs are a group of their own,
    and the command exits 0; a new problem would be the only unexplained one."""
    for name in ("bad_body_last_line", "torn_mid_utf8"):
        for suffix in (".jsonl", ".expect.json"):
            shutil.copy(bundled_fixtures_dir() / f"{name}{suffix}", corpus)
    oracle = f"{sys.executable} {ADAPTERS / 'python' / 'stella_like_reader.py'}"
    done, doc = diff(corpus, oracle, tmp_path)
    assert done.returncode == 0, done.stdout
    fixtures = doc["corpora"][0]
    assert {"bug:bad-final-record-dropped", "bug:torn-utf8-rejects-stream"} <= set(
        fixtures["classes"]
    )
    assert fixtures["documented_bugs"] == 2 and fixtures["unexplained"] == 0
    assert "documented bug of stella's reader, bad-final-record-dropped" in done.stdout


@pytest.mark.slow
def test_plain_recordings_need_no_expectations_and_are_named_as_export_names_them(
    tmp_path: Path,
) -> None:
    """A folder of .jsonl recordings alone is a corpus; generated cases carry the names
    `corpus export` gives the same seed's files."""
    plain = tmp_path / "recordings"
    plain.mkdir()
    for name in ("minimal_run", "json_not_object"):
        shutil.copy(bundled_fixtures_dir() / f"{name}.jsonl", plain / f"run-{name}.jsonl")
    assert EXE
    report = tmp_path / "diff.json"
    done = subprocess.run(
        [EXE, "corpus", "diff", str(plain), "--oracle", "false", "-n", "3", "--seed", "5",
         "--json", str(report)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # `false` rejects everything
    doc = json.loads(report.read_text())
    recordings, generated = doc["corpora"]
    assert recordings["cases"] == 2 and recordings["agreed"] == 1  # json_not_object: reject
    exported = tmp_path / "exported"
    subprocess.run(
        [EXE, "corpus", "export", str(exported), "-n", "3", "--seed", "5"],
        capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    names = {p.name.removesuffix(".jsonl") for p in exported.glob("*.jsonl")}
    listed = {d["case"] for items in generated["classes"].values() for d in items}
    assert listed and listed <= names


def test_corpus_diff_compares_every_file_and_refuses_a_folder_it_could_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """corpus diff holds nothing, so the folder reader's cap on files (a --seed-corpus
    holds what it reads) does not apply: every file is compared, not the first 2,000 of a
    bigger folder in silence; and a folder of which nothing could be read (links only) is
    refused (exit 2), not reported as "100 %" and exit 0."""
    from click.testing import CliRunner

    from stella_conform.cli import main
    from stella_conform.conformance.store import recordings

    monkeypatch.setattr(recordings, "FILES_CAP", 2)
    many = tmp_path / "many"
    many.mkdir()
    for index in range(3):
        shutil.copy(bundled_fixtures_dir() / "minimal_run.jsonl", many / f"r{index}.jsonl")
    report = tmp_path / "d.json"
    args = ["corpus", "diff", str(many), "--oracle", "false", "-n", "0", "--json", str(report)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 1, done.output  # `false` rejects each valid run
    assert json.loads(report.read_text())["corpora"][0]["cases"] == 3
    links = tmp_path / "links"
    links.mkdir()
    (links / "r0.jsonl").symlink_to(many / "r0.jsonl")
    refused = CliRunner().invoke(
        main, ["corpus", "diff", str(links), "--oracle", "false", "-n", "0"]
    )
    assert refused.exit_code == 2, refused.output
    assert "symbolic link" in refused.stderr and "no recording of" in refused.stderr
