"""The client's answer to a trivially valid stream, before any check runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stella_conform.conformance.checks import Check
from stella_conform.conformance.clients.runner import Observation
from stella_conform.conformance.suite.config import SuiteConfig
from stella_conform.conformance.suite.fixtures import fixture_case, fixture_path
from stella_conform.conformance.suite.replay import replay_command
from stella_conform.conformance.suite.sessions import CaseRunner
from stella_conform.oracle.corpus import bundled_fixtures_dir


@dataclass
class Preflight:
    """The client's answer to a trivially valid stream, before any check runs."""

    observation: Observation
    replay: str | None

    @property
    def cannot_start(self) -> bool:
        """It ended without an answer (crash, no hello, a protocol error): nothing to grade."""
        return self.observation.status in ("crash", "protocol-error")

    @property
    def hangs(self) -> bool:
        return self.observation.status == "timeout"

    def message(self) -> str:
        from stella_conform.conformance.report.failures import terminal_line

        obs = self.observation
        if self.cannot_start:
            head = (
                "the client cannot be graded: it does not answer a trivially valid stream "
                f"({obs.describe()})"
            )
        else:
            head = (
                "stella-conform: warning: the client did not answer a trivially valid stream "
                f"({obs.describe()}); each check stops at its first timeout"
            )
        lines = [head]
        tail = [line for line in obs.stderr_tail.splitlines() if line.strip()][-10:]
        if tail:
            lines.append("client stderr:")
            lines.extend(f"  {terminal_line(line)}" for line in tail)
        if self.replay:
            lines.append(f"replay: {self.replay}")
        return "\n".join(lines)


def preflight(checks: Sequence[Check], config: SuiteConfig) -> Preflight | None:
    """Run the client once on ``minimal_run.jsonl``, so one that cannot start says so once.

    Only for stream clients (a wrapper or an envelope reader is not fed streams); an
    in-process parser has no start-up to fail.  Without this, a missing script gave one
    "no hello" error per check and never showed the interpreter's own message.
    """
    mode = config.client.mode
    check = next((c for c in checks if c.grades_in(mode) and c.kind.preflight), None)
    if check is None or config.client.function is not None:
        return None
    fixtures_dir = config.fixtures_dir or bundled_fixtures_dir()
    case = fixture_case(check, "minimal_run", config.vocabulary(), fixtures_dir)
    runner = CaseRunner(config, check)
    try:
        obs = runner.run(case)
    finally:
        runner.close()
    if obs.ok:
        return None
    path = str(fixture_path(check, "minimal_run", fixtures_dir))
    return Preflight(obs, replay_command(path, config.client, check, config))
