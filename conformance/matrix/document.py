"""The matrix document: one JSON report per cell, its exit status, and the merge of shards."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stella_conform._version import __version__
from stella_conform.conformance.checks import Check
from stella_conform.conformance.matrix.config import MatrixConfig
from stella_conform.conformance.matrix.counts import CellCounts
from stella_conform.conformance.report.compare import check_shape
from stella_conform.conformance.report.compare import merge as merge_reports
from stella_conform.conformance.report.json_report import report_document
from stella_conform.conformance.report.model import Report, load_known_failures
from stella_conform.conformance.suite import (
    CheckResult,
    SuiteConfig,
)
from stella_conform.errors import SetupError, combined_exit_status, read_json_file
from stella_conform.oracle.corpus import corpus_version

MATRIX_FORMAT = "stella-conform/matrix/1"
#: What the shards of one matrix share.
MATRIX_SAME_RUN = (
    "kit", "corpus_version", "seed", "examples", "fixtures_per_check", "clients", "vocabularies",
)  # fmt: skip


def matrix_document(
    config: MatrixConfig,
    tasks: Sequence[tuple[int, Check]],
    suites: Sequence[SuiteConfig],
    results: Mapping[tuple[int, str], CheckResult],
    shard: tuple[int, int] | None,
    incomplete: str | None = None,
    stopped: int | None = None,
    not_graded: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """The matrix document of what was graded: one report per cell, in the config's order;
    a cell of ``not_graded`` says why its client could not be graded.

    Linear in the tasks: it is also what a stopped matrix writes, within a second of the
    signal at any size, so each cell's results are grouped once and each client's known
    failures and each vocabulary are read once.
    """
    date = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    shard_label = f"{shard[0]}/{shard[1]}" if shard else None
    graded: dict[int, list[CheckResult]] = {}
    for cell, check in tasks:
        result = results.get((cell, check.id))
        if result is not None:
            graded.setdefault(cell, []).append(result)
    known = {
        c.name: load_known_failures(c.known_failures) if c.known_failures else {}
        for c in config.clients
    }
    idents = {v.name: v.load().ident for v in config.vocabularies}
    out_cells = []
    for index, (client, vocab) in enumerate(config.cells()):
        report = Report(
            suites[index],
            graded.get(index, []),
            idents[vocab.name],
            known[client.name],
            shard=shard_label,
            date=date,
            incomplete=incomplete,
            stopped=stopped,
            error=(not_graded or {}).get(index),
        )
        out_cells.append(_cell(client.name, vocab.name, report_document(report)))
    doc = _document(config, out_cells, date, shard_label, idents)
    if incomplete:
        doc["incomplete"] = incomplete
    return doc


def _cell(client: str, vocabulary: str, report: dict[str, Any]) -> dict[str, Any]:
    """One cell: its report, and the checks it graded, failed and skipped (``counts``,
    what every rendering of the cell shows)."""
    counts = CellCounts.of_report(report).to_json()
    return {"client": client, "vocabulary": vocabulary, "counts": counts, "report": report}


def _document(
    config: MatrixConfig,
    cells: list[dict[str, Any]],
    date: str,
    shard: str | None,
    idents: Mapping[str, str],
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": MATRIX_FORMAT,
        "kit": {"name": "stella-conform", "version": __version__},
        "corpus_version": corpus_version(),
        "date": date,
        "seed": config.seed,
        "examples": config.examples,
        **(
            {"fixtures_per_check": config.fixtures_per_check}
            if config.fixtures_per_check is not None
            else {}
        ),
        "clients": [c.to_json() for c in config.clients],
        "vocabularies": [v.to_json(idents[v.name]) for v in config.vocabularies],
        "cells": cells,
    }
    if shard:
        doc["shard"] = shard
    doc["exit_code"] = exit_code(doc)
    return doc


def exit_code(doc: dict[str, Any]) -> int:
    """The cells' statuses taken as one (:func:`~stella_conform.errors.combined_exit_status`):
    a cell whose client could not be graded makes the matrix a setup error, as ``run``
    says of that client alone."""
    return combined_exit_status(cell["report"]["exit_code"] for cell in doc["cells"])


def is_matrix(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == MATRIX_FORMAT


def load_matrix(path: Path) -> dict[str, Any]:
    doc = read_json_file(path, "matrix report")
    if not is_matrix(doc) or not isinstance(doc.get("cells"), list):
        raise SetupError(f"{path} is not a stella-conform matrix ({MATRIX_FORMAT})")
    check_shape(doc, "Matrix", path)
    # one cell per (client, vocabulary), in the config's order: what the renderers look up
    expected = [(c["name"], v["name"]) for c in doc["clients"] for v in doc["vocabularies"]]
    if [(c["client"], c["vocabulary"]) for c in doc["cells"]] != expected:
        raise SetupError(f"malformed matrix {path}: its cells are not one per client × vocabulary")
    return dict(doc)


def merge_matrices(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One matrix from the documents of its shards."""
    if not docs:
        raise SetupError("nothing to merge")
    first = docs[0]
    for doc in docs[1:]:
        for key in MATRIX_SAME_RUN:
            if doc.get(key) != first.get(key):
                raise SetupError(f"matrices are not shards of one run: '{key}' differs")
    cells = []
    for index, cell in enumerate(first["cells"]):
        parts = [d["cells"][index]["report"] for d in docs]
        merged = merge_reports(parts)
        merged["date"] = first["date"]
        cells.append(_cell(cell["client"], cell["vocabulary"], merged))
    out = {k: v for k, v in first.items() if k not in ("cells", "shard", "exit_code")}
    out["cells"] = cells
    out["merged_from"] = [d.get("shard", "?") for d in docs]
    out["exit_code"] = exit_code(out)
    return out
