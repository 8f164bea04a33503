"""The second input a self-comparing check feeds the client beside a case's own: the case's
kind says which (a stream's is :mod:`stella_conform.conformance.kinds.pairs`)."""

from __future__ import annotations

from stella_conform.conformance.checks import Check, GradedCase
from stella_conform.conformance.kinds.pairs import self_describing


def paired_stream(check: Check, case: GradedCase) -> bytes | None:
    """The input a self-comparing check also feeds the client, or ``None``."""
    return case.input_kind.paired(check, case)


__all__ = ["paired_stream", "self_describing"]
