"""The report as Markdown: a table of checks for a CI step summary or a pull request.

Text from outside (a client's words, a path, a name) goes in code: a code span in a
cell (:func:`~stella_conform.safe_text.markdown_code`), a ``<code>`` element
(:func:`~stella_conform.safe_text.markdown_name`) or a code block
(:func:`~stella_conform.safe_text.markdown_block`), where no HTML, link, @mention or
table break survives from it.  GitHub links an @mention in any text outside code, even
one written as a character reference, so code is the only safe place for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stella_conform._version import __version__
from stella_conform.conformance.report.failures import (
    LISTED,
    alike,
    readings_text,
    stderr_tail,
    tail_lines,
)
from stella_conform.conformance.report.files import ReportFile
from stella_conform.conformance.report.model import FAILING, OUTCOMES
from stella_conform.conformance.suite import CheckResult
from stella_conform.oracle.corpus import corpus_version
from stella_conform.safe_text import markdown_block, markdown_code, markdown_name

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report

#: GitHub refuses a step summary over 1 MiB; the Markdown report stays well under it.
MARKDOWN_CAP = 512 * 1024

#: The Markdown reports' outcome icons; a crash is the client's failure, an error the kit's.
OUTCOME_ICONS = {
    "pass": "✅",
    "fail": "❌",
    "crash": "💥",
    "warn": "⚠️",
    "error": "⚙️",
    "skip": "⏭️",
}


def _details(r: CheckResult) -> str:
    """A check's row's last cell: its message, first failure, readings, replay, stderr."""
    detail = markdown_code(r.message) if r.message else ""
    if r.failures:
        detail += alike(r.failures[0])
    if r.readings:
        detail += f"<br>{readings_text(r.readings)}"
    if r.failures and r.failures[0].replay:
        detail += f"<br>replay: {markdown_code(r.failures[0].replay, 1000)}"
    more = max(r.failed_cases, len(r.failures)) - 1
    if r.outcome in FAILING and more > 0:
        names = ", ".join(markdown_code(f.case, 200) + alike(f) for f in r.failures[1 : LISTED + 1])
        detail += f"<br>{more} more failing case{'s' if more != 1 else ''}: {names}"
    tail = stderr_tail(r.failures[0]) if r.failures else ""
    if tail:
        shown = "<br>".join(markdown_name(line.expandtabs(4), 500) for line in tail_lines(tail, 5))
        detail += f"<br>client stderr:<br>{shown}"
    return detail


def markdown_text(report: Report) -> str:
    """The Markdown report, cut (with a row that says so) past :data:`MARKDOWN_CAP`."""
    client = report.config.client
    claims = report.claim_lines()
    out = [
        "## stella-conform",
        *(["", f"**⚠️ incomplete: {report.incomplete}**"] if report.incomplete else []),
        *(
            ["", f"**the client could not be graded:** {markdown_code(report.error, 2000)}"]
            if report.error is not None
            else []
        ),
        "",
        f"{markdown_code(' '.join(client.argv))} ({client.mode} mode"
        + (f", {markdown_code(report.mode_chosen() or '')}" if report.config.mode_reason else "")
        + "), "
        f"vocabulary {markdown_code(report.vocabulary)}, "
        f"corpus `{corpus_version()}`, seed {report.config.seed}, "
        f"stella-conform {__version__}, {report.date}",
        "",
        *[f"- claims {markdown_code(line, 2000)}" for line in claims],
        *([""] if claims else []),
        "| check | outcome | details |",
        "| --- | --- | --- |",
    ]
    icons = {o: f"{OUTCOME_ICONS[o]} {o}" for o in OUTCOMES}
    size = sum(len(line) + 1 for line in out)
    for index, r in enumerate(report.results):
        outcome = icons[r.outcome] + (" (known)" if r.known_failure else "")
        row = f"| {markdown_code(r.id)} | {outcome} | {_details(r)} |"
        size += len(row.encode("utf-8")) + 1
        if size > MARKDOWN_CAP:
            out.append(
                f"| … | | cut: {len(report.results) - index} more check(s) past "
                f"{MARKDOWN_CAP // 1024} KiB; the JSON report has them all |"
            )
            break
        out.append(row)
    counts = report.counts()
    out.append("")
    out.append("**" + ", ".join(f"{n} {o}" for o, n in counts.items() if n) + "**")
    for check_id in report.now_passing:
        said = f"Known failure now passes, remove it from the list: {markdown_code(check_id)}"
        out.append(f"\n{said}")
    for note in (report.sampled_note(), report.cache_note()):
        if note:  # the kit's words, catalogue ids and the cache's folder
            out.append(f"\n{markdown_code(note, 2000)}")
    text = "\n".join(out) + "\n"
    extra = report.extra_lines()  # what a report that says more (fuzz's) adds
    if extra:
        text += "\n" + markdown_block(extra) + "\n"
    return text


class MarkdownFile(ReportFile):
    """``--markdown PATH``: the Markdown report."""

    def render(self, report: Report) -> str:
        return markdown_text(report)
