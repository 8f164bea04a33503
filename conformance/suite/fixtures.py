"""Curated fixtures as cases: where a check's fixture lives, and a fixture file read and
validated (each file once per version, each stream's careful reading once)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.checks.claims import Claims
from stella_conform.oracle.corpus import (
    SCENARIO_SUFFIX,
    TraceFixture,
    read_envelope_fixture,
    read_jsonl_fixture,
    read_scenario,
)
from stella_conform.oracle.decoder import Decoded
from stella_conform.oracle.envelope import envelope_parts
from stella_conform.oracle.readings import careful_default
from stella_conform.schemas.vocabulary import Vocabulary


def fixture_path(check: Check, name: str, directory: Path) -> Path:
    """Where a check's named fixture lives: streams at the top, the others in subfolders."""
    if check.input == "envelope":
        return directory / "envelopes" / f"{name}.json"
    if check.input == "scenario":
        return directory / "scenarios" / f"{name}{SCENARIO_SUFFIX}"
    if check.input == "journal":
        return directory / "trace" / f"{name}.jsonl"
    return directory / f"{name}.jsonl"


def load_case(
    path: Path, vocab: Vocabulary | None = None, *, data: bytes | None = None
) -> GradedCase:
    """A fixture file of any kind (stream, envelope, scenario) as a case, validated.

    The case file is read once (its expectation file beside it once too); ``data`` is its
    bytes where the caller has read them already (``replay``, through the safe reader,
    refusing a link): then the file is not read again, so what is graded is what was
    checked, never a file swapped in between."""
    if path.name.endswith(SCENARIO_SUFFIX):
        scenario = read_scenario(path, data)
        name = scenario.name
        return GradedCase(
            name, scenario.stream, "fixture", vocab=vocab, kind="scenario",
            scenario=dict(scenario.scenario),
        )  # fmt: skip
    if path.suffix == ".json":
        envelope = read_envelope_fixture(path)
        return GradedCase(
            envelope.name, envelope.data if data is None else data, "fixture", vocab=vocab,
            kind="envelope", command=envelope.command,
        )  # fmt: skip
    fixture = _read_jsonl_fixture(path)  # validates the expectation too
    if isinstance(fixture, TraceFixture):
        journal = fixture.data if data is None else data
        return GradedCase(fixture.name, journal, "fixture", vocab=vocab, kind="journal")
    stream = fixture.stream if data is None else data
    # also_conforming is the oracle's to compute (tests/oracle/test_fixture_corpus.py holds the
    # file to it), so a fixture cannot widen what passes
    decoded, touched = _careful_reading(stream, vocab)
    return GradedCase(
        fixture.name, stream, "fixture", vocab=vocab, decoded=decoded, touched=touched
    )


def _read_jsonl_fixture(path: Path) -> Any:
    """:func:`read_jsonl_fixture`, once per file and version: every check of a run loads
    its fixtures, the same few dozen files, each validated against the expectation schema
    (a millisecond a file) and decoded carefully, once per check."""
    try:
        st = path.stat()
    except OSError:
        return read_jsonl_fixture(path)  # says what is wrong with it
    return _fixture_file(str(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _fixture_file(path: str, inode: int, size: int, mtime_ns: int) -> Any:
    return read_jsonl_fixture(Path(path))


def _careful_reading(
    stream: bytes, vocab: Vocabulary | None
) -> tuple[Decoded | None, frozenset[str] | None]:
    """The oracle's careful reading of a fixture's stream, once per stream and vocabulary."""
    # recognized, not known: a claimed type this stella never writes (complete) is read
    # as the stella that wrote it defined it, where a fixture holds one
    key = (vocab.ident, vocab.recognized) if vocab is not None else None
    found = _CAREFUL_READINGS.get((stream, key))
    if found is None:
        decoded, touched = careful_default(stream, vocab)
        found = (decoded, frozenset(touched))
        if len(_CAREFUL_READINGS) >= 256:
            _CAREFUL_READINGS.clear()
        _CAREFUL_READINGS[(stream, key)] = found
    return found


#: Fixture streams' careful readings, by stream and vocabulary (see _careful_reading).
_CAREFUL_READINGS: dict[tuple[bytes, Any], tuple[Decoded, frozenset[str]]] = {}


def fixture_case(
    check: Check, name: str, vocab: Vocabulary, directory: Path, claims: Claims | None = None
) -> GradedCase:
    case = load_case(fixture_path(check, name, directory), vocab)
    if claims is not None:
        case.reads = claims.reads
    return case


def claimed(case: GradedCase, claims: Claims) -> bool:
    """Whether the case is of a kind the client claims to read (envelope shapes)."""
    if case.kind != "envelope" or claims.reads is None:
        return True
    return claims.reads_parts(envelope_parts(case.stream, case.command))
