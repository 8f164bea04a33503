"""How a failing case is told in words: the lines every text renderer shares.

The terminal, JUnit, the Markdown report, the matrix and the pytest plugin all show a
check's first (smallest) failing case in full and every other one on a line; the words
come from here, so no rendering shows a count or a stderr tail another leaves out.
Client text is untrusted: it is clipped, and its control characters are made visible.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stella_conform.conformance.report.excerpt import show_stream
from stella_conform.conformance.suite import CheckResult
from stella_conform.safe_text import clip, for_terminal, no_surrogates, terminal_safe

#: Failing cases listed one line each under the first (shown in full).
LISTED = 10
#: Lines of a client's stderr shown under a failure in the terminal (JSON keeps more).
TERMINAL_STDERR_LINES = 10


def terminal_line(text: str) -> str:
    """Client text on one terminal line: newlines shown as ⏎, the length capped."""
    return clip(no_surrogates(text), 500).replace("\r\n", "⏎").replace("\n", "⏎")


def readings_text(readings: dict[str, int]) -> str:
    """``readings: non-object-line B (3 cases), ...``: the registered readings a client took
    (docs/contract-readings.md); information, never a verdict."""
    if not readings:
        return ""
    parts = []
    for label, count in sorted(readings.items()):
        point, _, reading = label.partition("=")
        parts.append(f"{point} {reading} ({count} case{'s' if count != 1 else ''})")
    return "readings: " + ", ".join(parts)


def more_failures(result: CheckResult) -> list[str]:
    """Every other distinct failing case of a check, one line each, smallest first, with a
    count; the first (smallest) is shown in full above them."""
    rest = result.failures[1:]
    more = max(result.failed_cases, len(result.failures)) - 1
    if more <= 0:
        return []
    out = [f"    {more} more failing case{'s' if more != 1 else ''}, smallest first:"]
    out += [f"      {failure_line(f)}" for f in rest[:LISTED]]
    hidden = more - min(len(rest), LISTED)
    if hidden > 0:
        out.append(f"      … and {hidden} more (the JSON report has {len(result.failures)})")
    return out


def failure_line(failure: Any) -> str:
    """One failing case on one line: where it is, what went wrong."""
    how = failure.source + (
        f", mutations: {', '.join(failure.mutations)}" if failure.mutations else ""
    )
    where = failure.saved if failure.source != "fixture" and failure.saved else failure.case
    if getattr(failure, "not_saved", None):  # too large to keep beside the smallest
        where = f"a case of {failure.size} bytes, sha256 {failure.sha256[:16]}, not saved"
    said = f"client protocol-error: {failure.cause}" if failure.cause else failure.message
    return f"{where} ({how}): {clip(terminal_line(said), 300)}{alike(failure)}"


def alike_count(failure: Any) -> int:
    """How many more strata failed the same way as ``failure`` (``suite.CaseFailure.alike``).

    The one place every renderer takes it from — the terminal, JUnit, the report's
    Markdown, the matrix's Markdown and HTML — whether it has the failure itself or its
    JSON (a report or a matrix shard, which anyone may have edited: anything but a count
    is none)."""
    n = failure.get("alike") if isinstance(failure, Mapping) else getattr(failure, "alike", 0)
    return n if type(n) is int and n > 0 else 0


def alike(failure: Any) -> str:
    """`` (and 3 more strata alike)``, or nothing: :func:`alike_count` in words."""
    n = alike_count(failure)
    return f" (and {n} more {'stratum' if n == 1 else 'strata'} alike)" if n else ""


def protocol_cause(result: CheckResult) -> str | None:
    """The protocol error a check could not be graded for, if that is why it errs."""
    if result.outcome != "error" or not result.failures:
        return None
    cause = getattr(result.failures[0], "cause", None)
    return cause if isinstance(cause, str) and cause else None


def failure_lines(failure: Any) -> list[str]:
    """The smallest failing case in full: the case, expected against what the client did,
    its stderr's end, the stream (its decisive lines kept), where it is saved, the replay."""
    out = [
        f"    case: {failure.case} ({failure.source})"
        + (f", mutations: {', '.join(failure.mutations)}" if failure.mutations else "")
        + alike(failure)
    ]
    out.append(f"    expected: {clip(json.dumps(failure.expected, ensure_ascii=False), 600)}")
    observed = failure.observed
    seen = observed.get("verdict") or observed.get("status")
    if seen == "reject" and observed.get("rejected_line") is not None:
        seen += f" at line {observed['rejected_line']}"
    detail = f" ({terminal_line(str(observed['detail']))})" if observed.get("detail") else ""
    out.append(f"    client:   {seen}{detail}")
    tail = stderr_tail(failure)
    if tail:
        shown = tail_lines(tail, TERMINAL_STDERR_LINES)
        out.append(f"    client stderr (last {len(shown)} line(s)):")
        out.extend(f"      {line}" for line in shown)
    if failure.stream is not None:
        out.append("    stream:")
        excerpt = show_stream(failure.stream, limit=12, keep=failure.decisive)
        out.extend("    " + line for line in excerpt.splitlines())
    if failure.saved:
        out.append(f"    saved:    {failure.saved}")
    if failure.replay:
        out.append(f"    replay:   {failure.replay}")
    return out


def stderr_tail(failure: Any) -> str:
    """The end of the client's stderr for a failing case ("" when it wrote none)."""
    tail = (failure.observed or {}).get("stderr_tail")
    return tail.strip("\n") if isinstance(tail, str) and tail.strip() else ""


def tail_lines(tail: str, count: int) -> list[str]:
    """The last ``count`` lines, control characters made visible (client text is untrusted)."""
    return [terminal_safe(line, keep_tabs=True) for line in tail.splitlines()[-count:]]


def explanation_lines(result: CheckResult, rerun: str | None = None) -> list[str]:
    """A failing check told whole, as a test runner shows a failing test: the check and its
    outcome, its message, then the smallest failing case in full (the terminal report's
    lines, unindented) and every other one on a line.  ``rerun`` (a test runner's command)
    stands in for a replay command a case cannot have."""
    lines = [f"{result.id} ({result.name}): {result.outcome.upper()}", result.message, ""]
    for failure in result.failures[:1]:
        shown = [*failure_lines(failure), *more_failures(result)]
        lines.extend(line[4:] if line.startswith("    ") else line for line in shown)
        if failure.replay is None and rerun is not None:
            lines.append(f"re-run:   {rerun}")
        lines.append("")
    return lines


def explanation(result: CheckResult) -> str:
    """:func:`explanation_lines` as one text safe to print (the client's words in it made
    visible): what the JSON report gives each failing check, so a test runner in another
    language shows the failure as the kit's own reports do."""
    return for_terminal("\n".join(explanation_lines(result)).rstrip("\n"))
