"""The client options every grading command shares, and the client they make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stella_conform.cli.options import model_option
from stella_conform.errors import SetupError
from stella_conform.options.model import BY_NAME

F = TypeVar("F", bound=Callable[..., Any])


def wire_schema_option(func: F) -> F:
    return model_option("wire_schema")(func)


def load_vocabulary(wire_schema: Path | str | None) -> Any:
    from stella_conform.conformance.inputs import load_vocabulary as load

    return load(wire_schema)


MODE_CHOICE = click.Choice(["exit", "report", "persistent"])
#: ``run`` and ``fuzz`` (and the pytest plugin) also take ``auto``, their default.
AUTO_MODE_CHOICE = click.Choice(list(BY_NAME["mode"].kind.choices))  # type: ignore[union-attr]
AUTO_MODE_HELP = BY_NAME["mode"].help
#: ``replay``'s ``--mode``: one case, no hello awaited.
EXIT_MODE_HELP = (
    "exit: exit status only (any client); report/persistent: the "
    "adapter protocol (docs/adapter-protocol.md)."
)


def auto_mode_default(command: click.Command) -> None:
    """Give a grading command ``--mode auto``, as its default (conformance/clients/automode.py)."""
    for param in command.params:
        if param.name == "mode":
            param.type = AUTO_MODE_CHOICE
            param.default = BY_NAME["mode"].default
            param.help = AUTO_MODE_HELP


def client_options(func: F) -> F:
    """``--mode`` (``exit`` by default; :func:`auto_mode_default` makes it ``auto``),
    ``--timeout``, ``--line-timeout``, ``--reject-exit-codes``, ``--crash-detection``."""
    func = model_option("mode", type=MODE_CHOICE, default="exit", help=EXIT_MODE_HELP)(func)
    for name in ("timeout", "line_timeout", "reject_exit_codes", "crash_detection"):
        func = model_option(name)(func)
    return func


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
