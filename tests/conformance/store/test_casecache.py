"""The case cache: a check's generated cases are stored once and replayed by later runs.

A replay must grade exactly what generation would (the same cases, in order, with the
same verdicts, and a failure shrunk the same way), a change to anything that decides
the cases must miss, and a cache file is input: a damaged or planted one is refused,
removed and regenerated, never followed, never trusted for a verdict.  Counted in
generated cases (``graded_case`` calls) and compared reports, never in time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTERS, PY_REFERENCE, REPO

from stella_conform.conformance import suite
from stella_conform.conformance.checks import BY_ID
from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.report.json_report import report_document
from stella_conform.conformance.report.model import Report
from stella_conform.conformance.store import cachekey, casecache
from stella_conform.conformance.suite import SuiteConfig, run_suite
from stella_conform.conformance.suite import generated as generated_phase

PY = sys.executable
ENVELOPE = (PY, str(ADAPTERS / "python" / "envelope_client.py"))
JOURNAL = (PY, str(ADAPTERS / "python" / "journal_reader.py"))
BROKEN = (PY, str(ADAPTERS / "broken" / "rejects_unknown_fields.py"))
STREAM_CHECKS = ["R3.unknown-type-inert", "R4.bad-body-rejected", "R5.unknown-fields-ignored"]


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many cases were generated (drawn by Hypothesis) since the test began."""
    count = [0]
    made = suite.graded_case

    def counting(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return made(*args, **kwargs)

    monkeypatch.setattr(generated_phase, "graded_case", counting)
    return count


def _config(tmp_path: Path, argv: tuple[str, ...] = PY_REFERENCE, **kw: Any) -> SuiteConfig:
    return SuiteConfig(
        client=Client(argv, mode="persistent"),
        examples=kw.pop("examples", 10),
        failures_dir=tmp_path / "failures",
        database_dir=None,
        case_cache=tmp_path / "cases",
        **kw,
    )


#: What the case cache did in the last run graded (the report's ``case_cache``).
CACHE_SAID: list[Any] = []


def _graded(config: SuiteConfig, checks: list[str] = STREAM_CHECKS) -> dict[str, Any]:
    """The run's JSON report, less what differs between any two runs (times, case ids,
    what the cache did: kept in :data:`CACHE_SAID`)."""
    results = run_suite([BY_ID[c] for c in checks], config)
    doc = report_document(Report(config, results, config.vocabulary().ident, {}))
    doc.pop("date")
    CACHE_SAID[:] = [doc.pop("case_cache", None)]
    for check in doc["checks"]:
        check.pop("seconds")
        for failure in check["failures"]:
            failure["observed"].pop("seconds")
            (failure["observed"].get("summary") or {}).pop("id", None)
    return doc


def test_a_second_run_grades_the_first_ones_cases_without_generating_them(
    tmp_path: Path, generated: list[int]
) -> None:
    cold = _graded(_config(tmp_path))
    drawn = generated[0]
    assert drawn >= 30
    assert CACHE_SAID[0] == {"folder": str(tmp_path / "cases"), "read": 0, "written": 3,
                             "refused": 0}  # fmt: skip
    warm = _graded(_config(tmp_path))
    assert generated[0] == drawn, "the second run generated cases"
    assert CACHE_SAID[0]["read"] == 3  # and the report says so
    assert warm == cold
    without = _graded(dataclasses.replace(_config(tmp_path), case_cache=None))
    assert without == cold


def test_a_failure_found_in_cached_cases_is_shrunk_as_without_the_cache(
    tmp_path: Path, generated: list[int]
) -> None:
    """The reference client's run keeps the cases; a broken client fails one of them, and
    Hypothesis then runs as usual: the same shrunk case as a run without a cache."""
    _graded(_config(tmp_path))
    broken = _graded(_config(tmp_path, BROKEN))
    assert [c["outcome"] for c in broken["checks"]] == ["pass", "pass", "fail"]
    uncached = _graded(dataclasses.replace(_config(tmp_path, BROKEN), case_cache=None))
    assert broken == uncached


@pytest.mark.parametrize(
    ("argv", "checks"),
    [(ENVELOPE, ["E.unknown-keys-ignored"]), (JOURNAL, ["J.unknown-event-inert"])],
)
def test_envelope_and_journal_cases_are_cached_too(
    tmp_path: Path, generated: list[int], argv: tuple[str, ...], checks: list[str]
) -> None:
    config = _config(tmp_path, argv)
    cold = _graded(config, checks)
    drawn = generated[0]
    assert drawn > 0 and cold["checks"][0]["outcome"] == "pass"
    assert _graded(config, checks) == cold
    assert generated[0] == drawn


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 1},
        {"examples": 11},
        {"claims": Claims(knows=frozenset({"text", "run_complete"}))},
        {"wire_schema": "stella-older"},
    ],
    ids=["seed", "examples", "claims", "vocabulary"],
)
def test_any_change_to_what_decides_the_cases_misses(
    tmp_path: Path, generated: list[int], change: dict[str, Any]
) -> None:
    checks = ["R3.unknown-type-inert"]
    _graded(_config(tmp_path), checks)
    drawn = generated[0]
    _graded(dataclasses.replace(_config(tmp_path), **change), checks)
    assert generated[0] > drawn


def test_a_change_to_the_generators_code_misses(
    tmp_path: Path, generated: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = ["R3.unknown-type-inert"]
    _graded(_config(tmp_path), checks)
    drawn = generated[0]
    (tmp_path / "generators").mkdir()
    monkeypatch.setattr(casecache, "code_digest", lambda: "another generator")
    _graded(_config(tmp_path), checks)
    assert generated[0] > drawn


def test_a_saved_failure_in_the_example_database_is_replayed_as_without_the_cache(
    tmp_path: Path, generated: list[int]
) -> None:
    """The database holds a failure for the check and the cache its cases (the reference
    client's): the run reads the cache all the same, the broken client fails a cached
    case, and the check is graded afresh, the failure replayed and shrunk: the report is
    the one a run without the cache gives.  (A client that passes every cached case and
    fails an entry: tests/generators/engine/test_kit_drawn.py.)"""
    import shutil

    checks = ["R5.unknown-fields-ignored"]
    with_db = dataclasses.replace(_config(tmp_path, BROKEN), database_dir=tmp_path / "db")
    first = _graded(with_db, checks)
    assert first["checks"][0]["outcome"] == "fail"
    _graded(dataclasses.replace(_config(tmp_path), database_dir=None), checks)  # kept
    assert len(list((tmp_path / "cases").iterdir())) == 1
    shutil.copytree(tmp_path / "db", tmp_path / "db-copy")
    again = _graded(with_db, checks)
    uncached = _graded(
        dataclasses.replace(with_db, database_dir=tmp_path / "db-copy", case_cache=None), checks
    )
    assert again == uncached
    assert again["checks"][0]["failures"][0]["saved"] == first["checks"][0]["failures"][0]["saved"]


# ---------------------------------------------------------------------- a cache is input


def _cache_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cases").glob("*.cases"))


def _secret() -> bytes:
    secret, source = cachekey.cache_secret()
    assert secret is not None, source
    return secret


def _tamper_index(path: Path, change: Any, *, signed: bool = True) -> None:
    """Change the index; ``signed``: as a writer holding this run's secret would (the
    validation behind the HMAC is tested so), else as anyone else can."""
    data = path.read_bytes()
    footer = casecache._FOOTER
    magic, offset, length, mac = footer.unpack(data[-footer.size :])
    index = json.loads(data[offset : offset + length])
    change(index)
    raw = json.dumps(index).encode()
    if signed:
        mac = cachekey.sign(_secret(), index["key"], raw)
    path.write_bytes(data[:offset] + raw + footer.pack(magic, offset, len(raw), mac))


def _flip_a_stream_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))


TAMPERING = {
    "a stream byte": _flip_a_stream_byte,
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:-7]),
    "another key": lambda p: _tamper_index(p, lambda i: i.update(key="0" * 64)),
    "unknown mutation": lambda p: _tamper_index(
        p, lambda i: i["cases"][0].update(mutations=["rm -rf"])
    ),
    "unknown reading": lambda p: _tamper_index(
        p, lambda i: i["cases"][0].update(touched=["not-a-point"])
    ),
    "negative size": lambda p: _tamper_index(p, lambda i: i["cases"][0].update(size=-1)),
    "huge index": lambda p: p.write_bytes(
        p.read_bytes()[: -casecache._FOOTER.size]
        + casecache._FOOTER.pack(casecache.MAGIC, 0, 2**40, b"\0" * 32)
    ),
    "not json": lambda p: p.write_bytes(
        b"{" * 100
        + casecache._FOOTER.pack(
            casecache.MAGIC, 0, 100, cachekey.sign(_secret(), p.stem, b"{" * 100)
        )
    ),
    "unsigned change": lambda p: _tamper_index(
        p, lambda i: i["cases"][0].update(name="renamed"), signed=False
    ),
    "more cases than asked for": lambda p: _tamper_index(
        p, lambda i: i.update(cases=i["cases"] * 3)
    ),
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_cache_file_is_removed_and_its_cases_generated_again(
    tmp_path: Path, generated: list[int], how: str, capfd: pytest.CaptureFixture[str]
) -> None:
    checks = ["R3.unknown-type-inert"]
    cold = _graded(_config(tmp_path), checks)
    (path,) = _cache_files(tmp_path)
    TAMPERING[how](path)
    drawn = generated[0]
    again = _graded(_config(tmp_path), checks)
    assert again == cold
    assert generated[0] > drawn  # generated afresh...
    assert _cache_files(tmp_path) == [path]  # ...and kept again, whole
    assert path.read_bytes()[-casecache._FOOTER.size :].startswith(casecache.MAGIC)
    if how == "a stream byte":  # found only when the case is read: said so
        assert "case cache file" in capfd.readouterr().err


def test_a_link_or_a_fifo_in_the_cache_is_refused_without_following_it(
    tmp_path: Path, generated: list[int]
) -> None:
    checks = ["R3.unknown-type-inert"]
    _graded(_config(tmp_path), checks)
    (path,) = _cache_files(tmp_path)
    target = tmp_path / "elsewhere"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    drawn = generated[0]
    _graded(_config(tmp_path), checks)
    assert generated[0] > drawn
    assert not path.is_symlink() and target.read_bytes()  # replaced, the target untouched
    path.unlink()
    os.mkfifo(path)  # would block a plain open() for ever
    _graded(_config(tmp_path), checks)
    assert path.is_file()


def test_the_folder_is_kept_under_its_size_by_removing_the_least_recently_used(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    for n in range(5):
        path = folder / f"{n}.cases"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (n, n))
    casecache._keep_under(folder, 2500)
    assert sorted(p.name for p in folder.iterdir()) == ["3.cases", "4.cases"]


def test_the_footer_format_is_what_the_module_says() -> None:
    assert casecache._FOOTER.size == len(casecache.MAGIC) + 16 + 32
    assert struct.calcsize("<QQ32s") == 16 + 32


pytest_plugins = ["pytester"]


def test_the_pytest_plugin_keeps_its_cases_under_the_rootdir(
    pytester: pytest.Pytester, generated: list[int]
) -> None:
    args = ("--stella-client", " ".join(PY_REFERENCE), "--stella-examples", "5",
            "-k", "R5", "-p", "no:cacheprovider")  # fmt: skip
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=1)
    drawn = generated[0]
    assert drawn > 0 and list((pytester.path / ".stella-conform" / "cases").glob("*.cases"))
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=1)
    assert generated[0] == drawn
    pytester.runpytest_inprocess(*args, "--stella-case-cache", "off").assert_outcomes(passed=1)
    assert generated[0] > drawn


def test_a_temporary_file_a_killed_kit_left_is_removed_later(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    old, fresh = folder / f".k{casecache.SUFFIX}.abc.tmp", folder / f".j{casecache.SUFFIX}.d.tmp"
    old.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(old, (0, 0))
    casecache._keep_under(folder, 10**9)
    assert not old.exists() and fresh.exists()


def test_the_key_is_the_wire_schema_the_run_read_not_the_file_as_it_is_now(
    tmp_path: Path,
) -> None:
    """The vocabulary's schema document keys the cases, as the safe reader read it when
    the vocabulary was made: the file is not read a second time (unchecked, once a
    check), so an edit after the start neither changes this run's key nor is missed by
    the next run's."""
    from stella_conform.schemas.vocabulary import Vocabulary

    path = tmp_path / "wire.schema.json"
    document = json.loads((REPO / "schemas" / "events.older.schema.json").read_text())
    path.write_text(json.dumps(document))
    vocab = Vocabulary.from_wire_schema(path)
    check = BY_ID["R3.unknown-type-inert"]

    def key(v: Vocabulary) -> str:
        return casecache.cache_key(check, v, seed=0, examples=10, claims={})

    before = key(vocab)
    document["description"] = "edited while the run went on"
    path.write_text(json.dumps(document))
    assert key(vocab) == before
    assert key(Vocabulary.from_wire_schema(path)) != before
