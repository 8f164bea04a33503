"""Hypothesis strategies for stella streams: valid, forward-compatible, truncated, corrupt.

Public API (all composable Hypothesis strategies):

* :func:`events`, :func:`known_events` — single events of known types;
* :func:`runs` — structurally valid runs (:class:`Run`);
* :func:`cases`, :func:`mutated`, :func:`valid_cases` — a run with mutations applied and
  the reference decoder's expected outcome (:class:`Case`);
* :data:`MUTATIONS` — every mutation by stable id, with the rule it targets.

See ``docs/generators.md`` for examples.
"""

if __name__ != "stella_conform.generators":  # pragma: no cover - exercised by tests/test_layout.py
    raise ImportError(
        "the kit's generators layer is imported as stella_conform.generators, never as "
        "'generators': a second name loads every module twice, each with its own state "
        "(install the kit, or run from src/ with the package on sys.path)"
    )


from stella_conform.generators.cases import Case, cases, mutated, valid_cases
from stella_conform.generators.engine.seeded import exclude_the_kit_from_local_constants
from stella_conform.generators.events import EventStrategies, events, known_events, strategies_for
from stella_conform.generators.mutations import MUTATIONS, REJECTING, Mutation, Stream
from stella_conform.generators.runs import Run, runs

__all__ = [
    "MUTATIONS",
    "REJECTING",
    "Case",
    "EventStrategies",
    "Mutation",
    "Run",
    "Stream",
    "cases",
    "events",
    "known_events",
    "mutated",
    "runs",
    "strategies_for",
    "valid_cases",
]

# before any draw: the same seed gives the same cases in a checkout and from a wheel
exclude_the_kit_from_local_constants()
