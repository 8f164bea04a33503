"""Replaying one saved case: the command line that does it (paths that travel:
:mod:`.travel`), and what a replay that names no check judges.

A stream case replayed without ``--check`` is judged on everything its expectation holds
(:func:`judge_whole`): the verdict and the line it rejects at, each line the client
reports, and each summary field the expectation file names (every one the reference
decoder reads, for a stream without one) that the client computes.  A case passes when one
conforming reading agrees with the client on all of it, as ``run`` passes a check.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks import (
    JUDGES,
    Check,
    Context,
    GradedCase,
    Judgment,
    expand_digests,
    unanswered,
)
from stella_conform.conformance.clients.runner import Client, Observation
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.travel import kit_command, portable_path, program_inside
from stella_conform.schemas.vocabulary import Vocabulary


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
    # a case is judged by its check where the check decides more than the case's reading:
    # another profile's judge, or a claim the client cannot meet (the reason it fails)
    assumed = config is not None and bool(config.claims.assumed)
    if check is not None and (check.profile != "reader" or assumed):
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


#: The judges a replay without a check asks, in order, beside the verdict's: where a
#: rejection is, how each line was read, the summary's fields (each says ``n/a`` where it
#: has nothing to say: a wrong verdict, a client that reports no lines).
_WHOLE = ("verdict", "rejected-line", "dispatch", "reading")


def held_fields(
    case_file: Path, stream: bytes, stella: Vocabulary | None = None
) -> tuple[tuple[str, ...], list[str]]:
    """The summary fields a stream case's expectation holds, and where that expectation
    disagrees with the reference decoder's reading of ``stream`` under the vocabulary of
    the stella (``stella``, not narrowed by claims: expectations are the stella's), in words.

    The expectation is the ``NAME.expect.json`` beside the case (``stella-conform corpus
    expect`` writes one; a hand-written one may say something else); without one, it holds
    everything the reference decoder reads. The values judged are always the decoder's,
    under every conforming reading."""
    from stella_conform.conformance.report.excerpt import summary_fields
    from stella_conform.errors import SetupError, read_json_file
    from stella_conform.oracle.corpus import (
        COMPARED,
        EXPECT_FORMAT,
        EXPECT_SUFFIX,
        compare,
        validate_expectation,
    )
    from stella_conform.oracle.decoder import summarize

    comparable = [k for k in COMPARED if k in summary_fields() and k != "verdict"]
    name = case_file.name.removesuffix(".jsonl")
    expect_path = case_file.with_name(name + EXPECT_SUFFIX)
    if not expect_path.is_file():
        return tuple(comparable), []
    doc = read_json_file(expect_path, "expectation file")
    if isinstance(doc, dict) and doc.get("format") != EXPECT_FORMAT:  # a journal's, say
        raise SetupError(
            f"{case_file.name} is no stream case (its expectation is "
            f"{str(doc.get('format'))!r}): say which check judges it with --check ID"
        )
    validate_expectation(doc, str(expect_path))
    return tuple(k for k in comparable if k in doc), compare(doc, summarize(stream, stella))


def replayed_fields(
    held: Sequence[str], summary: Mapping[str, Any] | None, computes: frozenset[str] | None
) -> tuple[str, ...]:
    """The held fields a replay compares: those the client claims to compute (every one
    its summary has, without the claim); none when it reports no summary (exit mode)."""
    if summary is None:
        return ()
    if computes is not None:
        return tuple(f for f in held if f in computes)
    return tuple(f for f in held if f in summary)


def judge_whole(case: GradedCase, obs: Observation, fields: Sequence[str]) -> Judgment:
    """The client's verdict, the line it rejects at, each line it reports and its summary's
    ``fields`` against the case's reading, under every conforming reading: a pass when one
    reading agrees on all of it, else the failure under the reading whose verdict the
    client matched (the default's when none). The judgment's ``reading`` names the reading
    it is about."""
    if not obs.ok:
        return unanswered(obs)
    if obs.summary is not None:
        obs.summary = expand_digests(obs.summary, case.input_kind.summaries(case))
    ctx = Context(fields=tuple(fields))
    views = [case, *(case.under(a) for a in case.alternatives)]
    judged = [(view, _whole(view, obs, ctx)) for view in views]
    for view, j in judged:
        j.reading = view.reading_id
    passed = [j for _, j in judged if j.verdict == "pass"]
    if passed:
        return passed[0]
    matched = [j for view, j in judged if obs.verdict == view.expected_verdict]
    return (matched or [judged[0][1]])[0]


def _whole(view: GradedCase, obs: Observation, ctx: Context) -> Judgment:
    reports = obs.summary is not None or bool(obs.lines)
    for name in _WHOLE:
        if name == "rejected-line" and not reports:
            continue  # an exit status names no line
        j = JUDGES[name](view, obs, ctx)
        if j.verdict == "fail":
            return j
    return Judgment("pass")
