"""Every option of the kit, declared once: its name, kind (validation and range), default,
help, and the sources that can set it.

The sources are the command line (click options made from this table,
:mod:`stella_conform.cli.options`), the pytest plugin's ini values
(:mod:`stella_conform.pytest_plugin`), a matrix config's TOML
(:mod:`stella_conform.conformance.matrix.config`) and the ``[tool.stella-conform]`` table
of the client's ``pyproject.toml`` (:mod:`stella_conform.options.pyproject`). A source
that cannot set an option says why (:class:`Unset`), so that a new option is offered by
every source or refused by one for a stated reason (``tests/options/test_options.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from stella_conform.options.kinds import (
    Choice,
    Count,
    Flag,
    Kind,
    Seconds,
    Text,
    Words,
)


class Source(Enum):
    CLI = "the command line"
    INI = "the pytest plugin's ini"
    MATRIX = "a matrix config"
    PYPROJECT = "pyproject.toml's [tool.stella-conform]"


@dataclass(frozen=True)
class Unset:
    """A source that cannot set an option, and why."""

    reason: str


@dataclass(frozen=True)
class Cli:
    """How the command line names an option: its flags (and the parameter's name where
    it is not the long flag's), and the commands that take it."""

    flags: tuple[str, ...]
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Ini:
    """The plugin's ini names (``stella_examples``, also ``--stella-examples``), each with
    its help and its ini default."""

    names: tuple[tuple[str, str, str | None], ...]


@dataclass(frozen=True)
class InMatrix:
    """Where a matrix config holds the option: ``[matrix]``, ``[[client]]`` or
    ``[[vocabulary]]``, under ``key``; ``default`` is the matrix's own when it differs."""

    table: str
    key: str
    default: Any = None


@dataclass(frozen=True)
class Option:
    name: str
    kind: Kind
    default: Any
    help: str
    cli: Cli | Unset
    ini: Ini | Unset
    matrix: InMatrix | Unset
    #: The key under ``[tool.stella-conform]``: the long flag without its dashes.
    pyproject: str | Unset

    def source(self, source: Source) -> Any:
        return {
            Source.CLI: self.cli,
            Source.INI: self.ini,
            Source.MATRIX: self.matrix,
            Source.PYPROJECT: self.pyproject,
        }[source]


_PYTEST_SELECTS = Unset("pytest selects the checks it runs: -k, -m, --lf")
_PYTEST_REPORTS = Unset("pytest writes its own reports: --junitxml, and plugins for others")
_PYTEST_PRINTS = Unset("pytest's own -v and --color say how it prints")
_NO_FUZZ_IN_INI = Unset(
    "the plugin grades; its fuzz_targets are fuzzed by HypoFuzz, whose settings apply"
)
_MATRIX_GRADES_ALL = Unset(
    "a matrix grades every check of each client's profiles, so that its cells compare"
)
_MATRIX_NO_DATABASE = Unset("a matrix is reproducible from its seed alone: no example database")
_MATRIX_WRITES_OUT = Unset("a matrix writes matrix.json, .md and .html under --out")
_MATRIX_DOES_NOT_FUZZ = Unset("a matrix grades; it does not fuzz")
_PER_RUN = "is a choice of one run on the command line"


def _cli(*flags: str, commands: tuple[str, ...] = ("run", "fuzz")) -> Cli:
    return Cli(flags, commands)


def _ini(name: str, help: str, default: str | None = None) -> Ini:
    return Ini(((name, help, default),))


OPTIONS: tuple[Option, ...] = (
    Option(
        "client",
        Text(),
        None,
        "The client's command: stella-conform run [OPTIONS] -- CMD [ARGS...].",
        Unset("the command is the argument after --, not an option"),
        _ini("stella_client", "command of the client to grade (enables the stella-conform items)"),
        InMatrix("client", "command"),
        Unset("a checkout's pyproject.toml must not choose a program to start"),
    ),
    Option(
        "mode",
        Choice(("auto", "exit", "report", "persistent"), "mode"),
        "auto",
        "auto: the client's hello within a short wait decides (persistent or report per its "
        "modes; no hello: exit); exit: exit status only (any client); report/persistent: the "
        "adapter protocol (docs/adapter-protocol.md).",
        _cli("--mode", commands=("run", "fuzz", "replay", "smoke")),
        _ini(
            "stella_mode",
            "adapter protocol mode: auto (the client's hello decides), exit, report or persistent",
            "auto",
        ),
        InMatrix("client", "mode", "persistent"),
        "mode",
    ),
    Option(
        "profiles",
        Words(),
        (),
        "Check profile to grade (repeatable); dashboard and recorder add to reader. "
        "Default: the profiles the adapter's hello claims, else reader.",
        _cli("--profile", "profiles"),
        _ini(
            "stella_profile",
            "check profile(s), comma separated (default: the hello's, else reader)",
        ),
        InMatrix("client", "profiles"),
        "profile",
    ),
    Option(
        "examples",
        Count(0),
        25,
        "Generated cases per check (0: fixtures only); from 25 on, each check also grades "
        "its strata first, the simplest case of each of its mutations (docs/generators.md).",
        _cli("--examples", commands=("run", "matrix")),
        _ini(
            "stella_examples", "generated cases per check (default 25, or the Hypothesis profile's)"
        ),
        InMatrix("matrix", "examples", 10),
        "examples",
    ),
    Option(
        "seed",
        Count(None, None),
        0,
        "The seed of the generated cases.",
        _cli("--seed", commands=("run", "fuzz", "matrix")),
        _ini("stella_seed", "seed for generated cases (default: --hypothesis-seed, else 0)"),
        InMatrix("matrix", "seed"),
        "seed",
    ),
    Option(
        "known_failures",
        Text("file"),
        None,
        'TOML file: [known-failures] "CHECK-ID" = "reason".',
        _cli("--known-failures"),
        _ini("stella_known_failures", "TOML file of checks expected to fail, with reasons"),
        InMatrix("client", "known_failures"),
        "known-failures",
    ),
    Option(
        "timeout",
        Seconds(0.1),
        10.0,
        "Seconds a client may take for one case.",
        _cli("--timeout", commands=("run", "fuzz", "replay", "smoke")),
        _ini("stella_timeout", "seconds per case", "10"),
        InMatrix("client", "timeout"),
        "timeout",
    ),
    Option(
        "wire_schema",
        Text("file"),
        None,
        "Grade against a stella release's agentevent.schema.json, or a bundled "
        "vocabulary by name (stella-default, stella-older; see stella-conform vocabulary).",
        _cli(
            "--wire-schema",
            "--vocabulary",
            "wire_schema",
            commands=("run", "fuzz", "replay", "corpus", "decode", "validate", "vocabulary"),
        ),
        Ini(
            (
                ("stella_wire_schema", "a stella release's agentevent.schema.json", None),
                (
                    "stella_vocabulary",
                    "a bundled vocabulary by name (stella-older), or a wire schema file",
                    None,
                ),
            )
        ),
        InMatrix("vocabulary", "wire_schema"),
        "vocabulary",
    ),
    Option(
        "knows",
        Text("file"),
        None,
        "Event types the client recognizes (or a wire schema / bundled vocabulary whose "
        "types it knows); any other type is unrecognized for it.",
        _cli("--knows", commands=("run", "fuzz", "replay")),
        _ini(
            "stella_knows", "event types the client recognizes, comma separated (or a schema file)"
        ),
        InMatrix("client", "knows"),
        "knows",
    ),
    Option(
        "reads",
        Text(),
        None,
        "Envelope parts the client reads: run, pipeline, query, events, files_touched.",
        _cli("--reads", commands=("run", "fuzz", "replay")),
        _ini(
            "stella_reads", "envelope parts it reads: run, pipeline, query, events, files_touched"
        ),
        InMatrix("client", "reads"),
        "reads",
    ),
    Option(
        "computes",
        Text(),
        None,
        "Summary fields the client computes; a check of other fields skips.",
        _cli("--computes", commands=("run", "fuzz", "replay")),
        _ini("stella_computes", "summary fields it computes, comma separated"),
        InMatrix("client", "computes"),
        "computes",
    ),
    Option(
        "summary_only",
        Flag(),
        None,
        "The client reports only a summary, no line observations; checks that need them skip.",
        _cli("--summary-only", commands=("run", "fuzz", "replay")),
        _ini(
            "stella_summary_only", "true: the client reports only a summary, no line observations"
        ),
        InMatrix("client", "summary_only"),
        "summary-only",
    ),
    Option(
        "database",
        Words("folder"),
        (),
        "Hypothesis example database: a directory (default .stella-conform/hypothesis), "
        "and/or a shared redis://HOST:PORT/N read and written beside it (needs "
        "stella-conform[redis]); repeatable (env STELLA_CONFORM_DATABASE).",
        _cli("--database", "databases"),
        _ini(
            "stella_database",
            "example database: a directory, and/or redis://HOST:PORT/N shared beside it "
            "(default: Hypothesis's configured one)",
        ),
        _MATRIX_NO_DATABASE,
        "database",
    ),
    Option(
        "case_cache",
        Text("folder"),
        Path(".stella-conform/cases"),
        "Folder of generated cases kept between runs: a later run with the same kit, "
        "vocabulary, claims, seed and examples grades them without generating them again.",
        _cli("--case-cache", commands=("run",)),
        _ini(
            "stella_case_cache",
            "folder of generated cases kept between runs (default .stella-conform/cases under "
            "the rootdir; 'off': none)",
        ),
        Unset("a matrix shares each column's generated cases between its cells in one process"),
        "case-cache",
    ),
    Option(
        "no_case_cache",
        Flag(),
        False,
        "Generate every case afresh; keep none.",
        _cli("--no-case-cache", commands=("run",)),
        Unset("stella_case_cache = off turns it off"),
        Unset("a matrix keeps no case cache"),
        "no-case-cache",
    ),
    Option(
        "line_timeout",
        Seconds(0.05),
        5.0,
        "Report mode: seconds to acknowledge one line (lockstep).",
        _cli("--line-timeout", commands=("run", "fuzz", "replay", "smoke")),
        Unset("the plugin's client answers each line within the default wait"),
        InMatrix("client", "line_timeout"),
        "line-timeout",
    ),
    Option(
        "reject_exit_codes",
        Text(),
        None,
        "Exit mode: the exit statuses that mean 'rejected', comma-separated [default: 1].",
        _cli("--reject-exit-codes", commands=("run", "fuzz", "replay", "smoke")),
        Unset("the plugin's exit-mode client rejects with status 1, as the protocol says"),
        Unset("a matrix's clients speak the adapter protocol or reject with status 1"),
        "reject-exit-codes",
    ),
    Option(
        "crash_detection",
        Flag(),
        True,
        "Grade a runtime's crash report on stderr (uncaught exception, panic) as a "
        "crash, not a rejection [default: on].",
        _cli("--crash-detection/--no-crash-detection", commands=("run", "fuzz", "replay", "smoke")),
        Unset("the plugin always grades a crash report as a crash"),
        Unset("a matrix always grades a crash report as a crash, so that its cells compare"),
        "crash-detection",
    ),
    Option(
        "jobs",
        Count(1),
        None,
        "Checks graded in parallel.",
        _cli("-j", "--jobs", commands=("run", "matrix")),
        Unset("pytest-xdist's -n spreads the check items over workers"),
        InMatrix("matrix", "jobs", 2),
        "jobs",
    ),
    Option(
        "only",
        Words(),
        (),
        "Only checks matching (repeatable).",
        _cli("--only"),
        _PYTEST_SELECTS,
        _MATRIX_GRADES_ALL,
        "only",
    ),
    Option(
        "skip",
        Words(),
        (),
        "Skip checks matching (repeatable).",
        _cli("--skip"),
        _PYTEST_SELECTS,
        _MATRIX_GRADES_ALL,
        "skip",
    ),
    Option(
        "json",
        Text("output"),
        None,
        "The JSON report (docs/ci.md reads it).",
        _cli("--json", "json_path"),
        _PYTEST_REPORTS,
        _MATRIX_WRITES_OUT,
        "json",
    ),
    Option(
        "junit_xml",
        Text("output"),
        None,
        "JUnit XML report.",
        _cli("--junit-xml", "junit_path"),
        _PYTEST_REPORTS,
        _MATRIX_WRITES_OUT,
        "junit-xml",
    ),
    Option(
        "markdown",
        Text("output"),
        None,
        "Markdown summary (e.g. $GITHUB_STEP_SUMMARY).",
        _cli("--markdown", "markdown_path"),
        _PYTEST_REPORTS,
        _MATRIX_WRITES_OUT,
        "markdown",
    ),
    Option(
        "failures_dir",
        Text("folder"),
        Path(".stella-conform/failures"),
        "Folder where each failing check's smallest cases are saved.",
        _cli("--failures-dir"),
        Unset("the plugin saves them under the rootdir's .stella-conform/failures"),
        InMatrix("matrix", "failures_dir"),
        "failures-dir",
    ),
    Option(
        "no_database",
        Flag(),
        False,
        "Do not read or write the Hypothesis example database.",
        _cli("--no-database"),
        Unset("Hypothesis's own settings (database=None) turn it off under pytest"),
        _MATRIX_NO_DATABASE,
        "no-database",
    ),
    Option(
        "github_artifact",
        Text(),
        None,
        "Also read (never write) the example database a CI job uploaded as this "
        "GitHub Actions artifact (default name stella-conform-db; needs GITHUB_TOKEN; "
        "env STELLA_CONFORM_GITHUB_ARTIFACT).",
        _cli("--github-artifact"),
        Unset("a Hypothesis profile's database reads an artifact under pytest"),
        _MATRIX_NO_DATABASE,
        "github-artifact",
    ),
    Option(
        "seed_corpus",
        Words("folder or file"),
        (),
        "A folder (or file) of recorded streams (.jsonl) and json envelopes: generated "
        "stream cases may start from their runs (repeatable).",
        _cli("--seed-corpus"),
        Unset("the plugin's cases are drawn as Hypothesis's database and profile say"),
        InMatrix("vocabulary", "seed_corpus"),
        "seed-corpus",
    ),
    Option(
        "max_shrinks",
        Count(0),
        150,
        "Client runs a check may spend shrinking its first failing generated case "
        "(0: report the case as found).",
        _cli("--max-shrinks"),
        Unset("the plugin's items shrink with the kit's default budget, as run does"),
        InMatrix("matrix", "max_shrinks"),
        "max-shrinks",
    ),
    Option(
        "fixtures_per_check",
        Count(1),
        None,
        "At most this many fixtures per check (the most basic first).",
        Unset("run grades every fixture of a check; a matrix samples them across modes"),
        Unset("the plugin grades every fixture of a check, as run does"),
        InMatrix("matrix", "fixtures_per_check"),
        Unset("run grades every fixture of a check; a matrix samples them across modes"),
    ),
    Option(
        "shard",
        Text(),
        None,
        "Grade only shard I of N (checks split deterministically; merge the JSON "
        "reports with 'stella-conform report merge').",
        _cli("--shard", commands=("run", "matrix")),
        Unset("pytest's own sharding (xdist, pytest-split) splits the items"),
        Unset("every shard reads the same config: --shard names the one to grade"),
        Unset("every shard reads the same pyproject.toml: --shard names the one to grade"),
    ),
    Option(
        "time_budget",
        Seconds(1),
        None,
        "Bound the whole run: no case starts after SECONDS (a case in flight may take one "
        "more --timeout); checks not graded in full are errors that say so.",
        _cli("--time-budget", commands=("run",)),
        Unset("pytest-timeout bounds a pytest session"),
        Unset("a matrix grades every task: a shard bounds how long one machine takes"),
        "time-budget",
    ),
    Option(
        "color",
        Choice(("auto", "always", "never"), "color"),
        "auto",
        "Colour the outcomes: auto = on a terminal unless NO_COLOR is set.",
        _cli("--color"),
        _PYTEST_PRINTS,
        Unset("a matrix prints no coloured outcomes"),
        "color",
    ),
    Option(
        "verbose",
        Flag(),
        False,
        "More lines while grading.",
        _cli("--verbose", "-v", commands=("run", "fuzz", "matrix")),
        _PYTEST_PRINTS,
        Unset(f"how much a matrix prints {_PER_RUN}"),
        "verbose",
    ),
    Option(
        "duration",
        Text(),
        None,
        "How long to fuzz: 90s, 5m, 1h30m (default: until Ctrl-C).",
        _cli("--for", "duration", commands=("fuzz",)),
        _NO_FUZZ_IN_INI,
        _MATRIX_DOES_NOT_FUZZ,
        "for",
    ),
    Option(
        "stop_on_first",
        Flag(),
        False,
        "Stop fuzzing a check at its first failure, and stop when every check has failed.",
        _cli("--stop-on-first", commands=("fuzz",)),
        _NO_FUZZ_IN_INI,
        _MATRIX_DOES_NOT_FUZZ,
        "stop-on-first",
    ),
    Option(
        "max_failures",
        Count(1),
        None,
        "Stop after this many distinct failures (any checks).",
        _cli("--max-failures", commands=("fuzz",)),
        _NO_FUZZ_IN_INI,
        _MATRIX_DOES_NOT_FUZZ,
        "max-failures",
    ),
    Option(
        "max_cases",
        Count(1),
        None,
        "Stop after this many cases (the same session on a fast machine and a loaded one).",
        _cli("--max-cases", commands=("fuzz",)),
        _NO_FUZZ_IN_INI,
        _MATRIX_DOES_NOT_FUZZ,
        "max-cases",
    ),
    Option(
        "no_feedback",
        Flag(),
        False,
        "Do not ask the client for coverage (Python and Node.js clients give it by default).",
        _cli("--no-feedback", commands=("fuzz",)),
        _NO_FUZZ_IN_INI,
        _MATRIX_DOES_NOT_FUZZ,
        "no-feedback",
    ),
)

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
BY_PYPROJECT: dict[str, Option] = {o.pyproject: o for o in OPTIONS if isinstance(o.pyproject, str)}
