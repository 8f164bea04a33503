"""Before grading: ``smoke`` says which side is wrong, the adapter or the client.

Two streams go through the client: a trivially valid run and a run whose second
line is not JSON at all.  Two separate verdicts come out.  *The adapter speaks
the protocol* (report and persistent modes: a hello, an observation per line, a
summary, an exit status that matches it; exit mode: an exit status of 0 or 1)
is about the harness, and only it makes ``smoke`` exit 1: nothing can be graded
through a broken harness.  *The client reads both streams right* is about the
client's parser: a wrong answer there is shown, with what a correct client
does, and left for ``stella-conform run`` to explain rule by rule.

A command that speaks the protocol is graded through what it reports: an adapter grades
the parser as it reads the bytes the adapter hands it, not how the program users run
reads its stdin.  So smoke says so, with the one line that grades that program too.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from stella_conform.cli.client import client_options, make_client
from stella_conform.cli.echo import say
from stella_conform.errors import FAILED

if TYPE_CHECKING:
    from stella_conform.conformance.checks import GradedCase
    from stella_conform.conformance.clients.runner import Client, Observation

#: What an adapter grades, and the line that grades the real program by its exit status.
THROUGH_AN_ADAPTER = (
    "graded through an adapter: its parser, on the bytes the adapter hands it. Grade the\n"
    "program your users run as well, unmodified, by its exit status (its own reading of stdin):"
)
EXIT_MODE_LINE = "stella-conform run --mode exit -- YOUR-CLI [ARGS]"

#: (bundled fixture, what it is) for the two streams smoke sends.
VALID = ("minimal_run", "a trivially valid run")
CORRUPT = ("corrupt_middle_line", "line 2 is not JSON")


@dataclass
class Step:
    label: str
    ok: bool | None  # None: not judged (the adapter gave nothing to judge)
    detail: str

    def line(self) -> str:
        mark = {True: "ok  ", False: "FAIL", None: "--  "}[self.ok]
        return f"  {mark} {self.label}: {self.detail}"


def _observe(client: Client, cases: list[GradedCase]) -> list[Observation]:
    """Run every case; in persistent mode through one session, as grading does."""
    from stella_conform.conformance.clients.runner import PersistentSession, run_once

    if client.mode != "persistent":
        return [run_once(client, case.stream) for case in cases]
    with PersistentSession(client) as session:
        return [session.run(case.stream) for case in cases]


def _protocol_detail(obs: Observation, exit_mode: bool) -> str:
    if not obs.ok:
        return obs.describe()
    ended = obs.exit.describe() if obs.exit is not None else "ready for the next case"
    if exit_mode:
        return f"{ended} ({obs.verdict})"
    parts = [f"{len(obs.lines)} observation(s)", f"summary {obs.verdict}", ended]
    if obs.stalled_at is not None:
        parts.append(f"no answer to line {obs.stalled_at} within --line-timeout")
    return ", ".join(parts)


def _expected(case: GradedCase) -> list[str]:
    """A correct client's verdicts: the default reading's, then each other conforming
    reading's (``run`` passes any one of them, and so does smoke)."""
    out = []
    for summary in (case.expected, *(a.summary for a in case.alternatives)):
        line = summary.rejected_line
        said = "accept" if summary.verdict == "accept" else f"reject at line {line}"
        if said not in out:
            out.append(said)
    return out


def _hello_step(hello: dict[str, Any] | None) -> Step:
    if hello is None:
        return Step("hello", None, "none read")
    client = hello.get("client") or {}
    version = f" {client['version']}" if client.get("version") else ""
    modes = ", ".join(hello.get("modes") or []) or "not listed (all assumed)"
    profiles = ", ".join(hello.get("profiles") or []) or "none"
    return Step(
        "hello",
        True,
        f"{client.get('name', '?')!r}{version}, profiles {profiles}, modes {modes}",
    )


def _as_claimed(client: Any) -> Any:
    """A client whose hello claims ``summary_only`` is fed whole, as ``run`` would."""
    import dataclasses

    from stella_conform.conformance.clients.runner import ensure_mode_supported
    from stella_conform.errors import SetupError

    if client.mode == "exit":
        return client
    try:
        hello = ensure_mode_supported(client)
    except SetupError:
        return client  # the steps below report it
    if hello is not None and hello.get("summary_only") is True:
        return dataclasses.replace(client, summary_only=True)
    return client


@click.command()
@client_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def smoke(command: tuple[str, ...], mode: str, timeout: float, line_timeout: float) -> None:
    """Check the adapter before grading: stella-conform smoke -- CMD [ARGS...]

    Two verdicts: whether the adapter speaks the protocol (exit 1 when not: fix it
    before grading), and whether the client reads a valid and a corrupt stream right
    (a wrong reading is shown; grade the client with `run` to see which rules it breaks).
    """
    from stella_conform.conformance.checks import GradedCase, judge_verdict
    from stella_conform.conformance.clients.answers import UnsupportedMode
    from stella_conform.conformance.report.excerpt import show_stream
    from stella_conform.oracle.corpus import bundled_fixtures_dir

    client = make_client(command, mode, timeout, line_timeout)
    client = _as_claimed(client)
    fixtures = bundled_fixtures_dir()
    cases = [
        GradedCase(f"{name}.jsonl", (fixtures / f"{name}.jsonl").read_bytes(), "fixture")
        for name, _ in (VALID, CORRUPT)
    ]
    exit_mode = mode == "exit"
    try:
        observed = _observe(client, cases)
    except UnsupportedMode as exc:
        say(f"the adapter ({mode} mode):")
        say(Step(f"supports --mode {mode}", False, str(exc)).line())
        say(f"the adapter is broken: {exc}", err=True)
        sys.exit(FAILED)

    adapter: list[Step] = []
    if not exit_mode:
        adapter.append(_hello_step(next((o.hello for o in observed if o.hello), None)))
    for (_, what), case, obs in zip((VALID, CORRUPT), cases, observed, strict=True):
        label = (
            f"exits 0 or 1 on {case.name} ({what})"
            if exit_mode
            else f"speaks the protocol on {case.name} ({what})"
        )
        adapter.append(Step(label, obs.ok, _protocol_detail(obs, exit_mode)))

    reading: list[Step] = []
    for case, obs in zip(cases, observed, strict=True):
        want = _expected(case)
        label = f"{'accepts' if case.expected.verdict == 'accept' else 'rejects'} {case.name}"
        if not obs.ok:
            reading.append(Step(label, None, "not judged: the adapter gave no answer"))
            continue
        right = judge_verdict(case, obs).verdict == "pass"  # as run judges a verdict
        detail = obs.describe()
        if not right or (obs.rejected_line is not None and obs.verdict_text() not in want):
            detail += f" (a correct client: {' or '.join(want)})"
        reading.append(Step(label, right, detail))

    heading = (
        "the command (exit statuses, exit mode):" if exit_mode else f"the adapter ({mode} mode):"
    )
    say(heading)
    for step in adapter:
        say(step.line())
    say("the client (its reading of two trivial streams):")
    for step in reading:
        say(step.line())

    speaks = "the command exits with verdicts" if exit_mode else "the adapter speaks the protocol"
    broken = [s for s in adapter if s.ok is False]
    wrong = [(c, o) for c, o, s in zip(cases, observed, reading, strict=True) if s.ok is False]
    if broken:
        for obs in observed:
            if not obs.ok and obs.stderr_tail.strip():
                say(f"client stderr (tail): {obs.stderr_tail.strip()[-400:]}")
        side = (
            "the command cannot be graded as it is (only exit 0 and 1 are verdicts)"
            if exit_mode
            else "the adapter is broken"
        )
        say(f"{side}: fix it before grading the client", err=True)
        sys.exit(FAILED)
    if not exit_mode:
        say(THROUGH_AN_ADAPTER)
        say(f"  {EXIT_MODE_LINE}")
    if wrong:
        for case, _ in wrong:
            say(f"\n{case.name}:")
            say(show_stream(case.stream))
        names = " and ".join(c.name for c, _ in wrong)
        say(
            f"{speaks}; the client looks wrong on {names}: "
            "see which rules it breaks with `stella-conform run`"
        )
        return
    say(f"{speaks}, and the client reads both streams right")
