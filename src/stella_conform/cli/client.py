"""The client options every grading command shares, and the client they make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.cli.params import KitPath, Seconds
from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


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
