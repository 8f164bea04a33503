"""Curated fixtures as cases: where a check's fixture lives, and a fixture file read and
validated, as its input kind reads it (:mod:`~stella_conform.conformance.kinds`)."""

from __future__ import annotations

from pathlib import Path

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.kinds import KINDS
from stella_conform.schemas.vocabulary import Vocabulary


def fixture_path(check: Check, name: str, directory: Path) -> Path:
    """Where a check's named fixture lives: streams at the top, the others in their kind's
    subfolder."""
    return check.kind.fixture_path(directory, name)


def load_case(
    path: Path, vocab: Vocabulary | None = None, *, data: bytes | None = None
) -> GradedCase:
    """A fixture file of any kind (stream, envelope, scenario, journal) as a case, validated.

    The case file is read once (its expectation file beside it once too); ``data`` is its
    bytes where the caller has read them already (``replay``, through the safe reader,
    refusing a link): then the file is not read again, so what is graded is what was
    checked, never a file swapped in between."""
    return KINDS.load(path, vocab, data=data)


def fixture_case(
    check: Check, name: str, vocab: Vocabulary, directory: Path, claims: Claims | None = None
) -> GradedCase:
    case = load_case(fixture_path(check, name, directory), vocab)
    if claims is not None:
        case.reads = claims.reads
    return case


def claimed(case: GradedCase, claims: Claims) -> bool:
    """Whether the case is of a kind the client claims to read (envelope shapes)."""
    if claims.reads is None:
        return True
    parts = case.input_kind.parts(case)
    return parts is None or claims.reads_parts(parts)
