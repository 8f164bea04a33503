"""Grading a matrix: every (cell, check) task, in one process or a pool of workers."""

from __future__ import annotations

from collections.abc import Callable
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
from stella_conform.conformance.suite import (
    CheckResult,
    SuiteConfig,
    run_check,
    shared_sessions,
    worker_pool,
)
from stella_conform.safe_files import inside


def cell_suite_config(
    config: MatrixConfig, client: ClientSpec, vocab: VocabularySpec
) -> SuiteConfig:
    """How one cell (a client of the config, one of its vocabularies) is graded."""
    from stella_conform.options.suite import suite_config

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
    )


def _run_group(group: list[tuple[SuiteConfig, Check]]) -> list[CheckResult]:
    """One cell's checks in one worker: one client process serves them all (persistent
    mode), and the cases of each check are the ones this worker generated for the column."""
    return [run_check(check, suite) for suite, check in group]


ProgressFn = Callable[[int, int, str, CheckResult], None]


def run_matrix(
    config: MatrixConfig,
    *,
    shard: tuple[int, int] | None = None,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Grade every cell (or one shard of the tasks) and return the matrix document."""
    cells = config.cells()
    tasks = config.tasks()
    if shard is not None:
        index, count = shard
        tasks = tasks[index - 1 :: count]
    suites = [cell_suite_config(config, c, v) for c, v in cells]
    results: dict[tuple[int, str], CheckResult] = {}

    def label(cell: int) -> str:
        return f"{cells[cell][0].name} × {cells[cell][1].name}"

    def document(incomplete: str | None = None, stopped: int | None = None) -> dict[str, Any]:
        return matrix_document(config, tasks, suites, results, shard, incomplete, stopped)

    try:
        if config.jobs <= 1 or len(tasks) <= 1:
            # the tasks come cell by cell: a persistent client serves all of its checks
            with shared_sessions():
                for cell, check in tasks:
                    results[(cell, check.id)] = run_check(check, suites[cell])
                    if progress:
                        progress(len(results), len(tasks), label(cell), results[(cell, check.id)])
        else:
            with worker_pool(config.jobs) as pool:  # stopped at once by a stop signal
                # A worker grades one cell's checks in turn: a persistent client serves them
                # all from one process (suite.shared_sessions), and a check's cases are still
                # generated once per worker and column, not once per cell (suite._share_key).
                by_cell: dict[int, list[tuple[int, Check]]] = {}
                for cell, check in tasks:
                    by_cell.setdefault(cell, []).append((cell, check))
                # fewer cells than workers (one client, one vocabulary): split each cell's
                # checks, so that every worker has some
                split = -(-config.jobs // len(by_cell))
                groups = [g[i::split] for g in by_cell.values() for i in range(min(split, len(g)))]
                futures = {
                    pool.submit(_run_group, [(suites[cell], check) for cell, check in group]): group
                    for group in groups
                }
                for future, graded in stopping.finished(futures):  # a lost worker: Stopped
                    for (cell, check), result in zip(futures[future], graded, strict=True):
                        results[(cell, check.id)] = result
                        if progress:
                            progress(len(results), len(tasks), label(cell), result)
    except stopping.Stopped as stop:
        # what was graded, marked incomplete: the CLI writes it and exits 128 + N
        why = f"{stop.why} after {len(results)} of {len(tasks)} task(s)"
        stop.partial = [document(why, stop.exit_code)]
        raise
    return document()
