"""Reading a stream as the oracle does: ``decode`` and ``validate``."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import click

from stella_conform.cli.client import load_vocabulary, wire_schema_option
from stella_conform.cli.echo import say
from stella_conform.cli.input_files import open_input, stream_lines
from stella_conform.cli.params import KitPath
from stella_conform.errors import FAILED, PASSED, SetupError
from stella_conform.safe_text import json_text

#: The stream ``decode`` and ``validate`` read: a regular file, or ``-`` (stdin).
STREAM_FILE = KitPath("file", allow_dash=True, path_type=str, hint="use - to read a pipe on stdin")


@click.command()
@click.argument("stream", metavar="FILE|-", type=STREAM_FILE)
@click.option(
    "--json", "as_json", is_flag=True, help="Machine-readable output (one JSON document)."
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the verdict.")
@wire_schema_option
def decode(stream: str, as_json: bool, quiet: bool, wire_schema: Path | None) -> None:
    """Show what a correct client does with a stream, line by line.

    The default reading line by line; then every other conforming reading of the stream
    (docs/contract-readings.md), with its verdict and what it reads differently.
    Exit 0 when a correct client must accept the stream (by the default reading), 1 when
    it must reject it.
    """
    from stella_conform.oracle.decoder import Kind, RunFold
    from stella_conform.oracle.decoder import decode as run_decoder
    from stella_conform.oracle.readings import summary_readings

    vocab = load_vocabulary(wire_schema)
    touched: set[str] = set()
    fold = RunFold(vocab.turn_boundaries, bounded=True, touched=touched)  # flat memory
    out = _JsonLines(vocab.ident) if as_json else None
    with contextlib.ExitStack() as stack:
        copy = None
        if stream == "-":  # read again for the other readings: a private copy as it goes
            copy = stack.enter_context(_stdin_copy())
        with open_input(stream) as fh:
            lines = _copied(stream_lines(fh), copy)
            for outcome in run_decoder(lines, vocab, touched=touched):
                fold.feed(outcome)
                if out is not None:
                    out.line(outcome.to_json())
                elif not quiet and outcome.kind is not Kind.BLANK:
                    say(_describe(outcome))
            if copy is not None:
                for _ in lines:  # the rest, which a rejection left unread: another reading
                    pass  # may read past it
        summary = fold.finish()
        source = stream
        if copy is not None:
            copy.close()
            source = str(copy.path)
        others = summary_readings(lambda: _reread(source), vocab, touched)
    if out is not None:
        out.finish(summary.to_json(), others)
    else:
        _print_summary(summary, quiet)
        if not quiet:
            for other in others:
                say(_describe_reading(other, summary))
    sys.exit(PASSED if summary.verdict == "accept" else FAILED)


class _StdinCopy:
    """``decode -``'s private copy of its stdin, written as it is read, for the other
    readings to read again.  A folder that cannot take it (a full or read-only
    ``TMPDIR``) is a :class:`SetupError` naming the folder and the cause, not a bug."""

    def __init__(self, path: Path, fh: IO[bytes]) -> None:
        self.path = path
        self.fh = fh

    def write(self, line: bytes) -> None:
        try:
            self.fh.write(line)
        except OSError as exc:
            raise self._failed(exc) from None

    def close(self) -> None:
        try:
            self.fh.close()
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> SetupError:
        with contextlib.suppress(OSError):
            self.fh.close()  # closed even when its last flush fails
        return _copy_failed(exc)


@contextlib.contextmanager
def _stdin_copy() -> Iterator[_StdinCopy]:
    """A :class:`_StdinCopy` in a private folder, removed when the block ends."""
    from stella_conform import stopping

    try:
        folder = stopping.temp_dir("stella-conform-decode-")
    except OSError as exc:
        raise _copy_failed(exc) from None
    try:
        path = Path(folder) / "stream.jsonl"
        try:
            fh = open(path, "wb")  # noqa: SIM115 (closed below, or by the copy's close)
        except OSError as exc:
            raise _copy_failed(exc) from None
        try:
            yield _StdinCopy(path, fh)
        finally:
            with contextlib.suppress(OSError):
                fh.close()
    finally:
        stopping.remove_dir(folder)


def _copy_failed(exc: OSError) -> SetupError:
    return SetupError(
        f"decode - keeps a copy of its stdin in a temporary folder in {tempfile.gettempdir()} "
        f"(the other readings read it again), which failed: {exc.strerror or exc} (free "
        "space there, or set TMPDIR to another folder)"
    )


def _copied(lines: Iterator[bytes], copy: _StdinCopy | None) -> Iterator[bytes]:
    for line in lines:
        if copy is not None:
            copy.write(line)
        yield line


def _reread(path: str) -> Iterator[bytes]:
    with open_input(path) as fh:
        yield from stream_lines(fh)


def _describe_reading(other: Any, default: Any) -> str:
    """One other conforming reading, in a line: its verdict and what else it changes."""
    s = other.summary
    verdict = f"reject at line {s.rejected_line}" if s.verdict == "reject" else "accept"
    mine, theirs = s.to_json(), default.to_json()
    changed = [
        f"{key} {json.dumps(mine[key], ensure_ascii=False)}"
        for key in ("unrecognized_events", "final_text", "terminator", "turns_completed")
        if mine[key] != theirs[key]
    ]
    more = f" ({'; '.join(changed)})" if changed and s.verdict == "accept" else ""
    return f"also conforming, reading {other.reading}: {verdict}{more}"


class _JsonLines:
    """``decode --json`` written as it goes: the same document ``json.dumps(indent=2)``
    gives, without holding every line's outcome (a 1 GiB stream stays flat in memory)."""

    def __init__(self, vocabulary: str) -> None:
        self.first = True
        head = json.dumps({"vocabulary": vocabulary}, indent=2, ensure_ascii=False)
        self.write(head[: head.rindex("\n")] + ',\n  "lines": [')

    @staticmethod
    def write(text: str) -> None:
        click.echo(json_text(text), nl=False)

    def line(self, outcome: dict[str, Any]) -> None:
        body = json.dumps(outcome, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        self.write(("\n    " if self.first else ",\n    ") + body)
        self.first = False

    def finish(self, summary: dict[str, Any], others: Sequence[Any] = ()) -> None:
        body = json.dumps(summary, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        readings = [
            {"reading": o.reading, "points": sorted(o.taken), "summary": o.summary.to_json()}
            for o in others
        ]
        rest = json.dumps(readings, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        self.write(
            ("]" if self.first else "\n  ]")
            + f',\n  "summary": {body},\n  "also_conforming": {rest}\n}}\n'
        )


_ACTIONS = {
    "known": "handle",
    "unknown": "skip (unrecognized, inert)",
    "torn": "drop (torn final line)",
    "reject": "REJECT",
}


def _describe(outcome: Any) -> str:
    action = _ACTIONS[outcome.kind.value]
    tag = f" {outcome.tag}" if outcome.tag is not None else ""
    reason = f" — {outcome.reason}" if outcome.reason and outcome.kind.value != "known" else ""
    return f"line {outcome.line}: {action}{tag}{reason}"


def _print_summary(summary: Any, quiet: bool) -> None:
    if summary.verdict == "reject":
        say(f"verdict: reject at line {summary.rejected_line}: {summary.reason}")
        if quiet:
            return
    else:
        say("verdict: accept")
        if quiet:
            return
    for what, count in summary.cut.items():
        unit = "character(s)" if what == "preview" else "item(s)"
        say(f"cut: {count} {unit} of {what} not kept (decode keeps a bounded summary)")
    types = ", ".join(summary.unrecognized_types) or "none"
    say(f"unrecognized: {summary.unrecognized_events} event(s); types: {types}")
    say(f"terminator: {summary.terminator or 'none'}; turns completed: {summary.turns_completed}")
    stages = "; ".join(f"{k}: {' > '.join(v) or '-'}" for k, v in summary.stages.items())
    say(f"stages: {stages}")
    if summary.tool_calls:
        calls = ", ".join(f"{c.call_id}={c.status}" for c in summary.tool_calls)
        say(f"tool calls: {calls}")
    final = summary.final_text
    if final is not None and len(final) > 200:
        final = final[:197] + "..."
    say(f"final text: {json.dumps(final, ensure_ascii=False)}")
    if summary.elapsed_ms is not None:
        say(f"elapsed: {summary.elapsed_ms} ms")


@click.command()
@click.argument("stream", metavar="FILE|-", type=STREAM_FILE)
@wire_schema_option
def validate(stream: str, wire_schema: Path | None) -> None:
    """Validate each line of a stream against the vocabulary's schemas.

    Stricter than decode: it reports every problem, not just the first, and
    flags lines no reader can use. Unrecognized types are reported, not errors.
    A problem of the default reading that another conforming reading reads names
    it (docs/contract-readings.md).
    """
    from stella_conform.oracle.decoder import Kind, classify, iter_physical_lines, parse_line
    from stella_conform.oracle.readings import line_readings, text_readings

    vocab = load_vocabulary(wire_schema)
    problems = 0
    fitting = 0  # problems of the default reading that another reading reads
    lines = 0
    with open_input(stream) as fh:
        for number, (content, _terminated) in enumerate(iter_physical_lines(stream_lines(fh)), 1):
            lines = number
            if not content.strip(b" \t\r\n"):
                continue
            value, error = parse_line(content)
            if error is not None:
                problems += 1
                text = text_readings(number, content, vocab)
                fitting += bool(text.fits)
                say(f"line {number}: {error}{_text_also(text)}")
                continue
            outcome = classify(number, value, vocab)
            if outcome.kind is Kind.REJECT:
                problems += 1
                fits = line_readings(number, value, vocab)
                fitting += bool(fits)
                also = f" (it fits under reading {' or '.join(fits)})" if fits else ""
                say(f"line {number}: {outcome.reason}{also}")
            elif outcome.kind is Kind.UNKNOWN:
                what = outcome.tag if outcome.tag is not None else outcome.reason
                say(f"line {number}: unrecognized ({what})")
    also = (
        f"; {fitting} of them fit(s) under another reading (docs/contract-readings.md)"
        if fitting
        else ""
    )
    say(f"{lines} line(s), {problems} problem(s) against {vocab.ident}{also}")
    sys.exit(FAILED if problems else PASSED)


def _text_also(text: Any) -> str:
    """What ``validate`` adds to a line that is not JSON by the default reading: the
    readings under which it parses (:func:`stella_conform.oracle.readings.text_readings`), and
    whether it fits there."""
    if not text.parses:
        return ""
    parses = " or ".join(text.parses)
    if text.blank and set(text.fits) == set(text.parses):
        return f" (it is blank under reading {parses})"
    if set(text.fits) == set(text.parses):
        return f" (it parses under reading {parses})"
    if text.fits:
        return (
            f" (it parses under reading {parses}, and fits under reading {' or '.join(text.fits)})"
        )
    return f" (it parses under reading {parses}, where it is rejected: {text.reason})"
