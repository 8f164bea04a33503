"""The report as JSON (``schemas/report.schema.json``): what CI, ``report merge`` and
``report diff`` read."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from stella_conform._version import __version__
from stella_conform.conformance.report.failures import explanation
from stella_conform.conformance.report.files import ReportFile
from stella_conform.conformance.report.model import FAILING, REPORT_FORMAT
from stella_conform.oracle.corpus import corpus_version
from stella_conform.safe_text import json_safe, json_text

if TYPE_CHECKING:
    from stella_conform.conformance.report.model import Report
    from stella_conform.conformance.suite import CheckResult

#: A report (or matrix) whose JSON is longer than this is written without indentation.
INDENTED_JSON_CAP = 4 * 1024 * 1024


def report_document(report: Report) -> dict[str, Any]:
    """The report's JSON document; optional keys only when they say something."""
    config = report.config
    client = config.client
    return {
        "format": REPORT_FORMAT,
        "kit": {"name": "stella-conform", "version": __version__},
        "corpus_version": corpus_version(),
        "vocabulary": report.vocabulary,
        "seed": config.seed,
        "examples": config.examples,
        "date": report.date,
        "client": {
            "command": list(client.argv),
            "mode": client.mode,
            **({"mode_chosen": config.mode_reason} if config.mode_reason else {}),
        },
        "claims": config.claims.to_json(report.stella(), report.checks()),
        "summary": report.counts(),
        "exit_code": report.exit_code,
        "known_failures_now_passing": report.now_passing,
        "checks": [check_document(r) for r in report.results],
        **({"shard": report.shard} if report.shard else {}),
        # a run that left fixtures out says so: its passes are not every fixture's
        **(
            {"fixtures_per_check": config.fixtures_per_check}
            if config.fixtures_per_check is not None
            else {}
        ),
        **({"incomplete": report.incomplete} if report.incomplete else {}),
        **({"error": report.error} if report.error is not None else {}),
        **({"case_cache": cache} if (cache := report.case_cache()) is not None else {}),
        **report.extra_json(),  # what a report that says more (fuzz's) adds
    }


def check_document(result: CheckResult) -> dict[str, Any]:
    """One check of the report; a failing one (or a warning) with its ``explanation``, the
    text a test runner shows as the test's failure message (the pytest plugin's words, and
    what the native runners under ``adapters/runners/`` show)."""
    doc = result.to_json()
    if result.outcome in FAILING:
        doc["explanation"] = explanation(result)
    return doc


def report_json_text(doc: Any) -> str:
    """A report as RFC 8259 JSON in UTF-8, whatever strings or numbers a client put in it.

    NaN and infinities become strings and lone surrogates U+FFFD (:func:`json_safe`);
    ``allow_nan=False`` makes a value that slipped through an error, not invalid JSON.
    Control and invisible characters are written as ``\\uXXXX`` escapes (:func:`json_text`):
    the file holds the client's words exactly, and nothing that acts when it is printed.

    A document that is JSON already (the usual case: every client value in it went
    through :func:`json_safe` when its failure was recorded) is written by the C encoder
    as it is, and indented only when small: the pure-Python walk and the indenting encoder
    are slow on a large matrix, which a stopped matrix writes after the signal.  Only a
    document the C encoder refuses is copied through :func:`json_safe`.
    """
    try:
        compact = json.dumps(doc, ensure_ascii=False, allow_nan=False)
        compact.encode("utf-8")  # a lone surrogate cannot be written as UTF-8
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        doc = json_safe(doc, depth=64, string=None, items=None)
        compact = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    if len(compact) > INDENTED_JSON_CAP:
        return json_text(compact) + "\n"
    return json_text(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)) + "\n"


class JsonFile(ReportFile):
    """``--json PATH``: the report's JSON."""

    def render(self, report: Report) -> str:
        return report_json_text(report_document(report))
