"""The trace journal: ``trace check``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from stella_conform.cli.echo import say
from stella_conform.cli.params import KitPath
from stella_conform.errors import SETUP_ERROR, SetupError
from stella_conform.safe_files import STREAM_LINE_CAP, RefusedFile, bounded_lines, open_regular
from stella_conform.safe_text import clip, json_text


@click.group()
def trace() -> None:
    """The trace journal (contextgraph-trace): check a journal's invariants."""


@trace.command("check")
@click.argument("journal", type=KitPath("file", dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def trace_check(journal: Path, as_json: bool) -> None:
    """Run every trace check over JOURNAL (a file, or - for stdin).

    Exit 0 when every check passes (or has nothing to see), 1 when a check fails,
    2 when the journal cannot be read (a corrupt line that is not the last, a
    recognized event whose body does not fit), is empty, is not a journal at all
    (no entry has a "seq" or an "event") or does not exist.
    """
    from stella_conform.conformance.checks.trace import (
        NAME_CHARS,
        JournalFacts,
        grade_journal_lines,
    )
    from stella_conform.conformance.checks.trace_keys import KeysUnavailable

    facts = JournalFacts()
    try:
        with _journal_file(journal) as fh:
            # one line at a time, so memory stays flat however big the journal (held whole,
            # a journal's lines cost many times its size); what the checks remember of a
            # long journal moves to a temporary folder
            lines = (line.removesuffix(b"\n") for line in bounded_lines(fh, STREAM_LINE_CAP))
            report = grade_journal_lines(lines, facts)
    except RefusedFile as exc:
        raise SetupError(
            f"cannot read journal: {exc} (the kit reads lines up to that size)"
        ) from None
    except KeysUnavailable as exc:
        raise SetupError(
            f"cannot check {journal}: a long journal's ids are kept in a temporary folder "
            f"in {exc.where}, which failed: {exc.cause} (free space there, or set TMPDIR "
            "to another folder)"
        ) from None
    except OSError as exc:
        raise SetupError(f"cannot read journal {journal}: {exc.strerror or exc}") from None
    problem = not_a_journal(report.readable, facts)
    if problem is not None:
        raise SetupError(f"{journal}: {problem}")
    if as_json:
        document = json.dumps(report.to_json(str(journal)), indent=2, ensure_ascii=False)
        click.echo(json_text(document))
        sys.exit(report.exit_code)
    reading = report.reading
    if not report.readable:
        say(
            f"stella-conform: {journal}: unreadable at line {reading['rejected_line']}: "
            f"{reading['reason']}",
            err=True,
        )
        sys.exit(SETUP_ERROR)
    unknown = reading["unrecognized_events"]
    names = [clip(name, NAME_CHARS) for name in reading["unrecognized_types"]]
    not_listed = reading.get("cut", {}).get("unrecognized_types", 0)
    if not_listed:
        names.append(f"… and {not_listed} more line(s) of names not listed")
    kinds = f" ({', '.join(names)})" if names else ""
    torn = ", a torn final line dropped" if reading["torn_final_line"] else ""
    say(
        f"{journal}: {reading['known_events']} recognized event(s), {unknown} unrecognized"
        f"{kinds}{torn}"
    )
    width = max(len(r.id) for r in report.results)
    for result in report.results:
        first = result.evidence[0] if result.evidence else None
        where = f"seq {first.seq}: " if first and first.seq is not None else ""
        detail = f"{where}{first.message}" if first else result.name
        say(f"{result.outcome.upper():<5} {result.id:<{width}}  {detail}")
        for more in result.evidence[1:4]:
            at = f"seq {more.seq}: " if more.seq is not None else ""
            say(f"{'':<5} {'':<{width}}  {at}{more.message}")
        if len(result.evidence) > 4:
            say(f"{'':<5} {'':<{width}}  ... {len(result.evidence) - 4} more")
    said = [
        f"{key.replace('_', ' ')}: "
        + (", ".join(map(str, value)) if isinstance(value, list) else str(value))
        for r in report.results
        for key, value in r.facts.items()
        if key != "crashed" and value
    ]
    for fact in said:
        say(f"fact: {fact}")
    failed = sum(1 for r in report.results if r.outcome == "fail")
    say(f"\n{failed} check(s) failed" if failed else "\nevery check passes")
    sys.exit(report.exit_code)


@contextlib.contextmanager
def _journal_file(journal: Path) -> Iterator[IO[bytes]]:
    """The journal to read: stdin for ``-``, else a regular file (no FIFO, no device)."""
    if str(journal) == "-":
        yield sys.stdin.buffer
        return
    try:
        fh = open_regular(journal)
    except FileNotFoundError:
        raise SetupError(f"journal not found: {journal}") from None
    with fh:
        yield fh


def not_a_journal(readable: bool, facts: Any) -> str | None:
    """Why what was read cannot be a trace journal at all, or None.

    Every check would otherwise "pass" an empty file (nothing to see) and puzzle over a
    stella event stream (every line an unrecognized entry without a seq).
    """
    if facts.blank:
        return "the journal is empty"
    if not readable:
        return None  # unreadable: reported with the line that breaks it
    if not facts.entries:
        return "no journal entry: not one line is a complete JSON object"
    if facts.numbered:
        return None
    if facts.typed:
        return (
            'not a trace journal: its lines carry "type", not "seq" and "event"; it looks '
            "like a stella event stream (read those with: stella-conform decode FILE)"
        )
    return 'not a trace journal: no line has a "seq" or an "event"'
