"""Real recordings as the runs that generated cases start from: ``--seed-corpus``.

Every stella user has real streams: archived ``stella-events.jsonl`` files, recorded
``--output-format json`` envelopes.  They show what stella really writes — event
bodies, orderings and sizes no generator was written to produce, event types of a
newer stella.  Given a folder of them, ``fuzz`` (and the ``run`` that replays what it
found) lets a generated stream case start from one of them instead of a generated
run: the check's mutations are then applied to the real events, and the reference
decoder, as always, says what a correct client does with the result.

A recording is read where it fits the kit's case structure — a valid run: every line
a JSON object with a ``type`` (known or not), accepted by the reference decoder,
ending on a terminator, nothing the kit's line encoding would change (duplicate keys,
integers JSON cannot round-trip) — and skipped with a warning otherwise.  Files are
read through the safe reader (a FIFO, a device, a file over the cap is refused), so a
hostile folder costs a warning, never a hang.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from stella_conform.generators.runs import Run, encode, runs
from stella_conform.oracle.decoder import Kind, decode_all
from stella_conform.safe_files import RefusedFile, read_regular
from stella_conform.schemas.vocabulary import Vocabulary

#: The largest recording read (a long session's stream is a few MiB).
RECORDING_CAP = 8 * 1024 * 1024
#: The most files looked at under one folder.
FILES_CAP = 2000
#: Why a link inside a folder of recordings is not read.
LINK_SKIPPED = (
    "is a symbolic link inside the folder: not followed (copy the file in, or name the "
    "folder it is in)"
)
#: The most events of one recording (longer ones are skipped: each case copies them).
EVENTS_CAP = 5000


@dataclass(frozen=True)
class Skipped:
    """A file that was not read as a recording, and why."""

    path: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


@dataclass
class SeedCorpus:
    """The recordings read, and the files skipped."""

    recordings: list[Run]
    skipped: list[Skipped]
    #: Files of other kinds (a README, a fixture's expectation) passed over in silence.
    ignored: int = 0

    def summary(self) -> str:
        # an envelope's recording is a .json document, a stream's .jsonl lines
        envelopes = sum((run.recording or "").endswith(".json") for run in self.recordings)
        streams = len(self.recordings) - envelopes
        return (
            f"seed corpus: {len(self.recordings)} recording(s) read "
            f"({streams} stream(s), {envelopes} envelope(s)), "
            f"{len(self.skipped)} skipped"
        )


def _files(path: Path, recursive: bool) -> Iterator[Path]:
    if not path.is_dir():
        yield path
        return
    for root, dirs, names in os.walk(path, followlinks=False):
        dirs.sort()
        if not recursive:
            dirs.clear()
        for name in sorted(names):
            yield Path(root) / name


def folder_files(
    top: Path,
    wanted: Callable[[Path], bool],
    cap: int = RECORDING_CAP,
    *,
    recursive: bool = True,
    limit: int | None = FILES_CAP,
) -> Iterator[tuple[Path, bytes | Skipped | None]]:
    """A folder of recordings read by the one rule every command holds (``--seed-corpus``,
    ``corpus diff``), one file at a time: ``(path, its bytes)``, ``(path, Skipped)`` for a
    file it will not read, ``(path, None)`` for a file of another kind (not ``wanted``).

    A path named by the user is read as named, a link to a file included.  Inside a
    named folder, only regular files are read: a link is skipped, not followed (a
    recordings folder may come from elsewhere, a CI artifact or a checkout, and a link
    in it to a 0600 file would be played to a client, saved with a failure and shared),
    as are a FIFO (a read would wait for ever), a device and a file over ``cap``; links
    to folders are not entered.  A file skipped is a warning for the caller to show,
    never the end of the command.  At most ``limit`` files are looked at (a caller that
    holds what it reads: ``--seed-corpus``); the files past it are one last ``Skipped``
    that says how many, never dropped in silence.
    """
    looked = 0
    for path in _files(top, recursive):
        looked += 1
        if limit is not None and looked > limit:
            more = 1 + sum(1 for _ in _files(top, recursive)) - looked
            yield top, Skipped(str(top), f"{more} more file(s) not looked at (at most {limit})")
            return
        inside = path != top
        if inside and not wanted(path):
            yield path, None
            continue
        if inside and path.is_symlink():
            yield path, Skipped(str(path), LINK_SKIPPED)
            continue
        try:  # (not following a link as the last part either: one made since is refused)
            yield path, read_regular(path, cap, follow=not inside)
        except RefusedFile as exc:
            yield path, Skipped(str(path), exc.why)
        except OSError as exc:
            yield path, Skipped(str(path), f"cannot be read: {exc.strerror or exc}")


def _is_recording(path: Path) -> bool:
    name = path.name
    if name.endswith((".expect.json", ".scenario.json")) or name.startswith("."):
        return False  # a fixture's expectation, a wrapper scenario, a hidden file
    return name.endswith((".jsonl", ".json"))


def load(paths: Iterable[Path], vocab: Vocabulary) -> SeedCorpus:
    """The recordings under ``paths`` (files or folders) that fit, read under ``vocab``."""
    corpus = SeedCorpus([], [])
    seen: set[bytes] = set()
    for top in paths:
        if not top.exists() and not top.is_symlink():
            corpus.skipped.append(Skipped(str(top), "does not exist"))
            continue
        for path, data in folder_files(top, _is_recording, limit=FILES_CAP):
            if data is None:
                corpus.ignored += 1
                continue
            if isinstance(data, Skipped):
                corpus.skipped.append(data)
                continue
            shown = str(path)
            try:
                events = _envelope_events(data) if path.name.endswith(".json") else None
                run = recorded_run(data if events is None else _lines(events), vocab)
            except (ValueError, UnicodeError) as exc:
                corpus.skipped.append(Skipped(shown, str(exc)))
                continue
            stream = run.to_bytes()
            if stream in seen:
                continue  # the same run twice (a fixture and its copy)
            seen.add(stream)
            run.recording = path.name
            corpus.recordings.append(run)
    return corpus


def _envelope_events(data: bytes) -> list[Any]:
    """The events of a ``--output-format json`` envelope; ValueError when it has none."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        raise ValueError("not a JSON document (an envelope is one JSON object)") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        raise ValueError("an envelope without an events list")
    return list(doc["events"])


def _lines(events: Sequence[Any]) -> bytes:
    try:
        return b"".join(encode(e) + b"\n" for e in events)
    except (TypeError, ValueError, RecursionError, UnicodeError):
        raise ValueError("an event the kit cannot write as a line") from None


def recorded_run(data: bytes, vocab: Vocabulary) -> Run:
    """A recording as the kit's run, its events as recorded; ValueError where it does not fit.

    A recording without a terminator fits (an older stella's, an interrupted run's):
    what a correct client does with it and its mutants is the reference decoder's
    reading, whatever it ends on.  One with no known event at all is not a stream.
    """
    decoded = decode_all(data, vocab)
    events: list[Any] = []
    for outcome in decoded.outcomes:
        if outcome.kind not in (Kind.KNOWN, Kind.UNKNOWN) or not isinstance(outcome.raw, dict):
            why = outcome.reason or outcome.kind.value
            raise ValueError(f"not a valid run: line {outcome.line} is {why}")
        if not outcome.terminated:
            raise ValueError(f"not a valid run: line {outcome.line} has no final newline")
        events.append(outcome.raw)
        if len(events) > EVENTS_CAP:
            raise ValueError(f"more than {EVENTS_CAP} events")
    if decoded.summary.verdict != "accept":
        raise ValueError("not a valid run: the reference decoder rejects it")
    if not any(o.kind is Kind.KNOWN for o in decoded.outcomes):
        raise ValueError("not a stella stream: no event of a known type")
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) != len(events):
        raise ValueError("not a valid run: blank lines")
    for number, (event, line) in enumerate(zip(events, lines, strict=True), 1):
        try:
            same = _strict(encode(event)) == _strict(line)
        except (ValueError, UnicodeError):
            same = False
        if not same:
            # duplicate keys, a lone surrogate, a number beyond a double: the line the kit
            # would write for the event is not the line that was recorded
            raise ValueError(f"line {number} cannot be written back as recorded")
    return Run(events, failed=decoded.summary.terminator == "error")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate keys")
    return out


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("beyond a double")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def _strict(line: bytes) -> Any:
    return json.loads(
        line.decode("utf-8"),
        object_pairs_hook=_no_duplicates,
        parse_float=_finite,
        parse_constant=_no_constant,
    )


_DIGESTS: dict[int, tuple[Sequence[Run], str]] = {}


def digest(recordings: Sequence[Run]) -> str:
    """A short name for a set of recordings (their streams, in order), for database keys.

    A case that starts from a recording picks it by its place in the list: read without
    the same recordings, its choices are another case.  So the database keeps cases
    drawn with recordings under keys of their own: a ``run`` given the same recordings
    replays them as found, and one without never reads them as something else (nor
    deletes them, as Hypothesis deletes an entry that no longer fails).
    """
    cached = _DIGESTS.get(id(recordings))
    if cached is not None and cached[0] is recordings:
        return cached[1]
    h = hashlib.sha256()
    for run in recordings:
        h.update(run.to_bytes())
        h.update(b"\0")
    name = h.hexdigest()[:16]
    _DIGESTS[id(recordings)] = (recordings, name)
    return name


#: Of every this many fresh runs, one is a recording (the rest are generated): the
#: recordings add real bodies and orders without starving the generator's structures
#: (turns after the first, retried calls) that no short recording has.
RECORDED_ONE_IN = 8


def recording_prefix(index: int) -> tuple[int, int]:
    """The first choices of a case that starts from recording ``index`` (the fuzzer seeds
    its corpus with one case per recording; Hypothesis draws the rest)."""
    return (RECORDED_ONE_IN - 1, index)


def recorded_or_generated(vocab: Vocabulary, recordings: Sequence[Run]) -> st.SearchStrategy[Run]:
    """A generated run, or (one time in :data:`RECORDED_ONE_IN`) one of the recordings;
    shrinking goes towards a generated one.  (``fuzz`` also starts one case from each
    recording, as fuzzers run their seed corpus first: :func:`recording_prefix`.)

    Each case copies the run's events before a mutation touches them (``Stream.of``),
    so a recording is never changed.
    """
    generated = runs(vocab)
    if not recordings:
        return generated
    recorded = st.sampled_from(list(recordings))

    @st.composite
    def base(draw: st.DrawFn) -> Run:
        _DRAWING.recorded = False
        if draw(st.integers(0, RECORDED_ONE_IN - 1)) < RECORDED_ONE_IN - 1:
            return draw(generated)
        _DRAWING.recorded = True
        return draw(recorded)

    return base()


#: Whether the case being drawn started from a recording.
_DRAWING = threading.local()


def drawing_recorded(reset: bool = False) -> bool:
    """Whether the case drawn last on this thread started from a recording (``reset``:
    and forget it, before the next case is drawn)."""
    recorded = bool(getattr(_DRAWING, "recorded", False))
    if reset:
        _DRAWING.recorded = False
    return recorded


#: What a mutation written for generated runs raises on a recording it does not fit.
_MISFIT = (KeyError, IndexError, TypeError, ValueError, AttributeError)


def tolerant(cases: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``cases``, where a mutation that does not apply to a recording's events is no case.

    The mutations were written for generated runs (the self-describing spellings, one
    terminator, calls paired); a recording may differ, and a mutation that then fails
    on it is skipped for that case (Hypothesis draws another), never an error of the
    kit.  On a generated run the same failure is a bug of the kit, and is raised.
    """

    @st.composite
    def case(draw: st.DrawFn) -> Any:
        _DRAWING.recorded = False
        try:
            return draw(cases)
        except _MISFIT:
            if getattr(_DRAWING, "recorded", False):
                reject()
            raise

    return case()
