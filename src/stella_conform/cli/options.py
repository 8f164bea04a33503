"""Click options made from the options model (:mod:`stella_conform.options.model`).

The model gives an option's flags, default, help and kind; this module adds what is the
command line's own (a metavar, an environment variable, a path's click type, a callback)
and makes each number's range the model's, so that ``--examples 1e20`` is refused with the
words ``stella_examples = 1e20`` and a matrix's ``examples = 1e20`` are refused with.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.cli.params import KitPath, PathIn, Seconds, _knows_file, _unless_url
from stella_conform.options.kinds import Choice, Count, Problem, too_large
from stella_conform.options.kinds import Seconds as SecondsKind
from stella_conform.options.model import BY_NAME, Cli

F = TypeVar("F", bound=Callable[..., Any])


class CountRange(click.IntRange):
    """A whole number in the model's range: click's messages below it and for a text that
    is no number, the model's above it (``1e20`` included)."""

    def __init__(self, kind: Count) -> None:
        super().__init__(min=kind.least, max=None)
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                self.kind.parse(value)
            except Problem as problem:
                if problem.reason == "above":
                    self.fail(str(problem), param, ctx)
        number = super().convert(value, param, ctx)
        if self.kind.most is not None and number > self.kind.most:
            self.fail(str(too_large(value, self.kind.most)), param, ctx)
        return number


class SecondsRange(Seconds):
    """A finite number of seconds in the model's range."""

    def __init__(self, kind: SecondsKind) -> None:
        super().__init__(min=kind.least)
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if seconds > self.kind.most:
            self.fail(str(too_large(value, self.kind.most)), param, ctx)
        return seconds


def _named_recordings(
    ctx: click.Context, param: click.Parameter, paths: tuple[Path, ...]
) -> tuple[Path, ...]:
    """A named ``--seed-corpus`` path that is missing, or neither a folder nor a regular
    file, is a usage error here, before any client starts: a typo in a CI job must not
    fuzz without the recordings it names. A file inside a named folder that cannot be read
    stays a warning."""
    for path in paths:
        try:
            os.stat(path)
        except OSError as exc:
            raise click.BadParameter(f"{path}: {exc.strerror or 'cannot be read'}") from None
    return paths


def remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Client settings every grading command shares, kept for ``make_client``."""
    ctx.meta[f"stella_conform.{param.name}"] = value
    return value


def _default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


#: What the command line adds to the model, by option: click's own settings.
CLICK: dict[str, dict[str, Any]] = {
    "mode": {"show_default": True},
    "timeout": {"show_default": True},
    "line_timeout": {"show_default": True},
    "reject_exit_codes": {"metavar": "CODES", "callback": remember, "expose_value": False},
    "crash_detection": {"callback": remember, "expose_value": False},
    "profiles": {"multiple": True, "default": ()},
    "knows": {"metavar": "TYPE,...|FILE|NAME", "type": PathIn("file", _knows_file)},
    "reads": {"metavar": "WHAT,...", "type": None},
    "computes": {"metavar": "FIELD,...", "type": None},
    "summary_only": {"is_flag": True},
    "examples": {"show_default": True},
    "seed": {"show_default": True, "help": None},
    "jobs": {"default": _default_jobs, "show_default": "CPUs, at most 4"},
    "only": {"multiple": True, "metavar": "GLOB", "type": None},
    "skip": {"multiple": True, "metavar": "GLOB", "type": None},
    "known_failures": {"type": KitPath("file")},
    "json": {"type": KitPath("output"), "help": None},
    "junit_xml": {"type": KitPath("output"), "help": None},
    "markdown": {"type": KitPath("output")},
    "failures_dir": {"type": KitPath("folder"), "show_default": True, "help": None},
    "no_database": {"is_flag": True},
    "database": {
        "multiple": True,
        # a folder that is a FIFO, a socket, a device or a file: Hypothesis saved nothing
        "type": PathIn("folder", _unless_url),
        "metavar": "DIR|URL",
        "envvar": "STELLA_CONFORM_DATABASE",
    },
    "github_artifact": {
        "metavar": "OWNER/REPO[/ARTIFACT]",
        "envvar": "STELLA_CONFORM_GITHUB_ARTIFACT",
    },
    "seed_corpus": {
        "multiple": True,
        "type": KitPath("folder or file"),
        "callback": _named_recordings,
        "metavar": "PATH",
    },
    "case_cache": {"type": KitPath("folder", file_okay=False), "show_default": True},
    "no_case_cache": {"is_flag": True},
    "max_shrinks": {"show_default": True},
    "shard": {"metavar": "I/N", "type": None},
    "time_budget": {"metavar": "SECONDS"},
    "color": {"show_default": True},
    "verbose": {"is_flag": True, "help": None},
    "wire_schema": {"type": KitPath("file", dir_okay=False), "metavar": "FILE|NAME"},
    "duration": {"metavar": "DURATION", "type": None},
    "stop_on_first": {"is_flag": True},
    "max_failures": {"show_default": False},
    "max_cases": {"show_default": False},
    "no_feedback": {"is_flag": True},
}


def _click_type(name: str) -> Any:
    kind = BY_NAME[name].kind
    if isinstance(kind, Count):
        return int if kind.least is None and kind.most is None else CountRange(kind)
    if isinstance(kind, SecondsKind):
        return SecondsRange(kind)
    if isinstance(kind, Choice):
        return click.Choice(list(kind.choices))
    return None


class ModelOption(click.Option):
    """A click option made from the options model: ``model`` is the option's name there."""

    def __init__(self, *args: Any, model: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model = model


def model_option(name: str, **overrides: Any) -> Callable[[F], F]:
    """The click option of the model's ``name``: its flags, kind, default and help, the
    command line's own settings (:data:`CLICK`), then ``overrides`` (a command whose help
    or default is its own)."""
    option = BY_NAME[name]
    if not isinstance(option.cli, Cli):
        raise LookupError(f"{name}: not a command-line option ({option.cli.reason})")
    settings: dict[str, Any] = {
        "type": _click_type(name),
        "default": option.default,
        "help": option.help,
    }
    settings.update(CLICK.get(name, {}))
    settings.update(overrides)
    if settings.get("is_flag"):
        settings.pop("type", None)
    elif settings["type"] is None:
        del settings["type"]
    return click.option(*option.cli.flags, cls=ModelOption, model=name, **settings)


def model_options(*names: str) -> Callable[[F], F]:
    """Several model options, shown in ``--help`` in the order named."""

    def apply(func: F) -> F:
        for name in reversed(names):
            func = model_option(name)(func)
        return func

    return apply


def _flags(flags: tuple[str, ...]) -> set[str]:
    """Every flag of a model option: ``--crash-detection/--no-crash-detection`` is two."""
    return {f for spec in flags for f in spec.split("/") if f.startswith("-")}


def pyproject_defaults(command: click.Command) -> dict[str, Any]:
    """The defaults the nearest ``pyproject.toml``'s ``[tool.stella-conform]`` gives
    ``command``'s options, by their click names (:mod:`stella_conform.options.pyproject`).
    A value a command's choice does not take (``replay`` has no ``--mode auto``) is left."""
    from stella_conform.options.pyproject import read

    _, values = read()
    defaults: dict[str, Any] = {}
    for param in command.params:
        opts = set(param.opts) | set(param.secondary_opts)
        for name, value in values.items():
            cli = BY_NAME[name].cli
            if not (isinstance(cli, Cli) and opts & _flags(cli.flags)):
                continue
            if isinstance(param.type, click.Choice) and value not in param.type.choices:
                continue
            defaults[str(param.name)] = list(value) if isinstance(value, tuple) else value
    return defaults


class ConfiguredCommand(click.Command):
    """A grading command whose option defaults a client's ``pyproject.toml`` may set; the
    command line wins over it (click's ``default_map``)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        if "default_map" not in extra:
            given = args[: args.index("--")] if "--" in args else args
            try:
                extra["default_map"] = pyproject_defaults(self)
            except Exception:
                if not {"-h", "--help"} & set(given):
                    raise  # a bad table is a usage error; --help still shows the options
        return super().make_context(info_name, args, parent, **extra)
