"""Every report name in one place, for the tests that import them from here: the model,
each format's render function and the helpers every format shares.  Code imports the
module that holds the name (``model``, ``terminal``, ``json_report``, ``junit``,
``markdown``, ``progress``, ``failures``, ``files``, ``outputs``)."""

from stella_conform.conformance.report.excerpt import show_stream
from stella_conform.conformance.report.failures import (
    LISTED,
    TERMINAL_STDERR_LINES,
    alike,
    alike_count,
    failure_line,
    failure_lines,
    more_failures,
    protocol_cause,
    readings_text,
    stderr_tail,
    tail_lines,
    terminal_line,
)
from stella_conform.conformance.report.files import check_writable, write_rendered
from stella_conform.conformance.report.json_report import INDENTED_JSON_CAP, report_json_text
from stella_conform.conformance.report.markdown import (
    MARKDOWN_CAP,
    MARKDOWN_ESCAPES,
    OUTCOME_ICONS,
)
from stella_conform.conformance.report.model import (
    FAILING,
    OUTCOMES,
    REPORT_FORMAT,
    Report,
    load_known_failures,
)
from stella_conform.conformance.report.outputs import write_outputs
from stella_conform.conformance.report.progress import progress_line
from stella_conform.conformance.report.terminal import (
    OUTCOME_COLOURS,
    colour_outcome,
    colour_outcomes,
)

#: The smallest failing case in full (the pytest plugin's name for it).
_failure_lines = failure_lines

__all__ = [
    "FAILING",
    "INDENTED_JSON_CAP",
    "LISTED",
    "MARKDOWN_CAP",
    "MARKDOWN_ESCAPES",
    "OUTCOMES",
    "OUTCOME_COLOURS",
    "OUTCOME_ICONS",
    "REPORT_FORMAT",
    "TERMINAL_STDERR_LINES",
    "Report",
    "_failure_lines",
    "alike",
    "alike_count",
    "check_writable",
    "colour_outcome",
    "colour_outcomes",
    "failure_line",
    "load_known_failures",
    "more_failures",
    "progress_line",
    "protocol_cause",
    "readings_text",
    "report_json_text",
    "show_stream",
    "stderr_tail",
    "tail_lines",
    "terminal_line",
    "write_outputs",
    "write_rendered",
]
