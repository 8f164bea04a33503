"""The command line that replays one saved case (paths that travel: :mod:`.travel`)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from stella_conform.conformance.checks import Check
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.travel import kit_command, portable_path, program_inside


def replay_command(
    path: str, client: Client, check: Check | None = None, config: SuiteConfig | None = None
) -> str | None:
    """The command that re-runs one saved case; ``None`` when it cannot be written.

    An in-process parser is named by module and function (``--parser``), with the
    exception types that mean reject; one that cannot be imported again (a lambda,
    a function defined inside a test) has no replay command.  The environment the kit
    gave the client (fuzz's ``PYTHONHASHSEED``) goes in front, as assignments.
    """
    # a line that works where it is pasted (conformance/suite/travel.py): fixture:NAME, paths
    # relative to the working folder, the kit as it can be started here
    parts = [*kit_command(), "replay", portable_path(path)]
    if check is not None and check.profile != "reader":
        parts += ["--check", check.id]
    if config is not None:  # the same oracle: the same vocabulary, the same claims
        if config.wire_schema is not None:
            schema = config.wire_schema
            parts += ["--wire-schema", portable_path(schema) if os.sep in schema else schema]
        parts += config.claims.as_options()
    if client.function is None:
        argv = list(client.argv)
        if client.cwd is not None:  # the command's relative paths are relative to it
            parts += ["--cwd", portable_path(client.cwd)]
            argv[0] = program_inside(argv[0], client.cwd)
        parts += ["--mode", client.mode]
        if client.reject_exit_codes != frozenset({1}):
            parts += ["--reject-exit-codes", ",".join(map(str, sorted(client.reject_exit_codes)))]
        if not client.detect_crashes:
            parts.append("--no-crash-detection")
        return _assignments(client.env) + shlex.join([*parts, "--", *argv])
    from stella_conform.conformance.clients.inprocess import replay_args

    found = replay_args(client.function)
    if found is None:
        return None
    args, pythonpath = found
    env = {**client.env, **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    return _assignments(env) + shlex.join([*parts, *args])


def _assignments(env: Mapping[str, str]) -> str:
    """``NAME=value `` for each variable, quoted for a POSIX shell, to go before a command."""
    return "".join(f"{name}={shlex.quote(value)} " for name, value in sorted(env.items()))
