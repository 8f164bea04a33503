"""The shared model of grading: a check, a judgment, and one outcome per check.

A :class:`Check` names one thing the contract asks of a client; a judge (in the
module of the check's profile) answers a :class:`Judgment` per case: ``pass``,
``fail`` with what differed, ``n/a`` (this case says nothing about the check,
usually because another check already failed it), ``crash`` (the client died on
the case: an uncaught exception, a panic, a signal; the client's own failure, as a
rejected valid stream is), or ``error`` (the case could not be judged: the client
hung or broke the adapter protocol, or the kit ran out of time).  :func:`combine`
makes one outcome of a check's judgments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from stella_conform.conformance.kinds import KINDS, InputKind

Tier = Literal["MUST", "SHOULD"]
Judge = Literal[
    "verdict",
    "lockstep",
    "count",
    "no-guessing",
    "dispatch",
    "quiet",
    "rejected-line",
    "last-line-kept",
    "last-line-content",
    "torn-adds-nothing",
    "content",
    "separator-content",
    "legacy-content",
    "reading",
    "reported-fields",
    "exact-integers",
    "elapsed",
    "stream-order",
    "envelope",
    "recorded-order",
    "recorded-unknown",
    "recorded-known",
    "recorded-torn",
    "wrapper-outcome",
    "wrapper-reason",
    "wrapper-invocation",
    "journal",
]
ALL_MODES = frozenset({"exit", "report", "persistent"})
REPORTING = frozenset({"report", "persistent"})
EXIT_ONLY = frozenset({"exit"})
LAUNCHED = frozenset({"exit", "report"})

#: What each profile feeds a client, by the name of its input kind
#: (:data:`~stella_conform.conformance.kinds.KINDS`): a stream, an envelope document, a
#: wrapper scenario, a trace journal; a profile the kit does not ship is added with
#: :func:`register_profile`.
PROFILE_INPUT: dict[str, str] = {
    "reader": "stream",
    "dashboard": "stream",
    "recorder": "stream",
    "envelope": "envelope",
    "wrapper": "scenario",
    "trace": "journal",
}


def profiles() -> tuple[str, ...]:
    """Every profile a client can be graded on, in catalogue order."""
    return tuple(PROFILE_INPUT)


def register_profile(name: str, kind: str) -> None:
    """A profile whose checks feed the client input kind ``kind`` (a registered one): how
    a profile the kit does not ship (a new input's, a test's) joins the catalogue's."""
    if name in PROFILE_INPUT:
        raise ValueError(f"a profile named {name!r} is registered already")
    KINDS[kind]  # a KeyError naming the known kinds
    PROFILE_INPUT[name] = kind


def unregister_profile(name: str) -> None:
    """Remove a profile :func:`register_profile` added."""
    del PROFILE_INPUT[name]


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    rule: str
    judge: Judge
    fixtures: tuple[str, ...] = ()
    mutations: tuple[str, ...] = ()
    valid_runs: bool = False
    profile: str = "reader"
    tier: Tier = "MUST"
    modes: frozenset[str] = field(default=ALL_MODES)
    why: str = ""
    #: Summary fields compared with the oracle's reading (judges "reading" and "envelope"),
    #: or read by the judge ("count", "stream-order"): what a client must compute.
    fields: tuple[str, ...] = ()
    #: Event types the check is about: ``skip`` for a client that knows none of them.
    types: tuple[str, ...] = ()
    #: Envelope parts the check is about: ``skip`` for a client that reads none of them.
    reads: tuple[str, ...] = ()
    #: Fixtures graded only under a vocabulary whose wire schema names aliases in its
    #: descriptions (``schemas/learnt.py``): under the kit's own vocabulary their types
    #: are unrecognized and they would grade another rule.
    wire_fixtures: tuple[str, ...] = ()
    #: Mutations (an envelope check: variants) graded in the check's strata only (each
    #: option a stratum, in every run of the default size), never drawn among its random
    #: examples: the edge cells of ``generators/edges.py`` and the seams of
    #: ``generators/seams.py``, which the random pool would draw on some seeds only.
    strata: tuple[str, ...] = ()

    def fixtures_for(self, learnt: bool) -> tuple[str, ...]:
        """The fixtures graded under a vocabulary that has learnt aliases (or not)."""
        return self.fixtures + self.wire_fixtures if learnt else self.fixtures

    @property
    def input(self) -> str:
        """The name of the input kind the check's profile feeds a client."""
        return PROFILE_INPUT[self.profile]

    @property
    def kind(self) -> InputKind:
        """The input kind the check's profile feeds a client."""
        return KINDS[self.input]

    def grades_in(self, mode: str) -> bool:
        return mode in self.modes

    def skip_reason(self, mode: str) -> str:
        needed = " or ".join(sorted(self.modes))
        return f"needs {needed} mode (the client ran in {mode} mode)"

    @property
    def failing_outcome(self) -> str:
        return "fail" if self.tier == "MUST" else "warn"


Verdict = Literal["pass", "fail", "n/a", "crash", "error"]


@dataclass
class Judgment:
    verdict: Verdict
    message: str = ""
    #: The message without the client's own words (the reason it gave for a rejection
    #: names the case's particulars: the unknown type, the JSON error): what tells one
    #: bug from another (``fuzz``); empty when the message has none.
    signature: str = ""
    #: Registered points of the case and the reading (A or B) the client took at each,
    #: when a pass tells (information only, never a verdict).
    readings: dict[str, str] = field(default_factory=dict)
    #: The conforming reading this judgment was made under (its label; "" the default):
    #: of a pass, the first reading the client matches; of a fail, the one whose verdict
    #: it matched (what ``replay --check`` compares the client's reading with).
    reading: str = ""


@dataclass
class Context:
    """Facts about the client measured once per check (e.g. its usual stderr)."""

    baseline_stderr_lines: int = 0
    #: The summary fields the check compares (set per check by :func:`judge`).
    fields: tuple[str, ...] = ()
    #: Whether the client can report a summary in the mode it runs in.
    reporting: bool = True
    #: The summary fields the client claims to compute (``None``: every field).
    computes: frozenset[str] | None = None
    #: The client reports a summary only, no line observations.
    summary_only: bool = False
    #: How a self-comparing judge names the paired stream in its message.
    paired_words: str = ""


def combine(check: Check, judgments: Sequence[Judgment]) -> tuple[str, str]:
    """One outcome for a check from its per-case judgments.

    A crash outranks a wrong answer: the client died on one of the check's cases, whatever
    it answered on the others, and a report that tallied it as ``fail`` would hide that the
    client has a case it cannot survive. A wrong answer outranks an ``error`` (a case the
    kit could not judge)."""
    fails = [j for j in judgments if j.verdict == "fail"]
    crashes = [j for j in judgments if j.verdict == "crash"]
    errors = [j for j in judgments if j.verdict == "error"]
    graded = [j for j in judgments if j.verdict in ("pass", "fail")]
    if crashes:
        return "crash", crashes[0].message
    if fails:
        return check.failing_outcome, fails[0].message
    if errors:
        return "error", errors[0].message
    if not graded:
        return "skip", "no case graded this check (each depended on something another check failed)"
    return "pass", f"{len(graded)} case(s)"
