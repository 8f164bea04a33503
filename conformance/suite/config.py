"""What a run grades with: the client, the seed, the folders, the claims, the budgets."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stella_conform.conformance.checks.claims import Claims
from stella_conform.conformance.clients.runner import Client
from stella_conform.schemas.vocabulary import Vocabulary

#: Client runs a shrink may spend after the first failure of a check.
SHRINK_BUDGET = 150


@dataclass(frozen=True)
class SuiteConfig:
    client: Client
    examples: int = 25
    seed: int = 0
    failures_dir: Path = Path(".stella-conform/failures")
    database_dir: Path | None = Path(".stella-conform/hypothesis")
    wire_schema: str | None = None
    fixtures_dir: Path | None = None
    #: Client runs a check may spend shrinking after its first generated failure.
    shrink_budget: int = SHRINK_BUDGET
    #: An example database to use instead of ``database_dir`` (the pytest plugin passes
    #: Hypothesis's configured one, e.g. a GitHub-artifact database shared by CI).
    database: Any = None
    #: Keep each check's generated cases for the next client graded on it in this process
    #: (a matrix); off for one client, whose checks never share cases.
    share_generation: bool = False
    #: ``time.monotonic()`` after which no new case starts (``run --time-budget``).
    deadline: float | None = None
    #: The budget in seconds, as the user gave it (for messages).
    time_budget: float | None = None
    #: The option that set the budget, as messages name it (``fuzz`` sets ``--for``).
    budget_option: str = "--time-budget"
    #: What the client claims to know, read and compute (see ``claims.py``).
    claims: Claims = field(default_factory=Claims)
    #: Grade each check on at most its first N fixtures (the catalogue lists the most
    #: basic first); ``None``: every fixture.  For a quick run of a client's other modes
    #: when one of its runs grades every fixture: each check still runs, in this mode.
    fixtures_per_check: int | None = None
    #: Real recordings a generated stream case may start from instead of a generated run
    #: (``--seed-corpus``, :mod:`~stella_conform.conformance.store.recordings`): the same in
    #: ``fuzz`` and in the ``run`` that replays what it found.
    recordings: tuple[Any, ...] = ()
    #: Why the client runs in its mode, when ``--mode auto`` chose it (reports say so).
    mode_reason: str | None = None
    #: A folder of generated cases kept between runs
    #: (:mod:`~stella_conform.conformance.store.casecache`); ``None``: none.
    case_cache: Path | None = None
    #: Grade a check's strata and no random examples (the plugin's fuzz targets, whose
    #: random cases Hypothesis draws for them): failures listed and shrunk as in ``run``.
    strata_only: bool = False

    def stella_vocabulary(self) -> Vocabulary:
        """What the stella under test writes."""
        return Vocabulary.load(self.wire_schema)

    def vocabulary(self) -> Vocabulary:
        """The vocabulary as this client sees it: the stella's, narrowed to what it knows."""
        return self.claims.vocabulary(self.stella_vocabulary())

    def with_claims(self, claims: Claims) -> SuiteConfig:
        """This configuration for a client making ``claims`` (a summary-only one is fed whole)."""
        client = replace(self.client, summary_only=claims.summary_only)
        return replace(self, claims=claims, client=client)


def check_seed(seed: int, check_id: str) -> int:
    """A per-check seed, stable across runs and independent of ``-j``."""
    return seed * 1_000_003 + zlib.crc32(check_id.encode())
