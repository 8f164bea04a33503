"""The report for people at a terminal: a line per check, the smallest failing case in full.

Client text is escaped before colour is added (:func:`~stella_conform.safe_text.for_terminal`),
so the only escape sequences in the output are the kit's own outcome colours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stella_conform.conformance.report.events import Echo, Event, RunFinished, RunStopped
from stella_conform.conformance.report.failures import (
    failure_lines,
    more_failures,
    protocol_cause,
    readings_text,
    terminal_line,
)
from stella_conform.conformance.report.model import FAILING
from stella_conform.safe_text import for_terminal

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report

#: ANSI colours of the outcome words; an error is not a failure, so not the same red.
OUTCOME_COLOURS = {
    "PASS": "32",  # green
    "FAIL": "1;31",  # bold red
    "CRASH": "1;31",  # bold red: the client's own failure
    "WARN": "33",  # yellow
    "ERROR": "1;35",  # bold magenta
    "SKIP": "2",  # dim
}


def colour_outcome(word: str) -> str:
    """One outcome word (``PASS``) in its colour."""
    code = OUTCOME_COLOURS.get(word)
    return f"\033[{code}m{word}\033[0m" if code else word


def colour_outcomes(text: str) -> str:
    """Colour the outcome word that starts a check's line (client text never starts one:
    it is indented, and its own escape sequences were made visible before this)."""
    out = []
    for line in text.split("\n"):
        word = line.split(" ", 1)[0]
        out.append(colour_outcome(word) + line[len(word) :] if word in OUTCOME_COLOURS else line)
    return "\n".join(out)


def terminal_text(report: Report, verbose: bool) -> str:
    """The terminal report without colour; ``verbose``: known failures' cases shown too."""
    results = report.results
    width = max(len(r.id) for r in results) if results else 10
    lines = [f"claims {line}" for line in report.claim_lines()]
    chosen = report.mode_line()
    if chosen:
        lines.insert(0, chosen)
    if lines:
        lines.append("")
    said: dict[str, list[str]] = {}  # a protocol error -> the checks it stopped
    for r in results:
        mark = r.outcome.upper()
        if r.known_failure:
            mark += " (known)"
        taken = readings_text(r.readings)
        cause = protocol_cause(r)
        if cause is not None and cause in said:
            # the same mistake of the adapter: said once, in full, under its first check
            first = said[cause][0]
            said[cause].append(r.id)
            lines.append(f"{mark:<13} {r.id:<{width}}  the protocol error shown under {first}")
            continue
        if cause is not None:
            said[cause] = [r.id]
        message = terminal_line(r.message) + (f"; {taken}" if taken else "")
        lines.append(f"{mark:<13} {r.id:<{width}}  {message}")
        if r.outcome in FAILING and (verbose or not r.known_failure):
            for failure in r.failures[:1]:
                lines.extend(failure_lines(failure))
            lines.extend(more_failures(r))
    counts = report.counts()
    lines.append("")
    if report.incomplete:
        lines.append(f"INCOMPLETE: {report.incomplete}")
    lines.append(", ".join(f"{n} {o}" for o, n in counts.items() if n) or "no checks")
    for cause, checks in said.items():
        if len(checks) > 1:
            lines.append(
                f"one protocol error left {len(checks)} checks ungraded: {terminal_line(cause)}"
                "; mend the adapter, then run again"
            )
    for check_id in report.now_passing:
        lines.append(f"known failure now passes, remove it from the list: {check_id}")
    sampled = report.sampled_note()
    if sampled:
        lines.append(sampled)
    cached = report.cache_note()
    if cached:
        lines.append(cached)
    extra = report.extra_lines()  # what a report that says more (fuzz's) adds
    if extra is not None:
        lines += ["", *extra]
    return for_terminal("\n".join(lines))


def terminal_report(report: Report, verbose: bool = False, color: bool = False) -> str:
    """The report for people; ``color``: outcome words in ANSI colour (after escaping)."""
    text = terminal_text(report, verbose)
    return colour_outcomes(text) if color else text


@dataclass(frozen=True)
class TerminalReport:
    """The report on stdout when the run ends, finished or stopped.

    ``stopped_color``: the colour of a stopped run's report, when it is not ``color``
    (``run`` prints a stopped run's report without colour).
    """

    echo: Echo
    verbose: bool = False
    color: bool = False
    stopped_color: bool | None = None

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            color = self.color
        elif isinstance(event, RunStopped):
            color = self.color if self.stopped_color is None else self.stopped_color
        else:
            return
        self.echo(terminal_report(event.report, self.verbose, color=color), color=color)
