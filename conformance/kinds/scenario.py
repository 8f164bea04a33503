"""The scenario kind: what a fake ``stella`` plays to a wrapper (a stream, and how the run
ends), graded by what the wrapper makes of it.

A scenario drives the fake stella, so its cases are generated every run (not cached), and
the grammar audit does not scan them: the stream it plays is a stream's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stella_conform.conformance.kinds.case import GradedCase
from stella_conform.conformance.kinds.protocol import InputKind, Player
from stella_conform.conformance.kinds.registry import register
from stella_conform.oracle.corpus import SCENARIO_SUFFIX

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from stella_conform.conformance.checks.model import Check
    from stella_conform.conformance.clients.runner import Observation
    from stella_conform.generators.runs import Run
    from stella_conform.schemas.vocabulary import Vocabulary


@register
class ScenarioKind(InputKind):
    name = "scenario"
    suffix = SCENARIO_SUFFIX
    fixture_folder = "scenarios"
    expected_keys = ("verdict", "outcome", "reason")

    def load(
        self, path: Path, vocab: Vocabulary | None = None, data: bytes | None = None
    ) -> GradedCase | None:
        from stella_conform.oracle.corpus import read_scenario

        scenario = read_scenario(path, data)
        return GradedCase(
            scenario.name, scenario.stream, "fixture", vocab=vocab, kind=self.name,
            scenario=dict(scenario.scenario),
        )  # fmt: skip

    def observe(self, case: GradedCase, check: Check, player: Player) -> Observation:
        """The wrapper is started with nothing on stdin and the fake stella first on its
        PATH, which plays the scenario and logs how it was invoked."""
        from stella_conform.conformance.clients.runner import Feed, run_once
        from stella_conform.conformance.clients.wrapper import staged

        client = player.client
        with staged(case.scenario, case.stream, base_env=client.environment()) as stage:
            obs = run_once(client, b"", Feed("none", stage.env))
            try:
                obs.invocations = stage.invocations()
            except OSError as exc:  # a FIFO, device or link planted as the log
                if obs.ok:
                    obs.status = "crash"
                    obs.detail = f"the fake stella's invocation log: {getattr(exc, 'why', exc)}"
        return obs

    # ------------------------------------------------------------------ the oracle

    def reading(self, case: GradedCase) -> dict[str, Any]:
        return dict(case.wrapper)

    def expected_verdict(self, case: GradedCase) -> str:
        return str(case.wrapper["verdict"])

    # ------------------------------------------------------------------ saving a failure

    def saved_files(self, directory: Path, name: str) -> list[Path]:
        return [directory / f"{name}{self.suffix}"]  # the stream inline, the expectation in it

    def save(
        self,
        directory: Path,
        name: str,
        case: GradedCase,
        *,
        check: Check,
        description: str,
        seed: int | None,
    ) -> Path:
        from stella_conform.oracle.corpus import write_scenario

        scenario = {"description": description, **case.scenario, "expect": case.wrapper}
        return write_scenario(directory, name, scenario, case.stream)

    # ------------------------------------------------------------------ generated cases

    def strategy(
        self, check: Check, vocab: Vocabulary, recordings: Sequence[Run] = ()
    ) -> SearchStrategy[Any] | None:
        from stella_conform.generators.scenarios import scenario_cases

        return scenario_cases(vocab, kinds=check.mutations)

    def owns_generated(self, case: Any) -> bool:
        from stella_conform.generators.scenarios import ScenarioCase

        return isinstance(case, ScenarioCase)

    def graded(
        self, case: Any, vocab: Vocabulary | None = None, reads: frozenset[str] | None = None
    ) -> GradedCase:
        return GradedCase(
            "generated", case.stream, "generated", (case.kind,), vocab=vocab,
            kind=self.name, scenario=dict(case.scenario),
        )  # fmt: skip
