"""What the suite takes from Hypothesis's internals besides drawing: the type of one
choice in a choice sequence, a property's example database and the key of its entries,
and the local constants Hypothesis collects on its first draw."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import settings
from hypothesis.database import ExampleDatabase
from hypothesis.internal.conjecture.choice import ChoiceT as ChoiceT


def use_database(prop: Any, database: ExampleDatabase | None) -> None:
    """Give a ``@given`` property ``database`` as its example database: ``@seed``
    switches the database off, and the kit wants both, a reproducible draw and the
    failures of earlier runs (and fuzz sessions) replayed first."""
    prop._hypothesis_internal_use_settings = settings(
        prop._hypothesis_internal_use_settings, database=database
    )


def key_entries(prop: Any, key: bytes) -> None:
    """Key a ``@given`` property's example-database entries by ``key`` (rather than by
    its source): stable across runs and kit versions, so a failure replays first next
    run."""
    prop.hypothesis.inner_test._hypothesis_internal_add_digest = key


def property_digest(test: Any) -> bytes:
    """The example-database key Hypothesis gives ``test`` (a ``@given`` property's inner
    test, with the digest the kit added to it)."""
    from hypothesis.internal.reflection import function_digest

    return bytes(function_digest(test))


def collect_local_constants() -> None:
    """Collect the constants Hypothesis reads from every local module on its first draw
    (cached in this process, so forked workers inherit them).  An internal API: if it
    moves, each worker simply collects them again."""
    with contextlib.suppress(Exception):
        from hypothesis.internal.conjecture.providers import _get_local_constants

        _get_local_constants()
