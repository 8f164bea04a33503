"""The ``wrapper`` profile's stage: a fake ``stella`` first on PATH, playing one scenario.

A wrapper is a program that launches stella (a CI script, a bot, an SDK's
``run()``).  The kit cannot feed it a stream; instead it puts a ``stella``
shim first on ``PATH`` that runs :mod:`stella_conform.fake_stella`, tells it
which scenario to play, and reads back how the client invoked it.

What the client must make of each ending is the contract's exit-code table:

=====  =========================  ==========================================
exit   meaning                     the wrapper's own outcome
=====  =========================  ==========================================
0      success                     ``completed``; exit 0
3      stopped on purpose          ``stopped`` (read ``reason``); exit 1
130    cancelled by the operator   ``cancelled``; exit 0
143    killed (a job timeout)      ``terminated``; exit 0
other  failed                      ``failed``; exit 1
=====  =========================  ==========================================

The wrapper's own exit status in the last column is the one the contract's
example script uses; in ``exit`` mode that is what the kit grades.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stella_conform import stopping
from stella_conform.fake_stella import LOG_ENV, PACE_ENV, SCENARIO_ENV, SCENARIO_FORMAT
from stella_conform.safe_files import read_regular

#: The most of the fake stella's invocation log the kit reads back.
INVOCATION_LOG_CAP = 4 * 1024 * 1024

#: stella's exit status → (the wrapper's outcome, the wrapper's verdict as its exit status).
EXIT_OUTCOMES: dict[int, tuple[str, str]] = {
    0: ("completed", "accept"),
    3: ("stopped", "reject"),
    130: ("cancelled", "accept"),
    143: ("terminated", "accept"),
}
FAILED = ("failed", "reject")


def expected_outcome(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """What a conforming wrapper reports for a scenario."""
    code = int(scenario.get("exit", 0))
    if scenario.get("preflight") is not None:
        code = code or 1
    outcome, verdict = EXIT_OUTCOMES.get(code, FAILED)
    return {
        "verdict": verdict,
        "outcome": outcome,
        "reason": scenario.get("reason") if outcome == "stopped" else None,
    }


@dataclass
class Stage:
    """A prepared scenario: the environment to run the client in, and its log."""

    env: dict[str, str]
    log: Path

    def invocations(self) -> list[dict[str, Any]]:
        """How the client invoked the fake, one dict per call.

        The client can replace the log with a FIFO, a device or a link: that raises
        :class:`RefusedFile` (the case is an ``error``), it never blocks or fills memory.
        """
        try:
            data = read_regular(self.log, INVOCATION_LOG_CAP, follow=False)
        except FileNotFoundError:
            return []
        text = data.decode("utf-8", "replace")
        out = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    out.append(value)
        return out


def shim_text(python: str = sys.executable) -> str:
    return f'#!/bin/sh\nexec {shlex.quote(python)} -m stella_conform.fake_stella "$@"\n'


def install_shim(directory: Path, python: str = sys.executable) -> Path:
    """Write an executable ``stella`` that runs the fake; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "stella"
    path.write_text(shim_text(python), encoding="utf-8")
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def staged(
    scenario: Mapping[str, Any], stream: bytes, *, base_env: Mapping[str, str] | None = None
) -> Iterator[Stage]:
    """A private directory with the shim, the scenario and the stream; removed afterwards."""
    with stopping.private_dir("stella-conform-wrapper-") as name:
        directory = Path(name)
        install_shim(directory / "bin")
        (directory / "stream.jsonl").write_bytes(stream)
        doc = {k: v for k, v in scenario.items() if k not in ("stream", "stream_text", "expect")}
        doc.update({"format": SCENARIO_FORMAT, "stream": "stream.jsonl"})
        (directory / "scenario.json").write_text(json.dumps(doc), encoding="utf-8")
        log = directory / "invocations.jsonl"
        path = (base_env or os.environ).get("PATH", os.defpath)
        env = {
            "PATH": f"{directory / 'bin'}{os.pathsep}{path}",
            SCENARIO_ENV: str(directory / "scenario.json"),
            LOG_ENV: str(log),
        }
        if "pace_ms" in scenario:
            env[PACE_ENV] = str(scenario["pace_ms"])
        yield Stage(env, log)
