"""The one place a :class:`~stella_conform.conformance.suite.SuiteConfig` is made from
resolved options: ``run``, ``fuzz``, ``replay``, a matrix's cells and the pytest plugin
hand it their options by the model's names, and the parts only they know (the client, its
claims, the example database, why its mode was chosen) as fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.suite import SuiteConfig

#: The SuiteConfig field each option sets, by the option's name in the model.
FIELDS = {
    "examples": "examples",
    "seed": "seed",
    "failures_dir": "failures_dir",
    "max_shrinks": "shrink_budget",
    "fixtures_per_check": "fixtures_per_check",
    "case_cache": "case_cache",
    "time_budget": "time_budget",
}


def suite_config(
    client: Client,
    options: Mapping[str, Any] | None = None,
    *,
    claims: Claims | None = None,
    started: float | None = None,
    **fields: Any,
) -> SuiteConfig:
    """The suite's configuration: ``options`` (the model's names; others are ignored, so a
    command may pass every value it was given), then ``fields`` as SuiteConfig names them.

    ``wire_schema`` is kept as text; ``no_case_cache`` turns the case cache off; a
    ``time_budget`` sets the deadline ``started`` (``time.monotonic()``) plus the budget.
    """
    given = dict(options or {})
    values: dict[str, Any] = {FIELDS[k]: v for k, v in given.items() if k in FIELDS}
    if "wire_schema" in given:
        values["wire_schema"] = str(given["wire_schema"]) if given["wire_schema"] else None
    if given.get("no_case_cache"):
        values["case_cache"] = None
    if given.get("time_budget") is not None:
        if started is None:
            raise ValueError("a time budget needs the time it started from")
        values["deadline"] = started + given["time_budget"]
    values.update(fields)
    config = SuiteConfig(client=client, **values)
    return config if claims is None else config.with_claims(claims)
