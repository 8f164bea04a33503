"""Grading a matrix: every (cell, check) task, in one process or a pool of workers."""

from __future__ import annotations

from collections import Counter
from typing import Any

from stella_conform import stopping
from stella_conform.conformance.checks import Check
from stella_conform.conformance.clients.runner import (
    Client,
)
from stella_conform.conformance.matrix.config import (
    DEFAULT_OUT,
    ClientSpec,
    MatrixConfig,
    VocabularySpec,
)
from stella_conform.conformance.matrix.document import matrix_document
from stella_conform.conformance.matrix.outputs import CellPlan
from stella_conform.conformance.report.model import load_known_failures
from stella_conform.conformance.suite import Grading, SuiteConfig, Task, Tell, preflight
from stella_conform.options.suite import suite_config
from stella_conform.safe_files import inside


def cell_suite_config(
    config: MatrixConfig, client: ClientSpec, vocab: VocabularySpec
) -> SuiteConfig:
    """How one cell (a client of the config, one of its vocabularies) is graded."""
    return suite_config(
        Client(
            client.command,
            client.mode,  # type: ignore[arg-type]
            timeout=client.timeout,
            line_timeout=client.line_timeout,
            cwd=str(config.base),
        ),
        config.settings(),
        claims=client.claims_on(vocab.load()),
        share_generation=True,
        # names come from the config: "../../x" must not write outside the failures folder
        failures_dir=inside(
            config.failures_dir or DEFAULT_OUT / "failures", client.name, vocab.name
        ),
        database_dir=None,  # a matrix is reproducible from its seed alone
        wire_schema=vocab.source,
        recordings=vocab.recordings,  # as run --seed-corpus: generated cases may start there
    )


def cell_label(client: ClientSpec, vocab: VocabularySpec) -> str:
    """How a cell is named in its events and progress lines: ``client × vocabulary``."""
    return f"{client.name} × {vocab.name}"


def shard_tasks(config: MatrixConfig, shard: tuple[int, int] | None) -> list[tuple[int, Check]]:
    """The (cell index, check) tasks a run grades: all of them, or every N-th from the I-th."""
    tasks = config.tasks()
    if shard is None:
        return tasks
    index, count = shard
    return tasks[index - 1 :: count]


def cell_plans(config: MatrixConfig, shard: tuple[int, int] | None) -> dict[str, CellPlan]:
    """Each cell's tasks in this run and its known failures, by label: what the progress
    lines need to say a cell is graded, with its numbers."""
    cells = config.cells()
    counts = Counter(cell for cell, _check in shard_tasks(config, shard))
    known = {
        c.name: frozenset(load_known_failures(c.known_failures) if c.known_failures else ())
        for c in config.clients
    }
    return {
        cell_label(client, vocab): CellPlan(counts[index], known[client.name])
        for index, (client, vocab) in enumerate(cells)
        if counts[index]
    }


def run_matrix(
    config: MatrixConfig,
    *,
    shard: tuple[int, int] | None = None,
    tell: Tell | None = None,
) -> dict[str, Any]:
    """Grade every cell (or one shard of the tasks) and return the matrix document; each
    step is told to ``tell``, tagged with its cell."""
    cells = config.cells()
    tasks = shard_tasks(config, shard)
    suites = [cell_suite_config(config, c, v) for c, v in cells]
    labels = [cell_label(client, vocab) for client, vocab in cells]
    not_graded: dict[int, str] = {}
    graded: list[tuple[int, Check]] = []
    grading = Grading([], tell)

    def document(incomplete: str | None = None, stopped: int | None = None) -> dict[str, Any]:
        results = {(graded[i][0], graded[i][1].id): r for i, r in grading.results.items()}
        return matrix_document(
            config, tasks, suites, results, shard, incomplete, stopped, not_graded
        )

    try:
        not_graded.update(_cannot_start(tasks, suites))
        # the tasks come cell by cell: a persistent client serves all of a cell's checks
        graded = [(cell, check) for cell, check in tasks if cell not in not_graded]
        grading.tasks = [Task(check, suites[cell], labels[cell]) for cell, check in graded]
        grading.run(config.jobs, _worker_groups(graded, config.jobs))
    except stopping.Stopped as stop:
        # what was graded, marked incomplete: the CLI writes it and exits 128 + N
        why = f"{stop.why} after {len(grading.results)} of {len(tasks)} task(s)"
        stop.partial = [document(why, stop.exit_code)]
        raise
    return document()


def _cannot_start(tasks: list[tuple[int, Check]], suites: list[SuiteConfig]) -> dict[int, str]:
    """The cells whose client does not answer a trivially valid stream, with why: not
    graded, each a setup error, as ``run`` says of that client alone
    (:func:`~stella_conform.conformance.suite.preflight`)."""
    checks: dict[int, list[Check]] = {}
    for cell, check in tasks:
        checks.setdefault(cell, []).append(check)
    failed = {}
    for cell, its_checks in checks.items():
        probe = preflight(its_checks, suites[cell])
        if probe is not None and probe.cannot_start:
            failed[cell] = probe.message()
    return failed


def _worker_groups(tasks: list[tuple[int, Check]], jobs: int) -> list[list[int]]:
    """The tasks each worker grades in turn: a cell's checks, so that a persistent client
    serves them all from one process and a check's cases are generated once per worker and
    column, not once per cell (``share_generation``); with fewer cells than workers (one
    client, one vocabulary), each cell's checks split so that every worker has some."""
    by_cell: dict[int, list[int]] = {}
    for index, (cell, _check) in enumerate(tasks):
        by_cell.setdefault(cell, []).append(index)
    split = -(-jobs // max(1, len(by_cell)))
    return [g[i::split] for g in by_cell.values() for i in range(min(split, len(g)))]
