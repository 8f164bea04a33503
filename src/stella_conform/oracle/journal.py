"""The reference reader of the trace journal (contextgraph-trace), with the stream's rules.

A journal is append-only NDJSON a harness (or an adapter watching it) writes
while it works.  Its reader follows the same forward-compatibility rules as a
stream reader: an unrecognized ``event`` tag is inert (counted, not an error),
a recognized tag whose envelope or body does not fit is an error naming the
line, unknown fields are ignored, blank lines are nothing, and a final line
that does not parse is the torn tail of a crashed writer: dropped, everything
before it kept.  Any other line that does not parse, or is not an object, is
an error.

The schema is ``schemas/trace.schema.json``; the checks over a whole journal
are in :mod:`stella_conform.conformance.checks.trace`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from stella_conform.oracle.decoder import Kind, integral_floats_as_integers, parse_line
from stella_conform.schemas.fit import FitCompiler
from stella_conform.schemas.vocabulary import load_schema

TRACE_FORMAT = "contextgraph-trace/0.1-sketch"
EVENTS = (
    "session_start",
    "session_end",
    "resume",
    "turn_start",
    "turn_end",
    "prompt_assembled",
    "model_response",
    "tool_call",
    "tool_result",
    "verify_observed",
    "side_effect",
)
JSON_WS = b" \t\r\n"
#: Unrecognized event names a streaming reader (``keep=False``) lists, and their characters
#: together: a journal of a million distinct names lists the first of them and counts the
#: lines of the rest (``cut["unrecognized_types"]``), as ``decode`` does.
TYPES_KEPT = 1000
TYPES_CHARS = 1024 * 1024


@cache
def _fits() -> dict[str, Callable[[Any, str], str | None]]:
    compiler = FitCompiler(load_schema("trace.schema.json"))
    checks = {tag: compiler.compile({"$ref": f"#/$defs/{tag}"}) for tag in EVENTS}
    checks["envelope"] = compiler.compile({"$ref": "#/$defs/Envelope"})
    return checks


#: Said of a journal line that fits only with its integral floats (``"seq":2.0``) read as
#: integers: in the stream and an envelope that is reading B of integral-float; the journal's
#: one typed source is its Rust declaration, whose integers serde_json reads only from an
#: integer literal, and none of its sources reads by value, so it has no reading B there.
INTEGRAL_FLOAT_NOTE = (
    " (an integral float: the journal format's integers are Rust integer types, which "
    "serde_json reads only from an integer literal; integral-float is a reading of the "
    "stream and the envelope, not of the journal: docs/trace.md)"
)


def misfit(tag: str, entry: dict[str, Any]) -> str | None:
    """Why a line with a recognized tag does not fit, or None."""
    fits = _fits()
    why = fits["envelope"](entry, "") or fits[tag](entry, "")
    if why is not None:
        whole = integral_floats_as_integers(entry)
        if whole is not entry and not (fits["envelope"](whole, "") or fits[tag](whole, "")):
            why += INTEGRAL_FLOAT_NOTE
    return why


@dataclass
class JournalLine:
    """What a correct reader does with one physical line."""

    line: int
    kind: Kind
    event: str | None = None
    entry: dict[str, Any] | None = None
    reason: str | None = None


@dataclass
class Journal:
    """A journal as read: its lines, and the entries the checks look at."""

    lines: list[JournalLine] = field(default_factory=list)
    verdict: str = "accept"
    rejected_line: int | None = None
    reason: str | None = None
    torn_final_line: bool = False
    known_events: int = 0
    unrecognized_events: int = 0
    unrecognized_types: list[str] = field(default_factory=list)
    #: What a streaming reader did not keep, by field: lines whose unrecognized event name
    #: is not listed in ``unrecognized_types``.  Empty when nothing was cut.
    cut: dict[str, int] = field(default_factory=dict)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """Every parsed entry, recognized or not, in journal order."""
        return [ln.entry for ln in self.lines if ln.entry is not None]

    @property
    def known(self) -> list[dict[str, Any]]:
        return [ln.entry for ln in self.lines if ln.kind is Kind.KNOWN and ln.entry is not None]

    def summary(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "rejected_line": self.rejected_line,
            "reason": self.reason,
            "known_events": self.known_events,
            "unrecognized_events": self.unrecognized_events,
            "unrecognized_types": list(self.unrecognized_types),
            "torn_final_line": self.torn_final_line,
            **({"cut": dict(self.cut)} if self.cut else {}),
        }


def read_journal(data: bytes) -> Journal:
    """Read a whole journal as a conforming reader must."""
    reader = JournalReader()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for content in lines:
        if not reader.feed(content):
            break
    return reader.finish()


class JournalReader:
    """The reader, one physical line (without its newline) at a time.

    A line that does not parse is held until the next line that is not blank: then it
    was not the last, and the journal is rejected at it; if the journal ends first, it
    was the torn tail.  ``keep=False`` keeps no line (``trace check`` streams: each
    parsed entry goes to ``on_entry`` with whether its tag is recognized), and lists at
    most :data:`TYPES_KEPT` unrecognized names (:data:`TYPES_CHARS` characters).
    """

    def __init__(
        self,
        *,
        keep: bool = True,
        on_entry: Callable[[dict[str, Any], bool], None] | None = None,
    ) -> None:
        self.journal = Journal()
        self.keep = keep
        self.on_entry = on_entry
        self._unknown: dict[str, None] = {}
        self._unknown_chars = 0
        self._number = 0
        self._held: tuple[int, str] | None = None
        self._done = False

    def _add(self, line: JournalLine) -> None:
        if self.keep:
            self.journal.lines.append(line)

    def _rejected(self, line: int, reason: str) -> bool:
        self._add(JournalLine(line, Kind.REJECT, reason=reason))
        journal = self.journal
        journal.verdict, journal.rejected_line, journal.reason = "reject", line, reason
        self._done = True
        return False

    def feed(self, content: bytes) -> bool:
        """Read one line; False once the journal is rejected (read no further)."""
        if self._done:
            return False
        self._number += 1
        number = self._number
        if not content.strip(JSON_WS):
            if self._held is None:
                self._add(JournalLine(number, Kind.BLANK))
            return True
        if self._held is not None:
            line, why_not = self._held
            return self._rejected(line, f"corrupt line (not the last): {why_not}")
        value, problem = parse_line(content)
        if problem is not None:
            self._held = (number, problem)
            return True
        if not isinstance(value, dict):
            return self._rejected(number, "line is JSON but not an object")
        journal = self.journal
        tag = value.get("event")
        if not isinstance(tag, str) or tag not in EVENTS:
            journal.unrecognized_events += 1
            if isinstance(tag, str):
                self._unrecognized(tag)
            self._add(
                JournalLine(number, Kind.UNKNOWN, tag if isinstance(tag, str) else None, value)
            )
            if self.on_entry is not None:
                self.on_entry(value, False)
            return True
        why = misfit(tag, value)
        if why is not None:
            return self._rejected(number, f"recognized event {tag!r} that does not fit: {why}")
        journal.known_events += 1
        self._add(JournalLine(number, Kind.KNOWN, tag, value))
        if self.on_entry is not None:
            self.on_entry(value, True)
        return True

    def _unrecognized(self, tag: str) -> None:
        """List ``tag``, unless a streaming reader has listed all it keeps."""
        if tag in self._unknown:
            return
        chars = self._unknown_chars + len(tag)
        if not self.keep and (len(self._unknown) >= TYPES_KEPT or chars > TYPES_CHARS):
            cut = self.journal.cut
            cut["unrecognized_types"] = cut.get("unrecognized_types", 0) + 1
            return
        self._unknown[tag] = None
        self._unknown_chars = chars

    def finish(self) -> Journal:
        """The journal as read (a line still held was the torn tail)."""
        journal = self.journal
        if self._done:
            return journal
        if self._held is not None:
            line, problem = self._held
            self._add(JournalLine(line, Kind.TORN, reason=problem))
            journal.torn_final_line = True
        journal.unrecognized_types = sorted(self._unknown)
        self._done = True
        return journal
