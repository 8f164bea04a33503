"""Reach: which productions of the JSON grammar and the framing a default run's cases hold.

A generator earns a row of the audit (``docs/generators.md``) only where a default
``stella-conform run`` of a profile really draws it: this module draws exactly the
generated cases such a run grades (each check's own strategy, seed and example count,
through the property ``run`` builds, its strata included:
:mod:`stella_conform.generators.strata`) and scans their bytes with
:func:`stella_conform.generators.grammar.scan`.  A conforming client sees these very
cases (a failing one sees the same until its first failure, then Hypothesis shrinks).

    >>> counts = measure(["recorder"], seeds=[0])
    >>> counts["recorder"].cases
    100
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from stella_conform.conformance.checks import Check, select
from stella_conform.conformance.clients.runner import Client
from stella_conform.conformance.kinds import KINDS
from stella_conform.conformance.suite import (
    STRATA_FROM_EXAMPLES,
    check_strata,
    check_strategy,
    random_examples,
)
from stella_conform.generators.grammar import scan
from stella_conform.options.suite import suite_config


@dataclass(frozen=True)
class DrawnCase:
    """One generated case of a default run: its bytes, and what drew it."""

    check: str
    kind: str
    data: bytes
    mutations: tuple[str, ...]
    touched: frozenset[str] = frozenset()

    @property
    def productions(self) -> frozenset[str]:
        """What the grammar finds in the case (nothing in a kind it does not scan: a
        wrapper's scenario is what the fake stella plays, counted by its kind only)."""
        form = KINDS[self.kind].text_form
        if form is None:
            return frozenset()
        return scan(self.data, form, self.touched)


def drawn_cases(check: Check, seed: int = 0, examples: int = 25) -> Iterator[DrawnCase]:
    """The generated cases a default run draws for ``check`` (a client claiming nothing)."""
    if check.input not in KINDS or not (check.mutations or check.valid_runs) or examples < 1:
        return
    config = suite_config(
        Client(argv=("reach",), mode="persistent"),
        {"seed": seed, "examples": examples},
        database_dir=None,
    )
    vocab = config.vocabulary()
    strategy = check_strategy(check, vocab)
    if strategy is None:
        return
    # the strata too (every run of the default size grades them, first), as ``run`` does
    if examples >= STRATA_FROM_EXAMPLES:
        for case in check_strata(check, vocab):
            yield _drawn(check, case)
    for case, _ in random_examples(check, config, strategy):
        yield _drawn(check, case)


def _drawn(check: Check, case: Any) -> DrawnCase:
    kind = KINDS.of_generated(case)
    graded = kind.graded(case)
    touched = graded.touched or frozenset()
    return DrawnCase(check.id, kind.name, graded.stream, graded.mutations, touched)


@dataclass
class Reach:
    """What one profile's default run drew: cases, and per production how many held it."""

    profile: str
    cases: int = 0
    found: Counter[str] = field(default_factory=Counter)
    #: Per production, the checks whose cases held it (and how many).
    checks: dict[str, Counter[str]] = field(default_factory=dict)
    #: Per production, the mutations of the cases that held it ("" for an unmutated run).
    mutations: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, case: DrawnCase) -> None:
        self.cases += 1
        for production in case.productions:
            self.found[production] += 1
            self.checks.setdefault(production, Counter())[case.check] += 1
            by = self.mutations.setdefault(production, Counter())
            for mutation in case.mutations or ("",):
                by[mutation] += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "found": dict(sorted(self.found.items())),
            "checks": {p: dict(c.most_common()) for p, c in sorted(self.checks.items())},
            "mutations": {p: dict(c.most_common()) for p, c in sorted(self.mutations.items())},
        }


def measure(
    profiles: Iterable[str], seeds: Sequence[int] = (0,), examples: int = 25
) -> dict[str, Reach]:
    """Per profile, the productions its default runs (one per seed) drew, summed."""
    out: dict[str, Reach] = {}
    for profile in profiles:
        reach = out[profile] = Reach(profile)
        for check in select((profile,)):
            if check.profile != profile:
                continue
            for seed in seeds:
                for case in drawn_cases(check, seed, examples):
                    reach.add(case)
    return out


__all__ = ["DrawnCase", "Reach", "drawn_cases", "measure"]
