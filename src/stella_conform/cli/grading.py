"""What ``run`` and ``fuzz`` share beside the client: claims, reports, colour, shards and
workers, and every value checked before a client starts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from stella_conform.cli.databases import build_database
from stella_conform.cli.options import model_option, model_options
from stella_conform.errors import SetupError

F = TypeVar("F", bound=Callable[..., Any])


def color_option(func: F) -> F:
    return model_option("color")(func)


def use_color(choice: str, stream: IO[str]) -> bool:
    """Whether to colour what goes to ``stream`` (https://no-color.org: any non-empty
    NO_COLOR turns ``auto`` off; an explicit ``--color always`` still wins)."""

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


#: ``-j`` is at most this many workers per CPU: each worker runs a client, and more than a
#: few per core only make every timeout likelier.
JOBS_PER_CPU = 4


def cap_jobs(jobs: int, what: str = "-j") -> int:
    """``jobs``, or the cap of :data:`JOBS_PER_CPU` per CPU with a warning on stderr."""

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
    hello's claims. Leaving one out grades everything.
    """
    return model_options("knows", "reads", "computes", "summary_only")(func)


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
    return model_options("known_failures", "json", "junit_xml", "markdown", "failures_dir")(func)


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
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.report.outputs import write_outputs
    from stella_conform.options.suite import suite_config

    report = Report(config or suite_config(client), [], vocab.ident, error=message)
    write_outputs(report, json_path=json_path, junit_path=junit_path, markdown_path=markdown_path)
