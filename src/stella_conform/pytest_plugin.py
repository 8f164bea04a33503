"""pytest plugin: stella conformance checks as test items in a client's own suite.

Registered through the ``pytest11`` entry point but inert unless asked for: with no
``--stella-client`` (or ``stella_client`` ini value) it adds no items and runs no code.

Subprocess clients::

    pytest --stella-client "python3 my_client.py" --stella-mode persistent

collects one item per check (``stella-conform::R3.unknown-type-inert``), so ``-k R3``,
``--lf``, JUnit XML and IDE test trees show rules.

In-process Python parsers::

    from stella_conform.pytest_plugin import conformance_tests
    test_my_parser = conformance_tests(my_parser.read)

makes a test parametrized by check id in that module (see docs/pytest-plugin.md).
"""

from __future__ import annotations

import shlex
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stella_conform.options.kinds import Problem
from stella_conform.options.model import OPTIONS, Ini
from stella_conform.safe_text import for_terminal

#: The plugin's options, ``--stella-NAME`` and the ini value ``stella_NAME``, with their
#: ini defaults and help: the options model's (:mod:`stella_conform.options.model`).
STELLA_OPTIONS = tuple(
    (ini_name.removeprefix("stella_").replace("_", "-"), default, help_text)
    for option in OPTIONS
    if isinstance(option.ini, Ini)
    for ini_name, help_text, default in option.ini.names
)
#: The model's option behind each of the plugin's names.
_MODEL = {
    ini_name.removeprefix("stella_").replace("_", "-"): option
    for option in OPTIONS
    if isinstance(option.ini, Ini)
    for ini_name, _, _ in option.ini.names
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stella-conform", "stella client conformance (stella-conform)")
    for name, default, help_text in STELLA_OPTIONS:
        dest = "stella_" + name.replace("-", "_")
        group.addoption(f"--stella-{name}", dest=dest, default=None, help=help_text)
        parser.addini(dest, help=help_text, default=default)


def _option(config: pytest.Config, name: str) -> Any:
    dest = "stella_" + name.replace("-", "_")
    value = config.getoption(dest, default=None)
    if value is None:
        value = config.getini(dest)
    return value or None


def _active(config: pytest.Config) -> bool:
    return _option(config, "client") is not None


def _checked(config: pytest.Config, name: str) -> Any:
    """An option or ini value as the model's kind reads it (``None`` when not given); a
    usage error in the model's words otherwise."""
    value = _option(config, name)
    if value is None:
        return None
    try:
        return _MODEL[name].kind.parse(str(value))
    except Problem as problem:
        raise pytest.UsageError(
            f"stella_{name.replace('-', '_')} (--stella-{name}): {problem}"
        ) from None


def _timeout(config: pytest.Config) -> float:
    """``stella_timeout``: seconds, a finite number in the model's range."""
    seconds = _checked(config, "timeout")
    return float(_MODEL["timeout"].default) if seconds is None else float(seconds)


def _examples(config: pytest.Config) -> int:
    explicit = _checked(config, "examples")
    if explicit is not None:
        return int(explicit)
    if config.getoption("hypothesis_profile", default=None):
        from hypothesis import settings

        return int(settings().max_examples)  # the profile the user chose
    return int(_MODEL["examples"].default)


def _seed(config: pytest.Config) -> int:
    explicit = _checked(config, "seed")
    if explicit is not None:
        return int(explicit)
    hyp = config.getoption("hypothesis_seed", default=None)
    return int(hyp) if hyp is not None else 0


def _database(config: pytest.Config) -> Any:
    """``stella_database`` (a directory and/or a shared Redis), else Hypothesis's own.

    A shared Redis is read and written beside the local database: the directory named,
    else the one Hypothesis is configured with (a profile's, e.g. GitHub artifacts).
    """
    from hypothesis import settings

    spec = str(_option(config, "database") or "").strip()
    if not spec:
        return settings().database  # honours a profile's database (e.g. GitHub artifacts)
    from stella_conform.conformance.store.database import example_database, parse_sources

    try:
        directory, shared = parse_sources(v for v in spec.replace(",", " ").split() if v)
        if directory is not None and not directory.is_absolute():
            directory = Path(str(config.rootpath)) / directory
        local = None if directory is not None else settings().database
        return example_database(directory, shared=shared, local=local)
    except (ValueError, ModuleNotFoundError) as exc:
        raise pytest.UsageError(f"stella_database: {exc}") from None


def build_config(
    config: pytest.Config, client: Any, defaults: Mapping[str, Any] | None = None
) -> Any:
    """The suite's configuration from the ini and ``--stella-*`` values; ``defaults`` (by
    the model's names, checked by :func:`_arguments`) stand where neither gives a value."""
    from stella_conform.conformance.checks.claims import Claims
    from stella_conform.options.suite import suite_config

    rootdir = Path(str(config.rootpath))
    options = {
        "examples": _examples(config),
        "seed": _seed(config),
        "failures_dir": rootdir / ".stella-conform" / "failures",
        "wire_schema": _vocabulary_option(config),
        "case_cache": _case_cache(config, rootdir),
    }
    options.update((k, v) for k, v in (defaults or {}).items() if _option(config, k) is None)
    return suite_config(
        client,
        options,
        claims=config.stash.get(_CLAIMS_KEY, Claims()),
        database_dir=None,
        database=_database(config),
        mode_reason=config.stash.get(_MODE_REASON_KEY, None),
    )


def _case_cache(config: pytest.Config, rootdir: Path) -> Path | None:
    value = _option(config, "case-cache")
    if value is None:
        return rootdir / ".stella-conform" / "cases"
    if str(value).strip().lower() in ("off", "none", "no", "false", "0"):
        return None
    path = Path(str(value))
    return path if path.is_absolute() else rootdir / path


def _vocabulary_option(config: pytest.Config) -> Any:
    """``stella_vocabulary`` or ``stella_wire_schema``: one vocabulary, by name or file."""
    return _option(config, "vocabulary") or _option(config, "wire-schema")


def _told(config: pytest.Config) -> Any:
    """Every value of the stella options checked before the client starts (the auto probe
    included): a bad one is a usage error, exit 4, never a failing check with a traceback."""
    from stella_conform.conformance.inputs import check_told
    from stella_conform.errors import SetupError

    try:
        summary_only = _MODEL["summary-only"].kind.parse(_option(config, "summary-only") or "")
    except Problem as problem:
        raise pytest.UsageError(f"stella_summary_only: {problem}") from None
    given = [p.strip() for p in str(_option(config, "profile") or "").split(",") if p.strip()]
    known = _option(config, "known-failures")
    _refuse_named_paths(config)
    try:
        return check_told(
            where="stella options",
            vocabulary=_vocabulary_option(config),
            profiles=given,
            known_failures=Path(known) if known is not None else None,
            knows=_option(config, "knows"),
            reads=_option(config, "reads"),
            computes=_option(config, "computes"),
            summary_only=bool(summary_only),
            # built again in each check (Hypothesis's profile may not be loaded yet); here
            # a bad value is refused before the client starts
            database=lambda: _database(config),
        )
    except SetupError as exc:
        raise pytest.UsageError(str(exc)) from None


def _refuse_named_paths(config: pytest.Config) -> None:
    """A stella option naming a FIFO, a socket, a device or a file descriptor where a
    folder or a file goes is a usage error before the client starts, as ``run``'s options
    are (:func:`stella_conform.safe_files.named_path_problem`: ``stat`` only, never an
    open that waits); a database or case cache there was silently unused."""
    from stella_conform.safe_files import named_path_problem

    rootdir = Path(str(config.rootpath))
    named: list[tuple[str, str, Path, str]] = []
    spec = str(_option(config, "database") or "")
    for value in spec.replace(",", " ").split():
        if "://" not in value:
            named.append(("stella_database", value, rootdir / value, "folder"))
    cache = _case_cache(config, rootdir)
    if cache is not None:
        named.append(("stella_case_cache", str(_option(config, "case-cache")), cache, "folder"))
    for name in ("known-failures", "wire-schema", "vocabulary"):
        value = _option(config, name)
        if value is not None and str(value).strip():
            named.append((f"stella_{name.replace('-', '_')}", str(value), Path(str(value)), "file"))
    for option, value, path, want in named:
        problem = named_path_problem(path, want)
        if problem is not None:
            raise pytest.UsageError(f"{option} {value}: {problem}")


def explain(result: Any, seed: int, rerun: str | None = None) -> str:
    """A failure message: the minimal stream, what the client did against what was expected.

    ``rerun`` (a pytest command) stands in for a replay command a case cannot have.
    """
    from stella_conform.conformance.report.failures import explanation_lines

    lines = explanation_lines(result, rerun)  # the smallest in full, every other one a line
    lines.append(f"seed: {seed} (re-run with --stella-seed {seed})")
    return for_terminal("\n".join(lines))  # a client's words, in pytest's report


def run_as_test(
    check: Any, suite_config: Any, known: dict[str, str], rerun: str | None = None
) -> None:
    """Run one check and turn its outcome into pytest's: pass, fail, skip, xfail, warning.

    The check is graded by the grading session ``run`` uses, the test its handler.  A
    failure is reported with ``pytest.fail(..., pytrace=False)``: the explanation is the
    whole report, with no traceback through the plugin's own code.
    """
    from stella_conform.conformance.suite import Grading, Task

    outcome = _Outcome()
    Grading([Task(check, suite_config)], outcome.handle).run()
    result = outcome.result
    assert result is not None  # the session ends every check it starts, or raises
    reason = known.get(check.id)
    if result.outcome == "skip":
        pytest.skip(for_terminal(result.message))
    if reason is not None:
        if result.outcome in ("fail", "crash", "warn", "error"):
            pytest.xfail(for_terminal(f"known failure: {reason}"))
        pytest.fail(
            f"{check.id} is listed as a known failure ({reason}) but now passes: "
            "remove it from the list",
            pytrace=False,
        )
    if result.outcome == "warn":
        said = for_terminal(f"{check.id} (SHOULD): {result.message}")
        warnings.warn(said, UserWarning, stacklevel=1)
        return
    if result.outcome in ("fail", "crash", "error"):
        pytest.fail(explain(result, suite_config.seed, rerun), pytrace=False)


class _Outcome:
    """A test's handler of the grading session: the result its check finished with."""

    result: Any = None

    def handle(self, event: Any) -> None:
        from stella_conform.conformance.report.events import CheckFinished

        if isinstance(event, CheckFinished):
            self.result = event.result


class StellaCheckItem(pytest.Item):
    """One check of the catalogue, graded against the configured client."""

    def __init__(self, *, check: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.add_marker(pytest.mark.stella)

    def runtest(self) -> None:
        from stella_conform import stopping

        cfg = self.config
        client = cfg.stash[_CLIENT_KEY]
        # a grandchild a client put in a session of its own is killed with the check
        # (it was left running: one per case)
        with stopping.reaped():
            run_as_test(self.check, build_config(cfg, client), cfg.stash[_KNOWN_KEY])

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.path, None, f"stella-conform: {self.check.id} ({self.check.name})"


class StellaCollector(pytest.Collector):
    def collect(self) -> Iterator[StellaCheckItem]:
        for check in self.config.stash[_CHECKS_KEY]:
            yield StellaCheckItem.from_parent(self, name=check.id, check=check)


_CLIENT_KEY = pytest.StashKey[Any]()
_CHECKS_KEY = pytest.StashKey[list[Any]]()
_KNOWN_KEY = pytest.StashKey[dict[str, str]]()
_CLAIMS_KEY = pytest.StashKey[Any]()
_MODE_REASON_KEY = pytest.StashKey[str | None]()
#: The key under which an xdist controller hands its workers the chosen mode and why.
_WORKER_MODE = "stella_conform_mode"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "stella: a stella-conform conformance check")
    if not _active(config):
        return
    from stella_conform.conformance.clients.automode import settle_mode
    from stella_conform.conformance.clients.runner import Client, resolve_client
    from stella_conform.errors import SetupError
    from stella_conform.safe_files import pin_dir

    # before the client starts: the cases saved later go there or nowhere
    pin_dir(Path(str(config.rootpath)) / ".stella-conform" / "failures")

    # every value is checked before the client starts: a bad one is a usage error
    _examples(config)
    _seed(config)
    timeout = _timeout(config)
    told = _told(config)
    try:
        words = shlex.split(str(_option(config, "client")))
    except ValueError as exc:  # an unbalanced quote was an INTERNALERROR
        raise pytest.UsageError(f"stella_client (--stella-client): {exc}") from None
    try:
        argv = resolve_client(words)
    except SetupError as exc:
        raise pytest.UsageError(f"--stella-client: {exc}") from None
    mode = str(_option(config, "mode") or _MODEL["mode"].default)
    try:
        _MODEL["mode"].kind.parse(mode)
    except Problem as problem:
        raise pytest.UsageError(f"--stella-mode: {problem}") from None
    # an xdist worker grades in the mode the controller chose: every worker the same
    chosen = getattr(config, "workerinput", {}).get(_WORKER_MODE)
    if chosen is not None:
        mode, config.stash[_MODE_REASON_KEY] = chosen
    client = Client(
        argv=argv,
        mode="report" if mode == "auto" else mode,  # type: ignore[arg-type]
        timeout=timeout,
    )
    try:
        client, hello, reason = settle_mode(client, mode)
    except SetupError as exc:
        raise pytest.UsageError(f"--stella-mode: {exc}") from None
    if reason is not None:
        config.stash[_MODE_REASON_KEY] = reason
    try:
        config.stash[_CLAIMS_KEY] = told.claims(hello)
        config.stash[_CHECKS_KEY] = told.checks(hello)
    except SetupError as exc:  # the hello's own words (an unknown profile or name in it)
        raise pytest.UsageError(str(exc)) from None
    config.stash[_CLIENT_KEY] = client
    config.stash[_KNOWN_KEY] = told.known


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: each worker grades in the mode this process chose (auto decides once)."""
    config = node.config
    if _active(config) and _CLIENT_KEY in config.stash:
        reason = config.stash.get(_MODE_REASON_KEY, None)
        node.workerinput[_WORKER_MODE] = (config.stash[_CLIENT_KEY].mode, reason)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The mode the checks are graded in, and why when ``auto`` chose it."""
    if not _active(config) or _CLIENT_KEY not in config.stash:
        return []
    mode = config.stash[_CLIENT_KEY].mode
    reason = config.stash.get(_MODE_REASON_KEY, None)
    return [f"stella-conform: {mode} mode" + (f" (auto: {reason})" if reason else "")]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the check items before -k, -m, --lf and xdist see the collection."""
    if not _active(config) or _CHECKS_KEY not in config.stash:
        return
    collector = StellaCollector.from_parent(session, name="stella-conform", nodeid="stella-conform")
    items.extend(collector.collect())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A skipped check names the check, not the line of the plugin that skipped it."""
    report = yield
    if (
        report.skipped
        and isinstance(report.longrepr, tuple)
        and item.get_closest_marker("stella") is not None
    ):
        report.longrepr = (item.nodeid, None, report.longrepr[2])
    return report


# ---------------------------------------------------------------------- in-process API


def conformance_tests(
    parser: Callable[..., Any],
    *,
    profiles: Sequence[str] = ("reader",),
    examples: int | None = None,
    seed: int | None = None,
    known_failures: dict[str, str] | None = None,
    only: Sequence[str] = (),
    rejects: type[BaseException] | Sequence[type[BaseException]] | None = None,
    knows: Sequence[str] | None = None,
    computes: Sequence[str] | None = None,
) -> Callable[..., None]:
    """A test function, parametrized by check id, grading an in-process Python parser.

    ``parser(lines)`` or ``parser(lines, report)``: see
    :mod:`stella_conform.conformance.clients.inprocess`.
    ``rejects``: the exception type(s) by which the parser rejects a stream (default
    ``ValueError``); any other exception is a crash, graded ``error``.
    ``knows`` / ``computes``: the parser's claims (the event types it recognizes, the
    summary fields it fills in), as ``run --knows/--computes``.
    Assign the result to a ``test_*`` name in a test module.
    """
    from stella_conform.conformance.checks import select
    from stella_conform.conformance.checks.claims import claims_from, resolve_profiles
    from stella_conform.conformance.clients.inprocess import Parser, reject_kinds, wants_report
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.schemas.vocabulary import Vocabulary

    checks = select(resolve_profiles(profiles, None), only)
    claims = claims_from(
        knows=knows,
        reads=None,
        computes=computes,
        summary_only=None,
        vocab=Vocabulary.default(),
        where="conformance_tests",
    )
    kinds = reject_kinds(rejects)
    mode = "report" if wants_report(parser) else "exit"
    client = Client(argv=(), mode=mode, function=Parser(parser, kinds))  # type: ignore[arg-type]
    known = dict(known_failures or {})
    given = _arguments(examples=examples, seed=seed)  # the ini and --stella-* win over them

    @pytest.mark.stella
    @pytest.mark.parametrize("stella_check", checks, ids=[c.id for c in checks])
    def test_stella_conformance(stella_check: Any, request: pytest.FixtureRequest) -> None:
        suite = build_config(request.config, client, given)
        if claims.any:
            suite = suite.with_claims(claims)
        rerun = shlex.join(["pytest", request.node.nodeid, "--stella-seed", str(suite.seed)])
        run_as_test(stella_check, suite, known, rerun)

    test: Callable[..., None] = test_stella_conformance
    return test


def _arguments(**values: Any) -> dict[str, Any]:
    """:func:`conformance_tests`' option arguments given (not ``None``), checked by the
    options model as an ini value is; :class:`ValueError` in the model's words otherwise."""
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        try:
            checked[name] = _MODEL[name].kind.parse(value)
        except Problem as problem:
            raise ValueError(f"conformance_tests({name}=...): {problem}") from None
    return checked


def _graded(check: Any, config: Any) -> Any:
    """``run_check``'s result, or what it raised (carried out of a thread)."""
    from stella_conform.conformance.suite import run_check

    try:
        return run_check(check, config)
    except BaseException as exc:  # handed to the test's own thread
        return exc


def fuzz_targets(
    parser: Callable[..., Any],
    *,
    profiles: Sequence[str] = ("reader",),
    only: Sequence[str] = (),
    rejects: type[BaseException] | Sequence[type[BaseException]] | None = None,
) -> Callable[..., None]:
    """Hypothesis tests of an in-process parser, one per check, that HypoFuzz can fuzz.

    HypoFuzz collects only ``pytest.Function`` items that are ``@given`` tests taking
    no fixtures, and runs them with the default settings' database; the plugin's
    check items (custom items running a whole check) and :func:`conformance_tests`
    (which takes ``request``) are neither.  Each test here draws one generated case
    of its check and asserts the parser agrees with the reference decoder, so
    ``hypothesis fuzz -- -k stella_fuzz`` spends its time and its in-process coverage
    on the parser.  Under plain pytest they run like any property (``max_examples``).
    Assign the result to a ``test_*`` name in a test module.

    Each also grades its check's strata (``docs/generators.md``: the simplest case of each
    mutation and option, what every default ``run`` grades), once a process, before its
    first case, as ``run`` grades them: a parser failing one fails every example of that
    check with the report ``run`` would show (each flaw once, the smallest case shrunk),
    so a fuzz run reaches at least what ``run`` reaches.
    """
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from stella_conform.conformance.checks import Context, judge, select
    from stella_conform.conformance.clients.inprocess import (
        Parser,
        reject_kinds,
        run_inprocess,
        wants_report,
    )
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.conformance.suite import check_strategy, graded_case
    from stella_conform.options.suite import suite_config
    from stella_conform.schemas.vocabulary import Vocabulary

    vocab = Vocabulary.default()
    mode = "report" if wants_report(parser) else "exit"
    checks = [
        c
        for c in select(profiles, only)
        if c.kind.in_process and c.grades_in(mode) and check_strategy(c, vocab) is not None
    ]
    kinds = reject_kinds(rejects)
    reader = Parser(parser, kinds)

    # HypoFuzz refuses a test that suppresses nested_given: only the slow-data ones here
    slow = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]

    strata_failed: dict[str, str | None] = {}
    client = Client(argv=(), mode=mode, function=reader)  # type: ignore[arg-type]

    def failing_stratum(check: Any) -> str | None:
        """The report of ``check``'s strata, graded once a process as ``run`` grades them
        (each flaw listed once, the smallest shrunk: ``suite.grade_strata``); ``None`` when
        the parser passes them.  In a thread of its own: the shrink is a ``@given`` run,
        which Hypothesis refuses inside this test's own (its nested_given health check,
        that HypoFuzz will not have suppressed, is per thread)."""
        if check.id not in strata_failed:
            config = suite_config(client, database_dir=None, strata_only=True, fixtures_per_check=0)
            done: list[Any] = []
            worker = threading.Thread(
                target=lambda: done.append(_graded(check, config)), name="stella-strata"
            )
            worker.start()
            worker.join()
            if not done:
                raise RuntimeError(f"{check.id}: grading its strata failed (see stderr)")
            result = done[0]
            if isinstance(result, BaseException):
                raise result
            bad = result.outcome in ("fail", "crash", "error")
            strata_failed[check.id] = explain(result, config.seed, None) if bad else None
        return strata_failed[check.id]

    @pytest.mark.stella
    @pytest.mark.parametrize("stella_check", checks, ids=[c.id for c in checks])
    @settings(deadline=None, suppress_health_check=slow)
    @given(data=st.data())
    def test_stella_fuzz(stella_check: Any, data: Any) -> None:
        stratum = failing_stratum(stella_check)
        assert stratum is None, stratum
        strategy = check_strategy(stella_check, vocab)
        assert strategy is not None
        case = graded_case(data.draw(strategy, label="case"), vocab)
        obs = run_inprocess(reader, case.stream)
        verdict = judge(stella_check, case, obs, Context())
        assert verdict.verdict not in ("fail", "crash", "error"), (
            f"{stella_check.id}: {verdict.message}"
        )

    test: Callable[..., None] = test_stella_fuzz
    return test


# ---------------------------------------------------------------------- fixtures


@pytest.fixture
def stella_cases() -> Any:
    """The kit's ``cases`` strategy, for your own ``@given`` tests."""
    from stella_conform.generators import cases

    return cases


@pytest.fixture
def stella_vocabulary() -> Any:
    """The default vocabulary (known types, body schemas, aliases)."""
    from stella_conform.schemas.vocabulary import Vocabulary

    return Vocabulary.default()
