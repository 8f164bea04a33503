"""A matrix config (TOML): the clients, the vocabularies and the ``[matrix]`` settings.

Every value of the file is checked before any client starts; each client's hello is then
read once, and its claims and profiles apply to every cell of its row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import Check, profiles, select
from stella_conform.conformance.checks.claims import (
    Claims,
    claims_from,
    from_hello,
    merge,
    resolve_profiles,
)
from stella_conform.conformance.clients.runner import (
    MODES,
    Client,
    ensure_mode_supported,
    resolve_client,
)
from stella_conform.conformance.report.model import load_known_failures
from stella_conform.conformance.store.recordings import SeedCorpus
from stella_conform.conformance.store.recordings import load as load_recordings
from stella_conform.errors import SetupError, read_toml_file
from stella_conform.generators.runs import Run
from stella_conform.options.kinds import Problem, from_toml
from stella_conform.options.kinds import Seconds as SecondsKind
from stella_conform.options.model import BY_NAME, InMatrix
from stella_conform.safe_files import named_path_problem
from stella_conform.schemas.vocabulary import (
    BUNDLED,
    BUNDLED_ALIASES,
    Vocabulary,
    VocabularyError,
)

DEFAULT_VOCABULARY = "default"
#: Where ``stella-conform matrix`` writes when not told (``--out``).
DEFAULT_OUT = Path("matrix-report")


#: The claim keys of a ``[[client]]`` (as ``run --knows/--reads/--computes/--summary-only``).
CLAIM_KEYS = ("knows", "reads", "computes", "summary_only")


def _default(name: str) -> Any:
    """The matrix's default for the model's option ``name``: its own, else the model's."""
    option = BY_NAME[name]
    assert isinstance(option.matrix, InMatrix)
    return option.default if option.matrix.default is None else option.matrix.default


@dataclass(frozen=True)
class ClientSpec:
    name: str
    command: tuple[str, ...]
    mode: str = _default("mode")
    profiles: tuple[str, ...] = ("reader",)
    known_failures: Path | None = None
    timeout: float = _default("timeout")
    line_timeout: float = _default("line_timeout")
    #: The config's claim keys, as written (checked against each vocabulary).
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: The adapter's hello, read once at load (its claims and profiles apply).
    hello: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "command": list(self.command),
            "mode": self.mode,
            "profiles": list(self.profiles),
        }
        if self.claims:
            out["claims"] = dict(self.claims)
        return out

    def claims_on(self, vocab: Vocabulary) -> Claims:
        """The config's claims over the hello's, against one vocabulary column."""
        told = claims_from(
            knows=self.claims.get("knows"),
            reads=self.claims.get("reads"),
            computes=self.claims.get("computes"),
            summary_only=bool(self.claims.get("summary_only")),
            vocab=vocab,
            where=f"client {self.name!r}",
        )
        return merge(told, from_hello(self.hello, vocab))


@dataclass(frozen=True)
class VocabularySpec:
    """A column: the vocabulary its cells are graded against (the kit's own, a bundled
    one, or a stella release's wire schema), and the recordings of a stella its generated
    stream cases may start from (``run --seed-corpus``)."""

    name: str
    wire_schema: Path | None = None
    #: A bundled vocabulary's name (``vocabulary = "stella-older"``), instead of a file.
    bundled: str | None = None
    #: The folders or files of recorded streams named (``seed_corpus``), as given.
    seed_corpus: tuple[str, ...] = ()
    #: The recordings read from them, under this column's vocabulary.
    corpus: SeedCorpus | None = field(default=None, compare=False, hash=False)

    @property
    def source(self) -> str | None:
        return str(self.wire_schema) if self.wire_schema else self.bundled

    @property
    def recordings(self) -> tuple[Run, ...]:
        return tuple(self.corpus.recordings) if self.corpus is not None else ()

    def load(self) -> Vocabulary:
        return Vocabulary.load(self.source)  # loaded once per file text (vocabulary.py)

    def to_json(self, ident: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "ident": ident,
            "wire_schema": str(self.wire_schema) if self.wire_schema else None,
            "bundled": self.bundled,
        }
        if self.seed_corpus:
            out["seed_corpus"] = list(self.seed_corpus)
            out["recordings"] = len(self.recordings)
        return out


@dataclass
class MatrixConfig:
    clients: list[ClientSpec]
    vocabularies: list[VocabularySpec]
    base: Path
    examples: int = _default("examples")
    seed: int = _default("seed")
    jobs: int = _default("jobs")
    #: Where failing cases are saved (one folder per cell); ``None``: under the output
    #: folder (``stella-conform matrix --out``), so a matrix's failures travel with it.
    failures_dir: Path | None = None
    #: Client runs a failing check may spend shrinking (``run --max-shrinks``).
    max_shrinks: int = _default("max_shrinks")
    #: At most this many fixtures per check (``SuiteConfig.fixtures_per_check``); ``None``:
    #: every fixture.
    fixtures_per_check: int | None = None

    def settings(self) -> dict[str, Any]:
        """The ``[matrix]`` values every cell grades with, by the options model's names."""
        return {
            "examples": self.examples,
            "seed": self.seed,
            "max_shrinks": self.max_shrinks,
            "fixtures_per_check": self.fixtures_per_check,
        }

    def cells(self) -> list[tuple[ClientSpec, VocabularySpec]]:
        return [(c, v) for c in self.clients for v in self.vocabularies]

    def tasks(self) -> list[tuple[int, Check]]:
        """(cell index, check) in a fixed order: the unit of sharding (a worker takes a
        shard's tasks of one cell at a time)."""
        return [
            (index, check)
            for index, (client, _) in enumerate(self.cells())
            for check in select(client.profiles)
        ]


def _table(doc: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    items = doc.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise SetupError(f"{where}: [[{key}]] must be tables")
    return items


def load_config(path: Path) -> MatrixConfig:
    """Read and check a matrix config; every problem is a :class:`SetupError` naming it."""
    doc = read_toml_file(path, "matrix config")
    base = path.resolve().parent
    settings = doc.get("matrix", {})
    if not isinstance(settings, dict):
        raise SetupError(f"{path}: [matrix] must be a table")
    unknown = set(doc) - {"matrix", "client", "vocabulary"}
    if unknown:
        raise SetupError(f"{path}: unknown table {sorted(unknown)[0]!r}")
    # the vocabularies first: a bad one is refused before any client is started
    vocabularies = [_vocabulary(e, base, path) for e in _table(doc, "vocabulary", str(path))]
    vocabularies = vocabularies or [VocabularySpec(DEFAULT_VOCABULARY)]
    clients = [_client(entry, base, path) for entry in _table(doc, "client", str(path))]
    if not clients:
        raise SetupError(f"{path}: no [[client]] to grade")
    for what, names in (
        ("client", [c.name for c in clients]),
        ("vocabulary", [v.name for v in vocabularies]),
    ):
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SetupError(f"{path}: two {what}s named {dupes[0]!r}")
    # no failures_dir: under the output folder, not the model's default
    failures_dir = _setting(settings, "failures_dir", path) if "failures_dir" in settings else None
    config = MatrixConfig(
        clients,
        vocabularies,
        base,
        examples=_setting(settings, "examples", path),
        seed=_setting(settings, "seed", path),
        jobs=_setting(settings, "jobs", path),
        failures_dir=None if failures_dir is None else base / failures_dir,
        max_shrinks=_setting(settings, "max_shrinks", path),
        fixtures_per_check=_sample_size(settings, path),
    )
    # every value of the file is checked before any client starts (the hellos below)
    _check_claims(config, path)
    config.clients = [_with_hello(client, base, path) for client in config.clients]
    _check_claims(config, path)  # again with each hello's claims: an unknown name in one
    return config


def _check_claims(config: MatrixConfig, path: Path) -> None:
    """An unknown claimed name fails now, not per task."""
    for client, vocab in config.cells():
        try:
            client.claims_on(vocab.load())
        except SetupError as exc:
            raise SetupError(f"{path}: vocabulary {vocab.name!r}: {exc}") from None


def _with_hello(client: ClientSpec, base: Path, path: Path) -> ClientSpec:
    """The client as its hello describes it (its claims, the profiles it adds): the one
    start of it at load, once every value of the config has been checked."""
    try:
        hello = ensure_mode_supported(
            Client(client.command, client.mode, timeout=client.timeout, cwd=str(base))  # type: ignore[arg-type]
        )
        chosen = resolve_profiles(client.profiles, hello)  # stream profiles add to reader
    except SetupError as exc:
        raise SetupError(f"{path}: client {client.name!r}: {exc}") from None
    return replace(client, profiles=chosen, hello=hello)


def _sample_size(settings: dict[str, Any], path: Path) -> int | None:
    """``fixtures_per_check``, a whole number of at least one; ``None`` (every fixture)
    when the file leaves it out.

    0 would grade no fixture at all (with ``examples = 0``, a green matrix that graded
    nothing), and ``1.5`` or ``true`` read as 1 would grade something the file does not say.
    """
    if "fixtures_per_check" not in settings:
        return None
    value = settings["fixtures_per_check"]
    try:
        count: int = from_toml(BY_NAME["fixtures_per_check"].kind, value)
    except Problem as problem:
        if problem.reason == "above":
            raise SetupError(f"{path}: [matrix] fixtures_per_check: {problem}") from None
        raise SetupError(
            f"{path}: [matrix] fixtures_per_check must be a whole number of at least 1 "
            f"(got {value!r}); leave it out to grade every fixture"
        ) from None
    return count


#: The longest client or vocabulary name: a name is a table's heading, a folder's name
#: and a line of every output.
NAME_CAP = 200


def _name(entry: dict[str, Any], table: str, path: Path) -> str:
    """An entry's name, checked: present, text, short enough to show and be a folder."""
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise SetupError(f"{path}: every [[{table}]] needs a name")
    if len(name) > NAME_CAP:
        raise SetupError(
            f"{path}: a [[{table}]] name of {len(name):,} characters "
            f"(at most {NAME_CAP}): {name[:40]!r}…"
        )
    return name


def _client(entry: dict[str, Any], base: Path, path: Path) -> ClientSpec:
    name = _name(entry, "client", path)
    command = entry.get("command")
    if isinstance(command, str):
        import shlex

        command = shlex.split(command)
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise SetupError(f"{path}: client {name!r} needs a command (a list of strings)")
    program = command[0]
    if os.sep in program and not os.path.isabs(program):
        command = [str(base / program), *command[1:]]
    mode = entry.get("mode", _default("mode"))
    if mode not in MODES:
        raise SetupError(f"{path}: client {name!r}: unknown mode {mode!r}")
    chosen = entry.get("profiles", [])
    if not isinstance(chosen, list) or ("profiles" in entry and not chosen):
        raise SetupError(f"{path}: client {name!r}: profiles must be a non-empty list")
    for profile in chosen:
        if profile not in profiles():
            raise SetupError(
                f"{path}: client {name!r}: unknown profile {profile!r} "
                f"(known: {', '.join(profiles())})"
            )
    claims = {k: entry[k] for k in CLAIM_KEYS if k in entry}
    if "summary_only" in claims and not isinstance(claims["summary_only"], bool):
        raise SetupError(f"{path}: client {name!r}: summary_only must be true or false")
    known = entry.get("known_failures")
    known_path = base / str(known) if known else None
    try:
        if known_path is not None:
            load_known_failures(known_path)  # fail now, not after an hour of grading
        resolve_client(command)  # a relative program path was made absolute above
    except SetupError as exc:
        raise SetupError(f"{path}: client {name!r}: {exc}") from None
    return ClientSpec(
        name,
        tuple(command),
        mode,
        tuple(chosen),  # the hello's are added once every entry is checked (_with_hello)
        known_path,
        _seconds(entry, "timeout", name, path),
        _seconds(entry, "line_timeout", name, path),
        claims,
    )


def _setting(settings: dict[str, Any], name: str, path: Path) -> Any:
    """The ``[matrix]`` value of the model's option ``name`` (the matrix's default when the
    file leaves it out), checked by the model as every source's value is: a refused value
    is a :class:`SetupError` in the words the command line and ``pyproject.toml`` use."""
    option = BY_NAME[name]
    assert isinstance(option.matrix, InMatrix) and option.matrix.table == "matrix"
    key = option.matrix.key
    if key not in settings:
        return _default(name)
    try:
        return from_toml(option.kind, settings[key])
    except Problem as problem:
        raise SetupError(f"{path}: [matrix] {key}: {problem}") from None


def _seconds(entry: dict[str, Any], key: str, name: str, path: Path) -> float:
    """A client's ``timeout`` / ``line_timeout``: a finite number of seconds in the model's
    range (text, ``nan`` and ``inf`` are refused with the key's name)."""
    kind = BY_NAME[key].kind
    assert isinstance(kind, SecondsKind)
    value = entry.get(key, _default(key))
    try:
        if type(value) not in (int, float):
            raise Problem("not a number", "kind")
        return kind.parse(value)
    except Problem as problem:
        if problem.reason == "above":
            raise SetupError(f"{path}: client {name!r}: {key}: {problem}") from None
        raise SetupError(
            f"{path}: client {name!r}: {key} must be a number of seconds, at least "
            f"{kind.least} (got {value!r})"
        ) from None


def _vocabulary(entry: dict[str, Any], base: Path, path: Path) -> VocabularySpec:
    spec = _vocabulary_source(entry, base, path)
    if "seed_corpus" not in entry:
        return spec
    return _with_recordings(spec, entry["seed_corpus"], base, path)


def _with_recordings(spec: VocabularySpec, value: Any, base: Path, path: Path) -> VocabularySpec:
    """The column with the recordings ``seed_corpus`` names (a path or a list of them,
    relative to the config), read as ``run --seed-corpus`` reads them.

    A path that is missing, or neither a folder nor a regular file, is refused as the
    command line refuses it; so is a column none of whose files is a recording: it would
    grade exactly what the column of its vocabulary alone grades, under another name.
    """
    where = f"{path}: vocabulary {spec.name!r}: seed_corpus"
    try:
        named: tuple[str, ...] = from_toml(BY_NAME["seed_corpus"].kind, value)
    except Problem as problem:
        raise SetupError(f"{where}: {problem}") from None
    if not named:
        raise SetupError(f"{where}: name a folder or file of recorded streams")
    paths = [base / p for p in named]
    for given, full in zip(named, paths, strict=True):
        wrong = named_path_problem(full, "folder or file")
        if wrong is None and not full.exists():
            wrong = "no such file or folder"
        if wrong is not None:
            raise SetupError(f"{where}: {given}: {wrong}")
    corpus = load_recordings(paths, spec.load())
    if not corpus.recordings:
        skipped = "; ".join(str(s) for s in corpus.skipped[:3]) or "no .jsonl or .json file"
        raise SetupError(f"{where}: no recorded stream read ({skipped})")
    return replace(spec, seed_corpus=named, corpus=corpus)


def _vocabulary_source(entry: dict[str, Any], base: Path, path: Path) -> VocabularySpec:
    name = _name(entry, "vocabulary", path)
    schema = entry.get("wire_schema")
    bundled = entry.get("vocabulary")
    if bundled is not None and not isinstance(bundled, str):
        raise SetupError(f"{path}: vocabulary {name!r}: vocabulary must be a bundled name")
    if schema is not None and bundled is not None:
        raise SetupError(f"{path}: vocabulary {name!r}: give wire_schema or vocabulary, not both")
    named = BUNDLED_ALIASES.get(name, name)
    if schema is None and bundled is None and name != DEFAULT_VOCABULARY and named in BUNDLED:
        bundled = name  # [[vocabulary]] name = "stella-older" names the bundled one
    if schema is None and bundled is None:
        return VocabularySpec(name)
    spec = (
        VocabularySpec(name, base / str(schema)) if schema else VocabularySpec(name, None, bundled)
    )
    try:
        spec.load()
    except (OSError, VocabularyError, ValueError) as exc:
        raise SetupError(f"{path}: vocabulary {name!r}: {exc}") from None
    return spec
