"""A failing case saved in the fixture format, and a check's failures bounded: the
smallest of each distinct failure whole, the rest counted."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import Check, GradedCase, Judgment, expected_text
from stella_conform.conformance.checks.claims import COMPUTES, DEPENDS, TURN_BOUNDARY, Claims
from stella_conform.conformance.checks.identity import failure_identity
from stella_conform.conformance.checks.judging import summary_key
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.report.excerpt import decisive_lines
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.model import CaseFailure, CheckResult
from stella_conform.conformance.suite.replay import replay_command
from stella_conform.conformance.suite.travel import portable_path
from stella_conform.oracle.decoder import Kind, decode
from stella_conform.safe_files import remove_written
from stella_conform.safe_text import clip, json_safe, no_surrogates
from stella_conform.schemas.vocabulary import Vocabulary, bundled_types

#: The longest failure message a report keeps (the rest is cut, and says so).
MESSAGE_CAP = 2000

#: A failing case's stream is kept for its excerpt up to this size (the excerpt itself is
#: short; the saved case file always has the whole stream).
STREAM_KEPT = 1024 * 1024

#: A failing case other than a check's smallest is saved whole up to this size; a larger
#: one is listed by its size and sha256 (the smallest, the one replayed, is always saved
#: whole): a client that fails on every long line must not fill the failures folder and
#: the report with megabytes per case.
SAVED_WHOLE = 256 * 1024

#: The files the check being graded wrote to the failures folder (:func:`tracking_written`).
_written: list[str] | None = None


def save_failure(
    config: SuiteConfig, check: Check, case: GradedCase, failure: CaseFailure
) -> CaseFailure:
    """Save a failing case in the fixture format into ``failure``: its path, the replay
    command, and the files written for it (which :func:`keep_bounded` may remove again,
    the only way a case is saved: every caller's failures are bounded alike); no path and
    no replay when it cannot be written (the failure is still reported, with a warning: a
    full disk, or a client that swapped the failures folder for a link)."""
    failure.saved, failure.replay, failure.written = _saved(config, check, case)
    failure.expected = expected_computed(failure.expected, config.claims.computes)
    return failure


def _saved(
    config: SuiteConfig, check: Check, case: GradedCase
) -> tuple[str | None, str | None, tuple[str, ...]]:
    try:
        return _write_case(config, check, case)
    except OSError as exc:
        import sys

        said = str(exc) if getattr(exc, "why", None) else (exc.strerror or str(exc))
        print(f"stella-conform: warning: a failing case of {check.id} was not saved: {said}",
              file=sys.stderr)  # fmt: skip
        return None, None, ()


def _write_case(
    config: SuiteConfig, check: Check, case: GradedCase
) -> tuple[str, str | None, tuple[str, ...]]:
    """Write the case: (its path, the replay command, the files this wrote that were not
    there before)."""
    digest = hashlib.sha256(case.stream + case.command.encode() + repr(case.scenario).encode())
    name = f"{check.id}-{digest.hexdigest()[:10]}"
    directory = config.failures_dir
    description = f"counterexample for {check.id} ({check.name})"
    kind = case.input_kind
    files = kind.saved_files(directory, name)
    fresh = tuple(str(f) for f in files if not os.path.lexists(f))
    if _written is not None:
        _written.extend(fresh)  # before they are: a stop may come while they are written
    written = kind.save(
        directory, name, case, check=check, description=description, seed=config.seed
    )
    path = str(written)
    path = portable_path(path)  # relative to the working folder when inside it
    return path, replay_command(path, config.client, check, config), fresh


def distinct_failure(failure: CaseFailure) -> str:
    """What tells a check's failures apart: their identity
    (:func:`~stella_conform.conformance.checks.identity.failure_identity`), the one fuzz
    tells its finds apart by. Two failures alike are one bug shown twice; two unlike are
    two, each replayed by its own case."""
    return failure.identity


def keep_bounded(failures: Sequence[CaseFailure]) -> None:
    """A check's failures as saved: the smallest generated case of each distinct failure
    (:func:`distinct_failure`) whole, with its own replay line; any other case of that
    failure that this run wrote and that is larger than :data:`SAVED_WHOLE` removed from
    the failures folder again, and listed as not saved, by its size and sha256, its replay
    line the smallest one's of its kind (a fixture's, where none was generated).  A check
    lists a bounded number of distinct failures
    (:data:`~stella_conform.conformance.suite.model.FAILURES_KEPT`; fuzz's
    ``FAILURES_PER_CHECK`` beside them), so what a failing client did costs the folder that
    many whole cases and a bounded part of the rest, by ``run``, ``fuzz``, the matrix and
    the pytest plugin alike; in any order the failures come."""
    kinds: dict[str, list[CaseFailure]] = {}
    for failure in failures:
        kinds.setdefault(distinct_failure(failure), []).append(failure)
    for alike in kinds.values():
        saved = [f for f in alike if f.source != "fixture" and f.saved is not None]
        smallest = min(saved, key=lambda f: (f.size, f.stream or b"")) if saved else alike[0]
        for failure in alike:
            if failure is smallest or failure.source == "fixture":
                continue
            if failure.saved is not None and failure.saved == smallest.saved:
                continue  # the same case, listed twice (by fuzz and by its final pass)
            if failure.not_saved is None:  # (one bounded before, by fuzz's final pass: re-pointed)
                if failure.size <= SAVED_WHOLE or not failure.written:
                    continue
                for path in failure.written:
                    with contextlib.suppress(OSError):
                        remove_written(Path(path))
                failure.written = ()
                failure.saved = None
            failure.not_saved = (
                f"{failure.size} bytes, over {SAVED_WHOLE // 1024} KiB: only the smallest "
                f"generated case of this failure is saved whole; the replay line replays it "
                f"({smallest.saved})"
            )
            failure.replay = smallest.replay


def case_failure(check: Check, case: GradedCase, j: Judgment, obs: Observation) -> CaseFailure:
    # What the client wrote is kept only within limits: a 4 MB preview or a summary nested
    # a thousand deep would otherwise be copied into every report (docs/reliability.md).
    return CaseFailure(
        case=case.name,
        source=case.source,
        message=clip(no_surrogates(j.message), MESSAGE_CAP),
        expected=failure_expected(check, case),
        observed=json_safe(obs.to_json()),
        mutations=case.mutations,
        stream=case.stream if len(case.stream) <= STREAM_KEPT else None,
        decisive=decisive_lines(case, obs, j.message),
        verdict=j.verdict,
        size=len(case.stream),
        cause=clip(no_surrogates(obs.cause), MESSAGE_CAP) if obs.cause else None,
        sha256=hashlib.sha256(case.stream).hexdigest(),
        identity=failure_identity(check.id, j, obs),
    )


def failure_expected(check: Check, case: GradedCase) -> dict[str, Any]:
    """What a correct client does with a failing case, as a failure shows it: the case's
    usual fields (:func:`expected_text`) and the fields the check compares, with every
    other conforming reading's values of them."""
    reading = case.reading()
    wanted = [*case.input_kind.expected_keys, *(summary_key(f) for f in check.fields)]
    keys = [k for k in dict.fromkeys(wanted) if k in reading]
    if len(keys) == len(case.input_kind.expected_keys):
        return expected_text(case)
    out: dict[str, Any] = {k: reading[k] for k in keys}
    others = case.input_kind.also_conforming(case, keys)
    if others:
        out["also_conforming"] = others
    return out


def expected_computed(expected: dict[str, Any], computes: frozenset[str] | None) -> dict[str, Any]:
    """A failure's expected side limited to what the client claims to compute
    (``computes``; ``None``: everything): the verdict always, the line of a rejection, and
    each field it computes (a field no client can claim, an oracle's note, stays); another
    conforming reading is kept only where it differs on what is left."""
    if computes is None:
        return expected

    def kept(entry: dict[str, Any]) -> dict[str, Any]:
        rejected = entry.get("verdict") == "reject"
        return {
            k: v
            for k, v in entry.items()
            if k not in COMPUTES or k in computes or (k == "rejected_line" and rejected)
        }

    out = kept({k: v for k, v in expected.items() if k != "also_conforming"})
    others = []
    for entry in expected.get("also_conforming", ()):
        other = kept(entry)
        if {k: v for k, v in other.items() if k != "reading"} != {
            k: out.get(k) for k in other if k != "reading"
        }:
            others.append(other)
    if others:
        out["also_conforming"] = others
    return out


def smallest_first(
    failures: list[CaseFailure],
    outcome: str,
    disputed: Callable[[CaseFailure], int] | None = None,
) -> list[CaseFailure]:
    """Each distinct failing case once, those of the check's outcome first, smallest first
    (the first is shown in full; the others one line each).

    ``disputed`` (:func:`claim_dispute`) says how far the client could dispute a case from
    its claims (0: not at all): the case shown first is then the smallest of the check's
    outcome that it disputes least, the others following smallest first."""
    seen: set[tuple[Any, ...]] = set()
    distinct = []
    for f in failures:
        key = (f.size, f.stream) if f.stream is not None else (f.size, f.case, f.saved)
        if key not in seen:
            seen.add(key)
            distinct.append(f)
    wanted = "fail" if outcome in ("fail", "warn") else outcome
    ordered = sorted(distinct, key=lambda f: (f.verdict != wanted, f.size))
    if disputed is None or not ordered:
        return ordered
    best: tuple[int, CaseFailure] | None = None
    for f in ordered:  # smallest first: the first undisputed case ends the search
        if f.verdict != ordered[0].verdict:
            break
        rank = disputed(f)
        if best is None or rank < best[0]:
            best = (rank, f)
        if rank == 0:
            break
    assert best is not None
    ordered.remove(best[1])
    return [best[1], *ordered]


#: How far a client could dispute a failing case (:func:`claim_dispute`).
UNDISPUTED, CONTESTED, DISPUTED = 0, 1, 2


def claim_dispute(check: Check, claims: Claims, vocab: Vocabulary) -> Callable[[CaseFailure], int]:
    """How far the client could dispute a failing case of ``check`` from its claims, as
    :func:`smallest_first` ranks a headline case:

    * :data:`DISPUTED`: a stream case the claims do not cover: a line of a type another
      stella writes and this one does not (``complete``), or that the client claims to
      know from elsewhere; a line of a type it knows that the oracle reads as
      unrecognized (a stage without a scope, the older stella's shape); or a line
      deciding the failure of a type the client reads for none of the fields it claims to
      compute (a ``stage`` scope, from a client that keeps no stages);
    * :data:`CONTESTED`: the case reaches a registered point, where the contract reads two
      ways (its expected side lists other conforming readings);
    * :data:`UNDISPUTED`: otherwise.
    """
    foreign = (bundled_types() | (claims.knows or frozenset())) - vocab.written
    read = _types_read(claims, vocab)

    def dispute(failure: CaseFailure) -> int:
        if check.kind.line_outcomes and failure.stream is not None:  # read as a stream
            decisive = set(failure.decisive)
            for o in decode(failure.stream, vocab):
                tag = o.tag if isinstance(o.tag, str) else None
                if tag is None:
                    continue
                if tag in foreign or (o.kind is Kind.UNKNOWN and tag in vocab.recognized):
                    return DISPUTED
                unread = read is not None and tag not in read
                if unread and o.kind is not Kind.UNKNOWN and o.line in decisive:
                    return DISPUTED
        return CONTESTED if failure.expected.get("also_conforming") else UNDISPUTED

    return dispute


def _types_read(claims: Claims, vocab: Vocabulary) -> frozenset[str] | None:
    """The event types whose fields feed a summary field the client claims to compute
    (``DEPENDS``); ``None`` without the claim (every type's)."""
    if claims.computes is None:
        return None
    out: set[str] = set()
    for name in claims.computes:
        for group in DEPENDS.get(name, ()):
            for tag in group:
                out.update(
                    (vocab.turn_boundary, "turn_complete") if tag == TURN_BOUNDARY else (tag,)
                )
    return frozenset(out)


@contextlib.contextmanager
def tracking_written() -> Iterator[list[str]]:
    """Within it, the files :func:`save_failure` writes are listed (in the list it gives),
    each before it is written: a stop may come while it is."""
    global _written
    before, _written = _written, []
    try:
        yield _written
    finally:
        _written = before


def bound_stopped(result: CheckResult, written: list[str]) -> None:
    """A stopped check's failures folder as a finished check leaves it: its failures
    bounded, and any file it wrote that no failure of it names (a case saved the moment
    the stop came, before it was listed) removed."""
    keep_bounded(result.failures)
    kept = {path for f in result.failures if f.saved is not None for path in f.written}
    for path in written:
        if path not in kept:
            with contextlib.suppress(OSError):
                remove_written(Path(path))
