"""The stream a mutation works on, and what a mutation is.

A :class:`Stream` is a list of lines (:class:`Line`), each an object still to be serialized
or literal bytes, carrying the ids of the mutations that touched it. A :class:`Mutation` names
one transformation of a stream and the rule it targets; :func:`insert_at` and
:func:`pick_known` are the two moves most mutations start with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.engine.picks import between, choose
from stella_conform.generators.events import Event
from stella_conform.generators.runs import encode
from stella_conform.schemas.vocabulary import Vocabulary


def json_copy(value: Any) -> Any:
    """A copy of a JSON value (dicts and lists copied all the way down).

    ``copy.deepcopy`` keeps a memo for shared and cyclic objects, which JSON has none
    of; copying every event of a run with it would be a tenth of a case's generation.
    """
    if isinstance(value, dict):
        # most values of an event are strings and numbers: copied without a call each
        return {
            key: json_copy(item) if isinstance(item, (dict, list)) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [json_copy(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


@dataclass
class Line:
    """One line of a stream under construction."""

    obj: Any = None
    raw: bytes | None = None
    marks: set[str] = field(default_factory=set)
    #: This line's terminator when it is not the stream's (a CRLF line in an LF stream).
    end: bytes | None = None

    def to_bytes(self) -> bytes:
        return self.raw if self.raw is not None else encode(self.obj)

    @property
    def is_event(self) -> bool:
        return self.raw is None and isinstance(self.obj, dict)


@dataclass
class Stream:
    """A stream under construction: lines plus how they are terminated."""

    lines: list[Line]
    final_newline: bool = True
    crlf: bool = False

    @classmethod
    def of(cls, events: list[Event]) -> Stream:
        return cls([Line(json_copy(e)) for e in events])

    def to_bytes(self) -> bytes:
        end = b"\r\n" if self.crlf else b"\n"
        if any(line.end is not None for line in self.lines):
            ends = [line.end or end for line in self.lines]
            if ends and not self.final_newline:
                ends[-1] = b""
            return b"".join(line.to_bytes() + e for line, e in zip(self.lines, ends, strict=True))
        parts = [line.to_bytes() for line in self.lines]
        body = end.join(parts)
        return body + end if (self.final_newline and parts) else body

    def marked(self, mutation_id: str) -> list[int]:
        """1-based line numbers the mutation touched."""
        return [i for i, line in enumerate(self.lines, 1) if mutation_id in line.marks]

    def event_indexes(self, vocab: Vocabulary, *, known: bool = True) -> list[int]:
        return [
            i
            for i, line in enumerate(self.lines)
            if line.is_event
            and isinstance(line.obj.get("type"), str)
            and (line.obj["type"] in vocab.known) == known
        ]


Apply = Callable[[st.DrawFn, Stream, Vocabulary], None]


@dataclass(frozen=True)
class Mutation:
    """A named transformation; ``rule`` is the rule or guarantee it targets."""

    id: str
    rule: str
    description: str
    apply: Apply
    byte_level: bool = False
    #: The registered point of the contract (``stella_conform.oracle.readings``) the mutation
    #: produces, when its cases can be read two ways; the oracle lists both.
    reading: str | None = None


def insert_at(draw: st.DrawFn, stream: Stream, line: Line, *, not_last: bool = False) -> int:
    """Insert ``line`` at a drawn place (before the last line when ``not_last``); its index."""
    hi = len(stream.lines) - (1 if not_last and stream.lines else 0)
    at = between(draw, 0, max(0, hi))
    stream.lines.insert(at, line)
    return at


def pick_known(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> Line | None:
    """A drawn line holding an event of a type the client knows; None when there is none."""
    indexes = stream.event_indexes(vocab)
    return stream.lines[choose(draw, indexes)] if indexes else None
