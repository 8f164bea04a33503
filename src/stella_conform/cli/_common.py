"""What every command shares: usage errors as exit 2, inputs, the client options."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import click

from stella_conform.errors import SetupError
from stella_conform.safe_files import STREAM_LINE_CAP, RefusedFile, bounded_lines, open_regular

F = TypeVar("F", bound=Callable[..., Any])


class Seconds(click.FloatRange):
    """A number of seconds of at least ``min``: finite (click's FloatRange takes ``nan``,
    under which a hanging client was waited for forever, and ``inf``)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def option_name(param: click.Parameter | None) -> str:
    """``--case-cache``, or an argument's ``CONFIG.toml``: how a message names ``param``."""
    if param is None:
        return "a path"
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def refuse_named_path(
    path: str | os.PathLike[str], want: str, what: str, hint: str | None = None
) -> None:
    """A path the user named for ``what`` (an option) that is not what it must be — a FIFO,
    a socket, a device, a file for a folder — is a usage error now, one line naming the
    option (and ``hint``, what to do instead), before anything runs (it was silently
    unused, or waited on): :func:`stella_conform.safe_files.named_path_problem`, which
    never opens it."""
    from stella_conform.safe_files import named_path_problem

    if os.fspath(path) == "-":
        return
    problem = named_path_problem(path, want)
    if problem is not None:
        if hint and not os.path.isdir(path):
            problem += f" ({hint})"
        raise SetupError(f"{what} {os.fspath(path)}: {problem}")


class KitPath(click.Path):
    """A path option or argument of the kit: ``want`` says what it must be ("folder",
    "file", "output", "folder or file"; see :data:`stella_conform.safe_files.WANTED`),
    checked as the command line is read (:func:`refuse_named_path`). Every path the kit's
    commands take is one, or a :class:`PathIn` (a value that may hold a path), so none can
    forget the check (``test_every_path_option_is_checked``)."""

    def __init__(self, want: str, *, hint: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)
        self.want, self.hint = want, hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        refuse_named_path(os.fsdecode(path), self.want, option_name(param), self.hint)
        return path


class PathIn(click.types.StringParamType):
    """An option whose value may be, or hold, a path among other things: ``--knows
    TYPE,...|FILE|NAME``, ``--parser FILE.py:FUNCTION``, ``--database DIR|URL``.
    ``path_of`` finds the path in a value (``None``: it names none), which is checked as a
    :class:`KitPath` is; the value itself is passed on as given. A FIFO given to
    ``--knows`` was read as an event type's name, and one behind ``--parser``'s file
    was "no such file" (review-6 R6-6)."""

    name = "text"

    def __init__(self, want: str, path_of: Callable[[str], str | None]) -> None:
        self.want, self.path_of = want, path_of

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        path = self.path_of(value)
        if path is not None:
            refuse_named_path(path, self.want, option_name(param))
        return value


def _unless_url(value: str) -> str | None:
    """A ``--database`` value's folder: any value but a URL (``redis://...``)."""
    return None if "://" in value else value


def _module_file(spec: str) -> str | None:
    """The file of ``FILE.py:NAME`` (``--parser``, ``--reject``); a module's name is none."""
    where = spec.rpartition(":")[0]
    return where if where.endswith(".py") else None


def _knows_file(value: str) -> str | None:
    """The file ``--knows`` names: a value without a comma that is a path (there is
    something there, or it reads as a path), not a type's or a vocabulary's name."""
    from stella_conform.conformance.claims import knows_file

    return knows_file(value)


#: ``--parser`` and ``--reject``: a module or a Python file, then a name in it.
MODULE_SPEC = PathIn("file", _module_file)


def fail_setup(message: str) -> NoReturn:
    # a message may quote a client's output or a file's name: never raw control bytes
    from stella_conform.safe_text import for_terminal

    click.echo(f"stella-conform: {for_terminal(message)}", err=True)
    sys.exit(2)


def wire_schema_option(func: F) -> F:
    return click.option(
        "--wire-schema",
        "--vocabulary",
        "wire_schema",
        type=KitPath("file", dir_okay=False),
        default=None,
        metavar="FILE|NAME",
        help="Grade against a stella release's agentevent.schema.json, or a bundled "
        "vocabulary by name (stella-default, stella-older; see stella-conform vocabulary).",
    )(func)


def load_vocabulary(wire_schema: Path | str | None) -> Any:
    from stella_conform.conformance.inputs import load_vocabulary as load

    return load(wire_schema)


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    """``-`` is stdin; anything else must be a readable file."""
    if path == "-":
        yield sys.stdin.buffer
        return
    p = Path(path)
    if not p.exists():
        raise SetupError(f"no such file: {path}")
    if p.is_dir():
        raise SetupError(f"is a directory, not a stream file: {path}")
    try:
        # a FIFO or a device is refused at once (use - to read a pipe on stdin)
        fh = open_regular(p)
    except RefusedFile as exc:
        raise SetupError(f"{exc} (use - to read a pipe on stdin)") from None
    except OSError as exc:
        raise SetupError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        yield fh


def stream_lines(fh: IO[bytes]) -> Iterator[bytes]:
    """A stream's lines, none longer than the cap: ``/dev/zero`` on stdin is refused, not
    read into memory whole, and a file that fails mid-read (``/proc/self/mem``: EIO) is
    bad input, not an internal error (:class:`SetupError`, exit 2)."""
    try:
        yield from bounded_lines(fh, STREAM_LINE_CAP)
    except RefusedFile as exc:
        raise SetupError(f"{exc}: the kit reads stream lines up to that size") from None
    except OSError as exc:  # the file failed mid-read (EIO): the file's failure, not the kit's
        raise SetupError(f"cannot read the stream: {exc.strerror or exc}") from None


#: Exit status of a bug in the kit itself: never 1, which every command uses for a verdict
#: (reject, a failed check, a regression), nor 2 (bad input to the kit).
INTERNAL_ERROR = 3


def _printable_streams() -> None:
    """Print what cannot be encoded (a lone surrogate from a stream) as its escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a detached or closed stream
                reconfigure(errors="backslashreplace")


def _unwritable_stream(exc: OSError) -> str | None:
    """The standard stream (``stdout``, ``stderr``) whose write raised ``exc``, if one did.

    The write that failed is in the innermost frame, with the stream it wrote to (click's
    ``echo``: ``file``); a stream's buffer is dropped on a failed write, so flushing it
    again cannot tell.  The failed one is pointed at ``/dev/null``, so that the
    interpreter's own flush at exit does not fail again."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    for value in tb.tb_frame.f_locals.values() if tb is not None else ():
        try:
            fd = value.fileno() if callable(getattr(value, "fileno", None)) else None
        except (OSError, ValueError):
            continue
        if fd in (1, 2):
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, fd)
                os.close(null)
            return "stdout" if fd == 1 else "stderr"
    return None


class KitGroup(click.Group):
    """Turns :class:`SetupError` into one line and exit 2, an internal error into exit 3
    (never 1, which reads as a verdict), and keeps broken pipes quiet; an output that
    cannot be written (a full disk) is one line and exit 2, not an internal error."""

    def invoke(self, ctx: click.Context) -> Any:
        from stella_conform import stopping

        _printable_streams()
        try:
            # every process the command starts is supervised, and gone when it ends
            with stopping.command():
                return super().invoke(ctx)
        except SetupError as exc:
            fail_setup(str(exc))
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(1)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except Exception as exc:
            if isinstance(exc, OSError) and (lost := _unwritable_stream(exc)) is not None:
                # `> log` on a full disk, /dev/full: the output's failure, not the kit's
                with contextlib.suppress(OSError, ValueError):
                    click.echo(f"stella-conform: cannot write to {lost}: {exc.strerror}", err=True)
                sys.exit(2)
            import traceback

            traceback.print_exc()
            click.echo(
                f"stella-conform: internal error (a bug in the kit, not a verdict): exit status "
                f"{INTERNAL_ERROR}; please report it with the traceback above",
                err=True,
            )
            sys.exit(INTERNAL_ERROR)


# ---------------------------------------------------------------------- grading

MODE_CHOICE = click.Choice(["exit", "report", "persistent"])
#: ``run`` and ``fuzz`` (and the pytest plugin) also take ``auto``, their default.
AUTO_MODE_CHOICE = click.Choice(["auto", "exit", "report", "persistent"])
AUTO_MODE_HELP = (
    "auto: the client's hello within a short wait decides (persistent or report per its "
    "modes; no hello: exit); exit: exit status only (any client); report/persistent: the "
    "adapter protocol (docs/adapter-protocol.md)."
)


def auto_mode_default(command: click.Command) -> None:
    """Give a grading command ``--mode auto``, as its default (conformance/clients/automode.py)."""
    for param in command.params:
        if param.name == "mode":
            param.type = AUTO_MODE_CHOICE
            param.default = "auto"
            param.help = AUTO_MODE_HELP


def client_options(func: F) -> F:
    func = click.option(
        "--mode",
        type=MODE_CHOICE,
        default="exit",
        show_default=True,
        help="exit: exit status only (any client); report/persistent: the "
        "adapter protocol (docs/adapter-protocol.md).",
    )(func)
    func = click.option(
        "--timeout",
        type=Seconds(min=0.1),
        default=10.0,
        show_default=True,
        help="Seconds a client may take for one case.",
    )(func)
    func = click.option(
        "--line-timeout",
        type=Seconds(min=0.05),
        default=5.0,
        show_default=True,
        help="Report mode: seconds to acknowledge one line (lockstep).",
    )(func)
    func = click.option(
        "--reject-exit-codes",
        metavar="CODES",
        callback=_remember,
        expose_value=False,
        help="Exit mode: the exit statuses that mean 'rejected', comma-separated [default: 1].",
    )(func)
    func = click.option(
        "--crash-detection/--no-crash-detection",
        default=True,
        callback=_remember,
        expose_value=False,
        help="Grade a runtime's crash report on stderr (uncaught exception, panic) as a "
        "crash, not a rejection [default: on].",
    )(func)
    return func


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Client settings every grading command shares, kept for :func:`make_client`."""
    ctx.meta[f"stella_conform.{param.name}"] = value
    return value


def parse_exit_codes(spec: str | None) -> frozenset[int]:
    """``"1,2"`` as exit statuses; :class:`SetupError` when malformed or when it claims 0."""
    if spec is None:
        return frozenset({1})
    try:
        codes = frozenset(int(part) for part in spec.split(","))
    except ValueError:
        raise SetupError(f"--reject-exit-codes must be numbers like 1,2 (got {spec!r})") from None
    if not codes or any(not 1 <= code <= 255 for code in codes):
        raise SetupError(f"--reject-exit-codes: each status must be 1..255 (got {spec!r})")
    return codes


def make_client(command: tuple[str, ...], mode: str, timeout: float, line_timeout: float) -> Any:
    from stella_conform.conformance.clients.runner import Client, resolve_client

    argv = resolve_client(command)
    meta = click.get_current_context().meta
    return Client(
        argv=argv,
        # auto: started as an adapter is until its hello decides (automode.settle_mode)
        mode="report" if mode == "auto" else mode,  # type: ignore[arg-type]
        timeout=timeout,
        line_timeout=line_timeout,
        reject_exit_codes=parse_exit_codes(meta.get("stella_conform.reject_exit_codes")),
        detect_crashes=meta.get("stella_conform.crash_detection", True),
    )


def color_option(func: F) -> F:
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        help="Colour the outcomes: auto = on a terminal unless NO_COLOR is set.",
    )(func)


def use_color(choice: str, stream: IO[str]) -> bool:
    """Whether to colour what goes to ``stream`` (https://no-color.org: any non-empty
    NO_COLOR turns ``auto`` off; an explicit ``--color always`` still wins)."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def parse_shard(spec: str) -> tuple[int, int]:
    """``I/N`` (1-based) as numbers; :class:`SetupError` when malformed."""
    try:
        index_text, total_text = spec.split("/")
        index, total = int(index_text), int(total_text)
    except ValueError:
        raise SetupError(f"--shard must be I/N, e.g. 1/3 (got {spec!r})") from None
    if total < 1 or not 1 <= index <= total:
        raise SetupError(f"--shard {spec}: I must be between 1 and N")
    return index, total


def shard_checks(checks: list[Any], spec: str) -> list[Any]:
    """Checks of shard I of N (1-based): every N-th, starting at the I-th, in catalogue order."""
    index, total = parse_shard(spec)
    return [c for position, c in enumerate(checks) if position % total == index - 1]


def _default_jobs() -> int:
    import os

    return max(1, min(4, os.cpu_count() or 1))


#: ``-j`` is at most this many workers per CPU: each worker runs a client, and more than a
#: few per core only make every timeout likelier (64 workers on two cores did).
JOBS_PER_CPU = 4


def cap_jobs(jobs: int, what: str = "-j") -> int:
    """``jobs``, or the cap of :data:`JOBS_PER_CPU` per CPU with a warning on stderr."""
    import os

    cpus = os.cpu_count() or 1
    cap = JOBS_PER_CPU * cpus
    if jobs <= cap:
        return jobs
    click.echo(
        f"stella-conform: warning: {what} {jobs} is more than {JOBS_PER_CPU} per CPU "
        f"({cpus} here); using {cap}",
        err=True,
    )
    return cap


# ---------------------------------------------------------------------- claims


def claim_options(func: F) -> F:
    """``--knows``, ``--reads``, ``--computes``, ``--summary-only``: what the client claims.

    They work in every mode (exit mode has no hello to carry them) and win over the
    hello's claims. Leaving one out grades everything, as before claims existed.
    """
    func = click.option(
        "--summary-only",
        is_flag=True,
        default=None,
        help="The client reports only a summary, no line observations; checks that need them skip.",
    )(func)
    func = click.option(
        "--computes",
        metavar="FIELD,...",
        default=None,
        help="Summary fields the client computes; a check of other fields skips.",
    )(func)
    func = click.option(
        "--reads",
        metavar="WHAT,...",
        default=None,
        help="Envelope parts the client reads: run, pipeline, query, events, files_touched.",
    )(func)
    func = click.option(
        "--knows",
        metavar="TYPE,...|FILE|NAME",
        type=PathIn("file", _knows_file),
        default=None,
        help="Event types the client recognizes (or a wire schema / bundled vocabulary "
        "whose types it knows); any other type is unrecognized for it.",
    )(func)
    return func


def told_on_the_command_line() -> Any:
    """Every value the running grading command was given, checked before any client
    starts (:func:`stella_conform.conformance.inputs.check_told`): ``run``, ``fuzz`` and
    ``replay`` name their options alike, and an option a command lacks is not given."""
    from stella_conform.conformance.inputs import check_told

    given = click.get_current_context().params

    def database() -> Any:
        return build_database(
            given["databases"], given["github_artifact"], no_database=given["no_database"]
        )

    return check_told(
        where="command line",
        vocabulary=given.get("wire_schema"),
        profiles=given.get("profiles", ()),
        only=given.get("only", ()),
        skip=given.get("skip", ()),
        known_failures=given.get("known_failures"),
        knows=given.get("knows"),
        reads=given.get("reads"),
        computes=given.get("computes"),
        summary_only=given.get("summary_only"),
        database=database if "databases" in given else None,
        reports=[given.get(k) for k in ("json_path", "junit_path", "markdown_path")],
    )


def report_options(func: F) -> F:
    """Where a grading command writes its verdicts: one set for ``run`` and ``fuzz``."""
    for option in reversed(
        (
            click.option(
                "--known-failures",
                type=KitPath("file"),
                default=None,
                help='TOML file: [known-failures] "CHECK-ID" = "reason".',
            ),
            click.option("--json", "json_path", type=KitPath("output"), default=None),
            click.option("--junit-xml", "junit_path", type=KitPath("output"), default=None),
            click.option(
                "--markdown",
                "markdown_path",
                type=KitPath("output"),
                default=None,
                help="Markdown summary (e.g. $GITHUB_STEP_SUMMARY).",
            ),
            click.option(
                "--failures-dir",
                type=KitPath("folder"),
                default=Path(".stella-conform/failures"),
                show_default=True,
            ),
        )
    ):
        func = option(func)
    return func


def artifact_option(func: F) -> F:
    """``--github-artifact``: read a CI artifact's example database beside the local one."""
    return click.option(
        "--github-artifact",
        "github_artifact",
        default=None,
        metavar="OWNER/REPO[/ARTIFACT]",
        envvar="STELLA_CONFORM_GITHUB_ARTIFACT",
        help="Also read (never write) the example database a CI job uploaded as this "
        "GitHub Actions artifact (default name stella-conform-db; needs GITHUB_TOKEN; "
        "env STELLA_CONFORM_GITHUB_ARTIFACT).",
    )(func)


#: The local example database of ``run`` and ``fuzz`` (the one they share).
DEFAULT_DATABASE = Path(".stella-conform/hypothesis")


def database_option(func: F) -> F:
    """``--database DIR|redis://HOST:PORT/N``: the local directory, a shared Redis, or both."""
    return click.option(
        "--database",
        "databases",
        multiple=True,
        # a folder that is a FIFO, a socket, a device or a file: Hypothesis saved nothing
        type=PathIn("folder", _unless_url),
        metavar="DIR|URL",
        envvar="STELLA_CONFORM_DATABASE",
        help="Hypothesis example database: a directory (default "
        f"{DEFAULT_DATABASE}), and/or a shared redis://HOST:PORT/N read and written beside "
        "it (needs stella-conform[redis]); repeatable (env STELLA_CONFORM_DATABASE).",
    )(func)


def build_database(
    databases: tuple[str, ...] | None, github_artifact: str | None, *, no_database: bool = False
) -> Any:
    """The example database of ``run`` and ``fuzz``: the directory, with a shared Redis and
    the artifact read beside it (``--no-database``: none of them)."""
    from stella_conform.conformance.store.database import (
        ArtifactSource,
        example_database,
        parse_sources,
    )

    if no_database:
        if databases:
            raise SetupError("--database and --no-database contradict each other")
        return None
    try:
        directory, shared = parse_sources(databases or ())
    except ValueError as exc:
        raise SetupError(f"--database: {exc}") from None
    artifact = None
    if github_artifact:
        try:
            artifact = ArtifactSource.parse(github_artifact)
        except ValueError as exc:
            raise SetupError(f"--github-artifact: {exc}") from None
    try:
        return example_database(directory or DEFAULT_DATABASE, artifact, shared)
    except ModuleNotFoundError as exc:
        raise SetupError(str(exc)) from None


def _named_recordings(
    ctx: click.Context, param: click.Parameter, paths: tuple[Path, ...]
) -> tuple[Path, ...]:
    """A named ``--seed-corpus`` path that is missing, or neither a folder nor a regular
    file, is a usage error here, before any client starts (review-3 H5: it was a warning
    read after the client had run, and a typo in a CI job fuzzed without the recordings it
    named). A file inside a named folder that cannot be read stays a warning."""
    for path in paths:
        try:
            os.stat(path)
        except OSError as exc:
            raise click.BadParameter(f"{path}: {exc.strerror or 'cannot be read'}") from None
    return paths


def seed_corpus_option(func: F) -> F:
    """``--seed-corpus PATH``: real recordings a generated stream case may start from."""
    return click.option(
        "--seed-corpus",
        "seed_corpus",
        multiple=True,
        type=KitPath("folder or file"),
        callback=_named_recordings,
        metavar="PATH",
        help="A folder (or file) of recorded streams (.jsonl) and json envelopes: "
        "generated stream cases may start from their runs (repeatable).",
    )(func)


#: Skipped recordings named one by one before the rest are counted.
SKIPPED_SHOWN = 20


def load_seed_corpus(paths: tuple[Path, ...], vocab: Any) -> tuple[Any, ...]:
    """The recordings under ``paths`` that fit, a warning for each file skipped."""
    if not paths:
        return ()
    from stella_conform.conformance.store.recordings import load
    from stella_conform.safe_text import for_terminal

    corpus = load(paths, vocab)
    for skipped in corpus.skipped[:SKIPPED_SHOWN]:
        click.echo(f"warning: seed corpus: skipped {for_terminal(str(skipped))}", err=True)
    if len(corpus.skipped) > SKIPPED_SHOWN:
        more = len(corpus.skipped) - SKIPPED_SHOWN
        click.echo(f"warning: seed corpus: skipped {more} more file(s)", err=True)
    click.echo(corpus.summary(), err=True)
    return tuple(corpus.recordings)


def write_not_graded(
    client: Any,
    vocab: Any,
    message: str,
    *,
    json_path: Path | None,
    junit_path: Path | None,
    markdown_path: Path | None,
    config: Any = None,
) -> None:
    """Every report asked for, for a client that could not be graded at all (its first
    contact failed): no check, the reason as the report's ``error``, exit status 2."""
    from stella_conform.conformance.report.render import Report, write_outputs
    from stella_conform.conformance.suite import SuiteConfig

    report = Report(config or SuiteConfig(client=client), [], vocab.ident, error=message)
    write_outputs(report, json_path=json_path, junit_path=junit_path, markdown_path=markdown_path)
