"""The compatibility matrix: many clients × many contract versions, one table.

A matrix config (TOML) lists clients (a name, a command, a mode, the profiles
they claim, optionally a known-failures file) and vocabularies (the kit's own,
or a stella wire schema).  Every (client, vocabulary) cell is graded like
``stella-conform run``; every (cell, check) pair is one task, the tasks run in
a process pool, and the result is one JSON document holding a full report per
cell, rendered as Markdown and as a self-contained HTML page.

The order of tasks is fixed by the config, so ``--shard I/N`` splits them the
same way on every machine, and the shards' JSON documents merge into exactly
the unsharded matrix (``stella-conform report merge``).
"""

from stella_conform.conformance.matrix.config import (
    CLAIM_KEYS,
    DEFAULT_OUT,
    DEFAULT_VOCABULARY,
    ClientSpec,
    MatrixConfig,
    VocabularySpec,
    load_config,
)
from stella_conform.conformance.matrix.document import (
    MATRIX_FORMAT,
    MATRIX_SAME_RUN,
    exit_code,
    is_matrix,
    load_matrix,
    merge_matrices,
)
from stella_conform.conformance.matrix.renderers import (
    ICONS,
    LEGEND,
    cell_text,
    summary_counts,
    to_html,
    to_markdown,
)
from stella_conform.conformance.matrix.run import run_matrix

__all__ = [
    "CLAIM_KEYS",
    "DEFAULT_OUT",
    "DEFAULT_VOCABULARY",
    "ICONS",
    "LEGEND",
    "MATRIX_FORMAT",
    "MATRIX_SAME_RUN",
    "ClientSpec",
    "MatrixConfig",
    "VocabularySpec",
    "cell_text",
    "exit_code",
    "is_matrix",
    "load_config",
    "load_matrix",
    "merge_matrices",
    "run_matrix",
    "summary_counts",
    "to_html",
    "to_markdown",
]
