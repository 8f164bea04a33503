"""What the suite takes from Hypothesis's internals besides drawing: the type of one
choice in a choice sequence, the digest Hypothesis keys a property's example database
entries by, and the local constants Hypothesis collects on its first draw."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis.internal.conjecture.choice import ChoiceT as ChoiceT


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
