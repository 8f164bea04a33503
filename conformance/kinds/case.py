"""A case as the grader sees it, and the oracle's expectation of it in words.

The expected side is always the reference decoder's reading of the case's
bytes (or a fixture's expectation file, which the decoder is tested to agree
with), under every conforming reading the case reaches.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from stella_conform.conformance.clients.wrapper import expected_outcome
from stella_conform.conformance.kinds.protocol import InputKind
from stella_conform.conformance.kinds.registry import KINDS
from stella_conform.oracle.decoder import Decoded, LineOutcome, RunSummary
from stella_conform.oracle.envelope import EnvelopeReading, read_envelope
from stella_conform.oracle.journal import Journal, read_journal
from stella_conform.oracle.readings import (
    Alternative,
    Readings,
    read_envelope_readings,
    read_stream,
)
from stella_conform.schemas.vocabulary import Vocabulary


@dataclass
class GradedCase:
    """A case as the grader sees it: bytes, where it came from, and the oracle's reading."""

    name: str
    stream: bytes
    source: str  # "fixture" or "generated"
    mutations: tuple[str, ...] = ()
    vocab: Vocabulary | None = field(default=None, repr=False)
    #: The name of the case's input kind (:data:`~stella_conform.conformance.kinds.KINDS`):
    #: "stream" (reader, dashboard, recorder), "envelope", "scenario" (wrapper), "journal".
    kind: str = "stream"
    #: Envelope cases: the stella command that printed the document.
    command: str = "stella run --output-format json"
    #: Wrapper cases: how the fake stella ends the run (exit, reason, die_mid_line, ...).
    scenario: dict[str, Any] = field(default_factory=dict)
    #: Envelope cases: the parts the client claims to read (``None``: all of them).
    reads: frozenset[str] | None = None

    #: The oracle's reading when the generator already made it (decoded once per case).
    decoded: Decoded | None = field(default=None, repr=False, compare=False)
    #: With ``decoded``: the registered points that careful decode noted.
    touched: frozenset[str] | None = field(default=None, repr=False, compare=False)
    #: The registered reading this view of the case follows ("" for the default).
    reading_id: str = ""
    #: Generated cases: the lines the generator's mutations touched (shown in excerpts).
    marked: tuple[int, ...] = ()

    @property
    def input_kind(self) -> InputKind:
        """The case's input kind, which says how the oracle reads it."""
        return KINDS[self.kind]

    @cached_property
    def readings(self) -> Readings:
        """Every conforming reading of a stream case (the default first).

        A generated case comes with its careful decode (the default reading and the
        points it touched), so the stream is decoded again only for an alternative.
        """
        if self.decoded is not None and self.touched is not None:
            return read_stream(self.stream, self.vocab, decoded=(self.decoded, self.touched))
        return read_stream(self.stream, self.vocab)

    @cached_property
    def _decoded(self) -> tuple[list[LineOutcome], RunSummary]:
        if self.decoded is not None:
            return self.decoded.outcomes, self.decoded.summary
        default = self.readings.default
        return default.outcomes, default.summary

    @property
    def alternatives(self) -> tuple[Alternative, ...]:
        """The other conforming readings of a stream or an envelope's events (empty when the
        contract is plain)."""
        if self.reading_id:
            return ()
        return self.input_kind.alternatives(self)

    @cached_property
    def envelope_alternatives(self) -> tuple[Alternative, ...]:
        """The conforming readings of an envelope's events besides the default."""
        return read_envelope_readings(self.stream, self.command, self.vocab, self.reads)

    def under(self, alternative: Alternative) -> GradedCase:
        """This case as the oracle reads it when the client takes ``alternative``."""
        view = copy.copy(self)
        if alternative.document is not None:
            view.__dict__["envelope"] = alternative.document
        else:
            view.__dict__["_decoded"] = (alternative.outcomes, alternative.summary)
        view.reading_id = alternative.reading
        return view

    @cached_property
    def envelope(self) -> EnvelopeReading:
        return read_envelope(self.stream, self.command, self.vocab, self.reads)

    @cached_property
    def wrapper(self) -> dict[str, Any]:
        return expected_outcome(self.scenario)

    @cached_property
    def journal(self) -> Journal:
        return read_journal(self.stream)

    def reading(self) -> dict[str, Any]:
        """The oracle's reading of this case, whatever its kind, as JSON."""
        return self.input_kind.reading(self)

    @property
    def expected_verdict(self) -> str:
        return self.input_kind.expected_verdict(self)

    @property
    def expected(self) -> RunSummary:
        return self._decoded[1]

    @property
    def outcomes(self) -> list[LineOutcome]:
        return self._decoded[0]


def expected_verdict_text(case: GradedCase) -> str:
    """``accept``, or ``reject at line N (why)``, then ``or ...`` per other conforming
    reading with another verdict: a correct client's verdict, as ``run``, ``replay`` and
    ``smoke`` print it (a reading that differs in a count or the elapsed time alone says
    nothing more about the verdict, so a failure's words do not change with it)."""
    exp = case.expected
    text = (
        f"reject at line {exp.rejected_line} ({exp.reason})"
        if exp.verdict == "reject"
        else "accept"
    )
    seen = {(exp.verdict, exp.rejected_line)}
    others = []
    for a in case.alternatives:
        verdict = (a.summary.verdict, a.summary.rejected_line)
        if verdict in seen:
            continue
        seen.add(verdict)
        said = "accept" if verdict[0] == "accept" else f"reject at line {verdict[1]}"
        others.append(f"{said} (reading {a.reading})")
    return " or ".join([text, *others])


def expected_text(case: GradedCase) -> dict[str, Any]:
    """The parts of the oracle's reading worth printing next to a failure."""
    s = case.reading()
    kind = case.input_kind
    keys = kind.expected_keys
    out: dict[str, Any] = {k: s[k] for k in keys}
    others = kind.also_conforming(case, keys)
    if others:
        out["also_conforming"] = others
    return out
