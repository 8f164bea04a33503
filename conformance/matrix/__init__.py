"""The compatibility matrix: many clients × many contract versions, one table.

A matrix config (TOML) lists clients (a name, a command, a mode, the profiles
they claim, optionally a known-failures file) and vocabularies (the kit's own,
or a stella wire schema).  Every (client, vocabulary) cell is graded like
``stella-conform run``; every (cell, check) pair is one task, the tasks run in
a process pool, and the result is one JSON document holding a full report per
cell, rendered as Markdown and as a self-contained HTML page.

The order of tasks is fixed by the config, so ``--shard I/N`` splits them the
same way on every machine, and the shards' JSON documents merge into exactly
the unsharded matrix (``stella-conform report merge``).
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stella_conform import stopping
from stella_conform._version import __version__
from stella_conform.conformance.checks import PROFILES, Check, select
from stella_conform.conformance.claims import (
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
from stella_conform.conformance.report.compare import check_shape
from stella_conform.conformance.report.compare import merge as merge_reports
from stella_conform.conformance.report.render import (
    FAILING,
    OUTCOME_ICONS,
    OUTCOMES,
    STOPPED,
    Report,
    alike,
    load_known_failures,
)
from stella_conform.conformance.suite import (
    SHRINK_BUDGET,
    CheckResult,
    SuiteConfig,
    run_check,
    shared_sessions,
    worker_pool,
)
from stella_conform.errors import SetupError, read_json_file, read_toml_file
from stella_conform.oracle.corpus import corpus_version
from stella_conform.safe_files import inside
from stella_conform.safe_text import clip, markdown_code, markdown_name, no_surrogates
from stella_conform.schemas.vocabulary import (
    BUNDLED,
    BUNDLED_ALIASES,
    Vocabulary,
    VocabularyError,
)

MATRIX_FORMAT = "stella-conform/matrix/1"
#: What the shards of one matrix share.
MATRIX_SAME_RUN = (
    "kit", "corpus_version", "seed", "examples", "fixtures_per_check", "clients", "vocabularies",
)  # fmt: skip
DEFAULT_VOCABULARY = "default"
#: Where ``stella-conform matrix`` writes when not told (``--out``).
DEFAULT_OUT = Path("matrix-report")


#: The claim keys of a ``[[client]]`` (as ``run --knows/--reads/--computes/--summary-only``).
CLAIM_KEYS = ("knows", "reads", "computes", "summary_only")


@dataclass(frozen=True)
class ClientSpec:
    name: str
    command: tuple[str, ...]
    mode: str = "persistent"
    profiles: tuple[str, ...] = ("reader",)
    known_failures: Path | None = None
    timeout: float = 10.0
    line_timeout: float = 5.0
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
    name: str
    wire_schema: Path | None = None
    #: A bundled vocabulary's name (``vocabulary = "stella-older"``), instead of a file.
    bundled: str | None = None

    @property
    def source(self) -> str | None:
        return str(self.wire_schema) if self.wire_schema else self.bundled

    def load(self) -> Vocabulary:
        return Vocabulary.load(self.source)  # loaded once per file text (vocabulary.py)


@dataclass
class MatrixConfig:
    clients: list[ClientSpec]
    vocabularies: list[VocabularySpec]
    base: Path
    examples: int = 10
    seed: int = 0
    jobs: int = 2
    #: Where failing cases are saved (one folder per cell); ``None``: under the output
    #: folder (``stella-conform matrix --out``), so a matrix's failures travel with it.
    failures_dir: Path | None = None
    #: Client runs a failing check may spend shrinking (``run --max-shrinks``).
    max_shrinks: int = SHRINK_BUDGET
    #: At most this many fixtures per check (``SuiteConfig.fixtures_per_check``); ``None``:
    #: every fixture.
    fixtures_per_check: int | None = None

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
    try:
        config = MatrixConfig(
            clients,
            vocabularies,
            base,
            examples=int(settings.get("examples", 10)),
            seed=int(settings.get("seed", 0)),
            jobs=int(settings.get("jobs", 2)),
            failures_dir=base / str(settings["failures_dir"])
            if "failures_dir" in settings
            else None,
            max_shrinks=int(settings.get("max_shrinks", SHRINK_BUDGET)),
            fixtures_per_check=_sample_size(settings["fixtures_per_check"], path)
            if "fixtures_per_check" in settings
            else None,
        )
    except (TypeError, ValueError) as exc:
        raise SetupError(
            f"{path}: [matrix] examples, seed, jobs, max_shrinks and fixtures_per_check must be"
            f" integers ({exc})"
        ) from None
    if config.examples < 0 or config.jobs < 1 or config.max_shrinks < 0:
        raise SetupError(f"{path}: [matrix] examples and max_shrinks must be >= 0, jobs >= 1")
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


def _sample_size(value: Any, path: Path) -> int:
    """``fixtures_per_check``: a whole number of at least one, taken as written.

    0 would grade no fixture at all (with ``examples = 0``, a green matrix that graded
    nothing), and ``1.5`` or ``true`` truncated to 1 would grade something the file does
    not say.
    """
    if type(value) is not int or value < 1:
        raise SetupError(
            f"{path}: [matrix] fixtures_per_check must be a whole number of at least 1 "
            f"(got {value!r}); leave it out to grade every fixture"
        )
    return value


def _client(entry: dict[str, Any], base: Path, path: Path) -> ClientSpec:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise SetupError(f"{path}: every [[client]] needs a name")
    command = entry.get("command")
    if isinstance(command, str):
        import shlex

        command = shlex.split(command)
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise SetupError(f"{path}: client {name!r} needs a command (a list of strings)")
    program = command[0]
    if os.sep in program and not os.path.isabs(program):
        command = [str(base / program), *command[1:]]
    mode = entry.get("mode", "persistent")
    if mode not in MODES:
        raise SetupError(f"{path}: client {name!r}: unknown mode {mode!r}")
    profiles = entry.get("profiles", [])
    if not isinstance(profiles, list) or ("profiles" in entry and not profiles):
        raise SetupError(f"{path}: client {name!r}: profiles must be a non-empty list")
    for profile in profiles:
        if profile not in PROFILES:
            raise SetupError(f"{path}: client {name!r}: unknown profile {profile!r}")
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
        tuple(profiles),  # the hello's are added once every entry is checked (_with_hello)
        known_path,
        _seconds(entry, "timeout", 10.0, 0.1, name, path),
        _seconds(entry, "line_timeout", 5.0, 0.05, name, path),
        claims,
    )


def _seconds(
    entry: dict[str, Any], key: str, default: float, least: float, name: str, path: Path
) -> float:
    """A client's ``timeout`` / ``line_timeout``: a finite number of seconds (``"abc"`` was
    a traceback, ``nan`` taken)."""
    value = entry.get(key, default)
    seconds = float(value) if type(value) in (int, float) else math.nan
    if not math.isfinite(seconds) or seconds < least:
        raise SetupError(
            f"{path}: client {name!r}: {key} must be a number of seconds, at least {least} "
            f"(got {value!r})"
        )
    return seconds


def _vocabulary(entry: dict[str, Any], base: Path, path: Path) -> VocabularySpec:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise SetupError(f"{path}: every [[vocabulary]] needs a name")
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


def _suite_config(config: MatrixConfig, client: ClientSpec, vocab: VocabularySpec) -> SuiteConfig:
    return SuiteConfig(
        client=Client(
            client.command,
            client.mode,  # type: ignore[arg-type]
            timeout=client.timeout,
            line_timeout=client.line_timeout,
            cwd=str(config.base),
        ),
        examples=config.examples,
        seed=config.seed,
        shrink_budget=config.max_shrinks,
        fixtures_per_check=config.fixtures_per_check,
        share_generation=True,
        # names come from the config: "../../x" must not write outside the failures folder
        failures_dir=inside(
            config.failures_dir or DEFAULT_OUT / "failures", client.name, vocab.name
        ),
        database_dir=None,  # a matrix is reproducible from its seed alone
        wire_schema=vocab.source,
    ).with_claims(client.claims_on(vocab.load()))


def _run_group(group: list[tuple[SuiteConfig, Check]]) -> list[CheckResult]:
    """One cell's checks in one worker: one client process serves them all (persistent
    mode), and the cases of each check are the ones this worker generated for the column."""
    return [run_check(check, suite) for suite, check in group]


ProgressFn = Callable[[int, int, str, CheckResult], None]


def run_matrix(
    config: MatrixConfig,
    *,
    shard: tuple[int, int] | None = None,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Grade every cell (or one shard of the tasks) and return the matrix document."""
    cells = config.cells()
    tasks = config.tasks()
    if shard is not None:
        index, count = shard
        tasks = tasks[index - 1 :: count]
    suites = [_suite_config(config, c, v) for c, v in cells]
    results: dict[tuple[int, str], CheckResult] = {}

    def label(cell: int) -> str:
        return f"{cells[cell][0].name} × {cells[cell][1].name}"

    def document(incomplete: str | None = None, stopped: int | None = None) -> dict[str, Any]:
        return _matrix_document(config, tasks, suites, results, shard, incomplete, stopped)

    try:
        if config.jobs <= 1 or len(tasks) <= 1:
            # the tasks come cell by cell: a persistent client serves all of its checks
            with shared_sessions():
                for cell, check in tasks:
                    results[(cell, check.id)] = run_check(check, suites[cell])
                    if progress:
                        progress(len(results), len(tasks), label(cell), results[(cell, check.id)])
        else:
            with worker_pool(config.jobs) as pool:  # stopped at once by a stop signal
                # A worker grades one cell's checks in turn: a persistent client serves them
                # all from one process (suite.shared_sessions), and a check's cases are still
                # generated once per worker and column, not once per cell (suite._share_key).
                by_cell: dict[int, list[tuple[int, Check]]] = {}
                for cell, check in tasks:
                    by_cell.setdefault(cell, []).append((cell, check))
                # fewer cells than workers (one client, one vocabulary): split each cell's
                # checks, so that every worker has some
                split = -(-config.jobs // len(by_cell))
                groups = [g[i::split] for g in by_cell.values() for i in range(min(split, len(g)))]
                futures = {
                    pool.submit(_run_group, [(suites[cell], check) for cell, check in group]): group
                    for group in groups
                }
                for future, graded in stopping.finished(futures):  # a lost worker: Stopped
                    for (cell, check), result in zip(futures[future], graded, strict=True):
                        results[(cell, check.id)] = result
                        if progress:
                            progress(len(results), len(tasks), label(cell), result)
    except stopping.Stopped as stop:
        # what was graded, marked incomplete: the CLI writes it and exits 128 + N
        why = f"{stop.why} after {len(results)} of {len(tasks)} task(s)"
        stop.partial = [document(why, stop.exit_code)]
        raise
    return document()


def _matrix_document(
    config: MatrixConfig,
    tasks: Sequence[tuple[int, Check]],
    suites: Sequence[SuiteConfig],
    results: Mapping[tuple[int, str], CheckResult],
    shard: tuple[int, int] | None,
    incomplete: str | None = None,
    stopped: int | None = None,
) -> dict[str, Any]:
    """The matrix document of what was graded: one report per cell, in the config's order.

    Linear in the tasks: it is also what a stopped matrix writes, within a second of the
    signal at any size (each cell's results found by scanning every task, and each cell's
    known failures and vocabulary read again, took over nine minutes at 10,000 cells).
    """
    date = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    shard_label = f"{shard[0]}/{shard[1]}" if shard else None
    graded: dict[int, list[CheckResult]] = {}
    for cell, check in tasks:
        result = results.get((cell, check.id))
        if result is not None:
            graded.setdefault(cell, []).append(result)
    known = {
        c.name: load_known_failures(c.known_failures) if c.known_failures else {}
        for c in config.clients
    }
    idents = {v.name: v.load().ident for v in config.vocabularies}
    out_cells = []
    for index, (client, vocab) in enumerate(config.cells()):
        report = Report(
            suites[index],
            graded.get(index, []),
            idents[vocab.name],
            known[client.name],
            shard=shard_label,
            date=date,
            incomplete=incomplete,
            stopped=stopped,
        )
        out_cells.append(
            {"client": client.name, "vocabulary": vocab.name, "report": report.to_json()}
        )
    doc = _document(config, out_cells, date, shard_label, idents)
    if incomplete:
        doc["incomplete"] = incomplete
    return doc


def _document(
    config: MatrixConfig,
    cells: list[dict[str, Any]],
    date: str,
    shard: str | None,
    idents: Mapping[str, str],
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": MATRIX_FORMAT,
        "kit": {"name": "stella-conform", "version": __version__},
        "corpus_version": corpus_version(),
        "date": date,
        "seed": config.seed,
        "examples": config.examples,
        **(
            {"fixtures_per_check": config.fixtures_per_check}
            if config.fixtures_per_check is not None
            else {}
        ),
        "clients": [c.to_json() for c in config.clients],
        "vocabularies": [
            {
                "name": v.name,
                "ident": idents[v.name],
                "wire_schema": str(v.wire_schema) if v.wire_schema else None,
                "bundled": v.bundled,
            }
            for v in config.vocabularies
        ],
        "cells": cells,
    }
    if shard:
        doc["shard"] = shard
    doc["exit_code"] = exit_code(doc)
    return doc


def exit_code(doc: dict[str, Any]) -> int:
    """1 if a cell fails; a stopped matrix's (or shard's) 128 + N whatever its cells say."""
    codes: list[int] = [cell["report"]["exit_code"] for cell in doc["cells"]]
    stopped = [c for c in codes if c >= STOPPED]
    if stopped:
        return max(stopped)
    return 1 if any(codes) else 0


def is_matrix(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == MATRIX_FORMAT


def load_matrix(path: Path) -> dict[str, Any]:
    doc = read_json_file(path, "matrix report")
    if not is_matrix(doc) or not isinstance(doc.get("cells"), list):
        raise SetupError(f"{path} is not a stella-conform matrix ({MATRIX_FORMAT})")
    check_shape(doc, "Matrix", path)
    # one cell per (client, vocabulary), in the config's order: what the renderers look up
    expected = [(c["name"], v["name"]) for c in doc["clients"] for v in doc["vocabularies"]]
    if [(c["client"], c["vocabulary"]) for c in doc["cells"]] != expected:
        raise SetupError(f"malformed matrix {path}: its cells are not one per client × vocabulary")
    return dict(doc)


def merge_matrices(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One matrix from the documents of its shards."""
    if not docs:
        raise SetupError("nothing to merge")
    first = docs[0]
    for doc in docs[1:]:
        for key in MATRIX_SAME_RUN:
            if doc.get(key) != first.get(key):
                raise SetupError(f"matrices are not shards of one run: '{key}' differs")
    cells = []
    for index, cell in enumerate(first["cells"]):
        parts = [d["cells"][index]["report"] for d in docs]
        merged = merge_reports(parts)
        merged["date"] = first["date"]
        cells.append({"client": cell["client"], "vocabulary": cell["vocabulary"], "report": merged})
    out = {k: v for k, v in first.items() if k not in ("cells", "shard", "exit_code")}
    out["cells"] = cells
    out["merged_from"] = [d.get("shard", "?") for d in docs]
    out["exit_code"] = exit_code(out)
    return out


# ------------------------------------------------------------------ rendering

ICONS = OUTCOME_ICONS


Cells = dict[tuple[str, str], dict[str, Any]]


def _cells(doc: dict[str, Any]) -> Cells:
    """The document's cells by (client, vocabulary), made once per rendering: a renderer
    looks up every cell, and a search per look-up made a 10,000-cell page quadratic."""
    return {(c["client"], c["vocabulary"]): c for c in doc["cells"]}


def cell_text(report: dict[str, Any], *, icons: bool = True) -> str:
    """``✅ 24/24 pass`` or ``❌ 2 fail, 22 pass``: one cell of the overview.

    The HTML page leaves the icons out (its cells are coloured, and a machine without an
    emoji font would show empty boxes).
    """
    s = {o: report["summary"].get(o, 0) for o in OUTCOMES}  # a report before crash had none
    graded = s["pass"] + s["fail"] + s["crash"] + s["warn"] + s["error"]
    if report["exit_code"] == 0:
        known = sum(1 for c in report["checks"] if c.get("known_failure"))
        suffix = f" ({known} known)" if known else ""
        text = f"{s['pass']}/{graded} pass{suffix}"
        return f"{ICONS['pass']} {text}" if icons else text
    text = ", ".join(f"{s[o]} {o}" for o in ("fail", "crash", "error", "warn", "pass") if s[o])
    if s["fail"]:
        mark = ICONS["fail"]
    else:
        mark = ICONS["crash"] if s["crash"] else ICONS["error"] if s["error"] else ICONS["fail"]
    return f"{mark} {text}" if icons else text


def _header(doc: dict[str, Any]) -> str:
    kit = doc["kit"]
    sample = doc.get("fixtures_per_check")
    fixtures = f"the first {sample} fixture(s) of each check, " if sample is not None else ""
    return (
        f"stella-conform {kit['version']}, corpus {doc['corpus_version']}, seed {doc['seed']}, "
        f"{doc['examples']} example(s) per check, {fixtures}{doc['date']}"
    )


def _check_rows(
    doc: dict[str, Any], cells: Cells, vocab: str
) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """(check id, client name -> that client's check result) in catalogue order."""
    order: list[str] = []
    per: dict[str, dict[str, dict[str, Any]]] = {}
    for client in doc["clients"]:
        for check in cells[(client["name"], vocab)]["report"]["checks"]:
            if check["id"] not in per:
                order.append(check["id"])
                per[check["id"]] = {}
            per[check["id"]][client["name"]] = check
    return [(i, per[i]) for i in order]


def _outcome(check: dict[str, Any]) -> str:
    """A check's outcome as a known word (a tampered document cannot add CSS classes)."""
    outcome = check.get("outcome")
    return outcome if outcome in OUTCOMES else "error"


def _outcome_text(check: dict[str, Any]) -> str:
    return _outcome(check) + (" (known)" if check.get("known_failure") else "")


def _overview_status(report: dict[str, Any]) -> str:
    """``pass``, ``fail`` (or ``crash``: the client's failures), or ``error`` when nothing
    fails but something could not be graded."""
    if report["exit_code"] == 0:
        return "pass"
    blocking = [_outcome(c) for c in report["checks"] if not c.get("known_failure")]
    if "fail" in blocking:
        return "fail"
    return "crash" if "crash" in blocking else "error"


#: What each outcome means, for the legends of both renderings.
LEGEND = (
    ("pass", "the client reads every case of the check right"),
    ("fail", "the client breaks the rule: the message says how, the replay command re-runs "
     "the smallest case that shows it"),
    ("crash", "the client died on a case of the rule (an uncaught exception, a panic, a "
     "signal): its own failure, with its stderr"),
    ("error", "the rule could not be judged: the client timed out or broke the adapter "
     "protocol, or the kit ran out of time (its stderr is shown)"),
    ("warn", "the client breaks a SHOULD rule"),
    ("skip", "not graded in this client's mode or profiles"),
)  # fmt: skip


def _failures(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(client, vocabulary, check) of every check that did not pass, in table order."""
    return [
        (cell["client"], cell["vocabulary"], check)
        for cell in doc["cells"]
        for check in cell["report"]["checks"]
        if _outcome(check) in FAILING
    ]


def _first_failure(check: dict[str, Any]) -> dict[str, Any]:
    failures = check.get("failures") or []
    return failures[0] if failures and isinstance(failures[0], dict) else {}


def _stderr_of(failure: dict[str, Any]) -> str:
    observed = failure.get("observed")
    tail = observed.get("stderr_tail") if isinstance(observed, dict) else None
    return tail.strip("\n") if isinstance(tail, str) and tail.strip() else ""


def _claim_lines(claims: Any) -> list[str]:
    """A cell report's claims in words: what was claimed, what that left ungraded."""
    if not isinstance(claims, dict):
        return []
    out = []
    for key in ("knows", "reads", "computes"):
        if isinstance(claims.get(key), list):
            out.append(f"{key}: {', '.join(str(v) for v in claims[key])}")
    if claims.get("summary_only") is True:
        out.append("summary only")
    out += [f"not graded: {n}" for n in claims.get("not_graded") or [] if isinstance(n, str)]
    return out


def to_markdown(doc: dict[str, Any]) -> str:
    cells = _cells(doc)
    clients = [c["name"] for c in doc["clients"]]
    vocabs = [v["name"] for v in doc["vocabularies"]]
    out = ["## stella-conform compatibility matrix", "", markdown_code(_header(doc), 2000), ""]
    # names come from a config or a shard: escaped, so no markup, link or mention survives
    out.append("| client | mode | " + " | ".join(markdown_name(v) for v in vocabs) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in vocabs) + " |")
    for client in doc["clients"]:
        row = [cell_text(cells[(client["name"], v)]["report"]) for v in vocabs]
        name, mode = markdown_name(client["name"]), markdown_code(client["mode"])
        out.append(f"| {name} | {mode} | " + " | ".join(row) + " |")
    out += ["", " · ".join(f"{ICONS[o]} {o}: {meaning}" for o, meaning in LEGEND)]
    out.append("(known): listed in the client's known-failures file; it does not fail the matrix.")
    claimed = [
        (cell["client"], cell["vocabulary"], line)
        for cell in doc["cells"]
        for line in _claim_lines(cell["report"].get("claims"))
    ]
    if claimed:  # a release gate shows what the clients' claims left ungraded
        out += ["", "### claims", ""]
        out += [
            f"- {markdown_name(c)} × {markdown_name(v)}: {markdown_code(line, 2000)}"
            for c, v, line in claimed
        ]
    for vocab in doc["vocabularies"]:
        title = f"{markdown_name(vocab['name'])} ({markdown_code(vocab['ident'])})"
        out += ["", f"### checks, vocabulary {title}", ""]
        out.append("| check | " + " | ".join(markdown_name(c) for c in clients) + " |")
        out.append("| --- | " + " | ".join("---" for _ in clients) + " |")
        for check_id, by_client in _check_rows(doc, cells, vocab["name"]):
            marks = []
            for name in clients:
                check = by_client.get(name)
                marks.append(f"{ICONS[_outcome(check)]} {_outcome_text(check)}" if check else "—")
            out.append(f"| {markdown_code(check_id)} | " + " | ".join(marks) + " |")
    failing = _failures(doc)
    if failing:
        out += ["", "### failures, crashes and errors", ""]
        for client, vocab, check in failing:
            failure = _first_failure(check)
            line = (
                f"- {ICONS[_outcome(check)]} {markdown_name(client)} × {markdown_name(vocab)}, "
                f"{markdown_code(str(check.get('id')))}: {markdown_code(str(check.get('message')))}"
                + alike(failure)
            )
            if isinstance(failure.get("replay"), str):
                line += f"<br>replay: {markdown_code(failure['replay'], 1000)}"
            out.append(line)
    out += ["", "**" + ("all clients pass" if doc["exit_code"] == 0 else "a client fails") + "**"]
    return "\n".join(out) + "\n"


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.pass { background: #e6f6e6; }
.fail { background: #fbe3e3; }
.crash { background: #fbe3e3; outline: 2px solid #a11; outline-offset: -3px; }
.error { background: #e9e3f8; outline: 2px dashed #7a5cc4; outline-offset: -3px; }
.warn { background: #fff5d6; }
.skip { color: #888; }
.outcome { font-weight: 600; }
.fail .outcome, .crash .outcome { color: #a11; }
.error .outcome { color: #4b2a9e; }
td details { max-width: 40em; margin-top: 2px; }
td summary { cursor: pointer; }
td pre { white-space: pre-wrap; margin: 4px 0; font-size: 85%; }
#legend { list-style: none; padding: 0; }
#legend li { margin: 2px 0; }
.swatch { display: inline-block; min-width: 4em; padding: 0 6px; margin-right: 6px; }
code { font-size: 90%; }
"""

#: Characters of a message, and lines of stderr, shown in an HTML cell (the JSON has all).
HTML_MESSAGE = 600
HTML_STDERR_LINES = 12


def _html_check_cell(check: dict[str, Any] | None) -> str:
    """One check of one client: the outcome, and for a failure why and how to replay it."""
    esc = html.escape
    if check is None:
        return '<td class="skip">—</td>'
    outcome = _outcome(check)
    head = f'<span class="outcome">{esc(_outcome_text(check))}</span>'
    if outcome not in FAILING:
        return f'<td class="{esc(outcome)}">{head}</td>'
    failure = _first_failure(check)
    message = clip(no_surrogates(str(check.get("message") or "")), HTML_MESSAGE)
    body = [f'<details><summary class="message">{esc(message + alike(failure))}</summary>']
    if isinstance(failure.get("replay"), str):
        replay = clip(no_surrogates(failure["replay"]), 2000)
        body.append(f'<p class="replay">replay: <code>{esc(replay)}</code></p>')
    tail = _stderr_of(failure)
    if tail:
        shown = "\n".join(tail.splitlines()[-HTML_STDERR_LINES:])
        body.append(f'<pre class="stderr">{esc(no_surrogates(shown))}</pre>')
    body.append("</details>")
    return f'<td class="{esc(outcome)}">{head}{"".join(body)}</td>'


def to_html(doc: dict[str, Any]) -> str:
    """A self-contained page: inline style, no script, nothing fetched."""
    esc = html.escape
    cells = _cells(doc)
    clients = [c["name"] for c in doc["clients"]]
    vocabs = [v["name"] for v in doc["vocabularies"]]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>stella-conform compatibility matrix</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>stella-conform compatibility matrix</h1>",
        f'<p id="provenance">{esc(_header(doc))}</p>',
        '<table id="matrix"><thead><tr><th>client</th><th>mode</th>',
    ]
    parts += [f"<th>{esc(v)}</th>" for v in vocabs]
    parts.append("</tr></thead><tbody>")
    for client in doc["clients"]:
        parts.append(f"<tr><th>{esc(client['name'])}</th><td>{esc(client['mode'])}</td>")
        for vocab in vocabs:
            report = cells[(client["name"], vocab)]["report"]
            status = _overview_status(report)
            parts.append(f'<td class="{esc(status)}">{esc(cell_text(report, icons=False))}</td>')
        parts.append("</tr>")
    parts.append("</tbody></table>")
    parts.append('<ul id="legend">')
    for outcome, meaning in LEGEND:
        parts.append(f'<li><span class="swatch {outcome}">{outcome}</span>{esc(meaning)}</li>')
    parts.append(
        '<li><span class="swatch">(known)</span>listed in the client\'s known-failures file; '
        "it does not fail the matrix</li></ul>"
    )
    for vocab in doc["vocabularies"]:
        parts.append(f"<h2>checks, vocabulary {esc(vocab['name'])} ({esc(vocab['ident'])})</h2>")
        parts.append(f'<table class="checks" data-vocabulary="{esc(vocab["name"])}"><thead><tr>')
        parts.append("<th>check</th>" + "".join(f"<th>{esc(c)}</th>" for c in clients))
        parts.append("</tr></thead><tbody>")
        for check_id, by_client in _check_rows(doc, cells, vocab["name"]):
            parts.append(f"<tr><th><code>{esc(check_id)}</code></th>")
            parts += [_html_check_cell(by_client.get(name)) for name in clients]
            parts.append("</tr>")
        parts.append("</tbody></table>")
    verdict = "all clients pass" if doc["exit_code"] == 0 else "a client fails"
    parts.append(f'<p id="verdict"><strong>{verdict}</strong></p></body></html>')
    return "\n".join(parts) + "\n"


def summary_counts(doc: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(OUTCOMES, 0)
    for cell in doc["cells"]:
        for outcome, n in cell["report"]["summary"].items():
            counts[outcome] += n
    return counts
