"""Which failures are one bug: the identity ``run`` and ``fuzz`` both tell failures apart by.

A client that fails a check usually fails it the same way on many cases. Listing each case
would bury the second bug under copies of the first, so every road counts *distinct*
failures, and one function decides what "the same" means: the client's reaction (what it
did: exited, crashed, rejected, answered wrong), the exception a crash ended on or the
signal that killed it, and the judge's words about it, with the case's particulars (its
numbers, its quoted values) removed. A run keeps the smallest case of each identity whole
(``suite.keep_bounded``); fuzz keeps one find per identity (``fuzz.loop``).
"""

from __future__ import annotations

import re

from stella_conform.conformance.checks.model import Judgment
from stella_conform.conformance.clients.runner import Observation

#: An identity's length at most: enough to tell bugs apart, bounded whatever a judge quotes.
IDENTITY_CAP = 300

_NUMBERS = re.compile(r"\d+")
_QUOTES = re.compile(r"'[^']*'|\"[^\"]*\"")


def without_particulars(text: str) -> str:
    """``text`` with a case's particulars (its numbers, its quoted values) replaced: what
    is left tells one bug from another."""
    return _NUMBERS.sub("N", _QUOTES.sub("…", text))


def failure_identity(check_id: str, judgment: Judgment, obs: Observation) -> str:
    """What the client did on a failing case of ``check_id``, particulars removed.

    Two failures with the same identity are one bug shown twice. A crash is told apart by
    its last stderr line (the exception), a killed client by its signal, a wrong answer by
    the judge's words (:attr:`Judgment.signature`, which leaves out what the client said,
    else the whole message).
    """
    parts = [check_id, obs.status, str(obs.verdict)]
    if obs.status == "crash" and obs.stderr_tail.strip():
        parts.append(obs.stderr_tail.strip().splitlines()[-1])
    elif obs.exit is not None and obs.exit.signal is not None:
        parts.append(obs.exit.describe())
    parts.append(judgment.signature or judgment.message)
    return without_particulars(" | ".join(parts))[:IDENTITY_CAP]


__all__ = ["IDENTITY_CAP", "failure_identity", "without_particulars"]
