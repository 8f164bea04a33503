"""The language-neutral fixture format: ``NAME.jsonl`` + ``NAME.expect.json``.

Curated fixtures ship in ``stella_conform/fixtures``; generated corpora are
written in the same format by ``stella-conform corpus export``.  The format is
described for other languages in ``fixtures/README.md``; this module reads
it, validates it against ``expectation.schema.json``, and compares an
expectation with what the reference decoder reconstructs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from stella_conform.errors import SetupError, parse_json_file, read_json_file
from stella_conform.oracle.decoder import RunSummary
from stella_conform.safe_files import CASE_CAP, RefusedFile, make_dirs, read_regular, write_atomic
from stella_conform.schemas.vocabulary import load_schema

EXPECT_FORMAT = "stella-conform/expect/1"
EXPECT_SUFFIX = ".expect.json"

#: Fields of an expectation compared with the decoder's summary when present.
COMPARED = (
    "verdict",
    "rejected_line",
    "unrecognized_types",
    "unrecognized_events",
    "known_events",
    "torn_final_line",
    "final_text",
    "texts",
    "stages",
    "terminator",
    "turns_completed",
    "tool_calls",
    "elapsed_ms",
)


def case_bytes(path: Path, *, follow: bool = True) -> bytes:
    """A case file's bytes: a regular file of at most :data:`CASE_CAP` bytes, or
    :class:`SetupError` naming the cap (``follow=False``: a link is refused too)."""
    try:
        return read_regular(path, CASE_CAP, follow=follow)
    except FileNotFoundError:
        raise SetupError(f"case file not found: {path}") from None
    except RefusedFile as exc:
        raise SetupError(
            f"cannot read case file: {exc} (the kit plays regular files of at most "
            f"{CASE_CAP} bytes)"
        ) from None
    except OSError as exc:
        raise SetupError(f"cannot read case file {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class Fixture:
    """One case on disk."""

    name: str
    stream_path: Path
    expect: Mapping[str, Any]

    @property
    def stream(self) -> bytes:
        return case_bytes(self.stream_path)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(self.expect.get("rules", ()))


@cache
def _expect_validator() -> jsonschema.protocols.Validator:
    schema = load_schema("expectation.schema.json")
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def validate_expectation(doc: Any, where: str = "<expectation>") -> None:
    """Raise :class:`SetupError` naming the first problem, if any."""
    error = jsonschema.exceptions.best_match(_expect_validator().iter_errors(doc))
    if error is not None:
        loc = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise SetupError(f"malformed expectation file {where}: at {loc}: {error.message}")


def expectation_from(
    summary: RunSummary,
    *,
    rules: Sequence[str],
    description: str = "",
    mutations: Sequence[str] | None = None,
    seed: int | None = None,
    also_conforming: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The expectation file for a stream, from the reference decoder's summary.

    ``also_conforming``: the other readings (``stella_conform.oracle.readings.also_conforming``).
    """
    s = summary.to_json()
    doc: dict[str, Any] = {
        "format": EXPECT_FORMAT,
        "description": description,
        "rules": list(dict.fromkeys(rules)) or ["R1"],
        "verdict": s["verdict"],
        "rejected_line": s["rejected_line"],
        "reason": s["reason"],
        "known_events": s["known_events"],
        "unrecognized_events": s["unrecognized_events"],
        "unrecognized_types": s["unrecognized_types"],
        "torn_final_line": s["torn_final_line"],
        "final_text": s["final_text"],
        "texts": s["texts"],
        "stages": s["stages"],
        "terminator": s["terminator"],
        "turns_completed": s["turns_completed"],
        "tool_calls": s["tool_calls"],
        "elapsed_ms": s["elapsed_ms"],
    }
    if also_conforming:
        doc["also_conforming"] = [dict(entry) for entry in also_conforming]
    if mutations is not None:
        doc["mutations"] = list(mutations)
    if seed is not None:
        doc["seed"] = seed
    return doc


def compare(expect: Mapping[str, Any], summary: RunSummary) -> list[str]:
    """Differences between an expectation and a summary, as readable lines."""
    actual = summary.to_json()
    problems = []
    for key in COMPARED:
        if key in expect and expect[key] != actual[key]:
            want, got = _short(expect[key]), _short(actual[key])
            problems.append(f"{key}: expected {want}, decoder says {got}")
    return problems


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def read_fixture(stream_path: Path) -> Fixture:
    """Read and validate one fixture; raises :class:`SetupError` when malformed."""
    name = stream_path.name.removesuffix(".jsonl")
    expect_path = stream_path.with_name(name + EXPECT_SUFFIX)
    if not stream_path.is_file():
        if stream_path.exists():
            raise SetupError(f"fixture stream {stream_path} is not a regular file")
        raise SetupError(f"fixture stream not found: {stream_path}")
    doc = read_json_file(expect_path, "expectation file")
    validate_expectation(doc, str(expect_path))
    return Fixture(name, stream_path, doc)


def iter_fixtures(directory: Path | None = None) -> Iterator[Fixture]:
    """Every fixture in a directory (default: the bundled corpus), by name."""
    directory = directory or bundled_fixtures_dir()
    if not directory.is_dir():
        raise SetupError(f"fixture directory not found: {directory}")
    for path in sorted(directory.glob("*.jsonl")):
        yield read_fixture(path)


def bundled_fixtures_dir() -> Path:
    return Path(str(resources.files("stella_conform").joinpath("fixtures")))


@cache
def corpus_version(directory: Path | None = None) -> str:
    """The bundled corpus's version string (``fixtures/CORPUS_VERSION``)."""
    directory = directory or bundled_fixtures_dir()
    try:
        return (directory / "CORPUS_VERSION").read_text(encoding="utf-8").strip()
    except OSError:
        return "unversioned"


def write_fixture(directory: Path, name: str, stream: bytes, expect: Mapping[str, Any]) -> None:
    """Write one case in the fixture format (stable bytes for a given input)."""
    make_dirs(directory)  # below a pinned folder: no link followed on the way
    write_atomic(directory / f"{name}.jsonl", stream)  # never through a planted link
    text = json.dumps(expect, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a registered reading): keep it escaped
            text = json.dumps(expect, indent=2, sort_keys=False) + "\n"
    write_atomic(directory / f"{name}{EXPECT_SUFFIX}", text)


# ------------------------------------------------------------------ envelopes and scenarios

ENVELOPE_EXPECT_FORMAT = "stella-conform/envelope-expect/1"
SCENARIO_FORMAT = "stella-conform/scenario/1"
SCENARIO_SUFFIX = ".scenario.json"
#: Fields of an envelope expectation compared with the reference reader when present.
ENVELOPE_COMPARED = (
    "verdict",
    "shape",
    "status",
    "text",
    "model",
    "stop_reason",
    "files_touched",
    "known_events",
    "unrecognized_events",
    "rows",
    "cost_usd",
    "input_tokens",
    "output_tokens",
)


@dataclass(frozen=True)
class EnvelopeFixture:
    """``NAME.json`` (the document, byte for byte) + ``NAME.expect.json`` (command, reading)."""

    name: str
    path: Path
    expect: Mapping[str, Any]

    @property
    def data(self) -> bytes:
        return case_bytes(self.path)

    @property
    def command(self) -> str:
        return str(self.expect["command"])


@dataclass(frozen=True)
class ScenarioFixture:
    """``NAME.scenario.json``: a stream, how the run ends, what a wrapper makes of it."""

    name: str
    path: Path
    scenario: Mapping[str, Any]

    @property
    def stream(self) -> bytes:
        if "stream_text" in self.scenario:
            return str(self.scenario["stream_text"]).encode("utf-8")
        return case_bytes(scenario_stream_path(self.path, self.scenario["stream"]))

    @property
    def expect(self) -> Mapping[str, Any]:
        return dict(self.scenario.get("expect", {}))


def read_envelope_fixture(path: Path) -> EnvelopeFixture:
    """Read one envelope fixture; raises :class:`SetupError` when malformed."""
    name = path.name.removesuffix(".json")
    if not path.is_file():
        raise SetupError(f"envelope fixture not found: {path}")
    expect_path = path.with_name(name + EXPECT_SUFFIX)
    doc = read_json_file(expect_path, "envelope expectation file")
    if not isinstance(doc, dict) or doc.get("format") != ENVELOPE_EXPECT_FORMAT:
        raise SetupError(f"{expect_path}: format must be {ENVELOPE_EXPECT_FORMAT!r}")
    for key in ("command", "verdict"):
        if not isinstance(doc.get(key), str):
            raise SetupError(f"{expect_path}: {key!r} must be a string")
    return EnvelopeFixture(name, path, doc)


def read_scenario(path: Path, data: bytes | None = None) -> ScenarioFixture:
    """Read one wrapper scenario; raises :class:`SetupError` when malformed.

    ``data``: the file's bytes, already read (``replay`` reads a case file once)."""
    name = path.name.removesuffix(SCENARIO_SUFFIX)
    if data is None:
        doc = read_json_file(path, "scenario file")
    else:
        doc = parse_json_file(data, path, "scenario file")
    if not isinstance(doc, dict) or doc.get("format") != SCENARIO_FORMAT:
        raise SetupError(f"{path}: format must be {SCENARIO_FORMAT!r}")
    if not isinstance(doc.get("exit", 0), int):
        raise SetupError(f"{path}: 'exit' must be an integer")
    if "stream_text" not in doc:
        stream = scenario_stream_path(path, doc.get("stream", ""))
        if not stream.is_file():
            raise SetupError(f"{path}: its stream {doc.get('stream')!r} is not a file beside it")
    return ScenarioFixture(name, path, doc)


def scenario_stream_path(scenario: Path, stream: Any) -> Path:
    """Where a scenario's ``stream`` is: inside the scenario's folder, or :class:`SetupError`.

    A scenario file names its stream relative to itself; ``../../etc/passwd``, an absolute
    path or a link out of the folder would make ``replay`` read and play any file.
    """
    folder = scenario.parent.resolve()
    target = (folder / str(stream)).resolve()
    if not isinstance(stream, str) or not stream or not target.is_relative_to(folder):
        raise SetupError(f"{scenario}: its stream {stream!r} is not a file in its folder")
    return target


def iter_envelope_fixtures(directory: Path | None = None) -> Iterator[EnvelopeFixture]:
    directory = directory or bundled_fixtures_dir() / "envelopes"
    for path in sorted(directory.glob("*.json")):
        if not path.name.endswith(EXPECT_SUFFIX):
            yield read_envelope_fixture(path)


def iter_scenarios(directory: Path | None = None) -> Iterator[ScenarioFixture]:
    directory = directory or bundled_fixtures_dir() / "scenarios"
    for path in sorted(directory.glob("*" + SCENARIO_SUFFIX)):
        yield read_scenario(path)


def write_envelope_fixture(
    directory: Path, name: str, data: bytes, expect: Mapping[str, Any]
) -> Path:
    make_dirs(directory)  # below a pinned folder: no link followed on the way
    path = directory / f"{name}.json"
    write_atomic(path, data)
    text = json.dumps({"format": ENVELOPE_EXPECT_FORMAT, **expect}, indent=2, ensure_ascii=False)
    write_atomic(directory / f"{name}{EXPECT_SUFFIX}", text + "\n")
    return path


def write_scenario(directory: Path, name: str, scenario: Mapping[str, Any], stream: bytes) -> Path:
    """The stream goes inline (``stream_text``) so a failures directory holds one file per case."""
    make_dirs(directory)  # below a pinned folder: no link followed on the way
    doc = {"format": SCENARIO_FORMAT, **scenario, "stream_text": stream.decode("utf-8", "replace")}
    doc.pop("stream", None)
    path = directory / f"{name}{SCENARIO_SUFFIX}"
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


# ------------------------------------------------------------------ trace journals

TRACE_EXPECT_FORMAT = "stella-conform/trace-expect/1"


@dataclass(frozen=True)
class TraceFixture:
    """``NAME.jsonl`` (a journal) + ``NAME.expect.json`` (its reading and check outcomes)."""

    name: str
    path: Path
    expect: Mapping[str, Any]

    @property
    def data(self) -> bytes:
        return case_bytes(self.path)


def read_trace_fixture(path: Path) -> TraceFixture:
    name = path.name.removesuffix(".jsonl")
    if not path.is_file():
        raise SetupError(f"journal fixture not found: {path}")
    doc = read_json_file(path.with_name(name + EXPECT_SUFFIX), "trace expectation file")
    return _trace_fixture(name, path, doc)


def _trace_fixture(name: str, path: Path, doc: Any) -> TraceFixture:
    if not isinstance(doc, dict) or doc.get("format") != TRACE_EXPECT_FORMAT:
        raise SetupError(f"{path}: expectation format must be {TRACE_EXPECT_FORMAT!r}")
    if doc.get("verdict") not in ("accept", "reject"):
        raise SetupError(f"{path}: expectation needs a verdict (accept or reject)")
    return TraceFixture(name, path, doc)


def read_jsonl_fixture(path: Path) -> Fixture | TraceFixture:
    """A stream or a trace-journal fixture, told apart by its expectation's format (read once)."""
    name = path.name.removesuffix(".jsonl")
    if not path.is_file():
        raise SetupError(f"fixture stream not found: {path}")
    expect_path = path.with_name(name + EXPECT_SUFFIX)
    doc = read_json_file(expect_path, "expectation file")
    if isinstance(doc, dict) and doc.get("format") == TRACE_EXPECT_FORMAT:
        return _trace_fixture(name, path, doc)
    validate_expectation(doc, str(expect_path))
    return Fixture(name, path, doc)


def iter_trace_fixtures(directory: Path | None = None) -> Iterator[TraceFixture]:
    directory = directory or bundled_fixtures_dir() / "trace"
    for path in sorted(directory.glob("*.jsonl")):
        yield read_trace_fixture(path)
