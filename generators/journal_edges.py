"""Edge values in a trace journal's fields, for the ``trace`` profile's reader checks.

A journal line is an envelope (``seq``, ``at``, ``session``, ``turn``) flattened together
with a body tagged by ``event``; ``schemas/trace.schema.json`` types both.  The cells of
:mod:`stella_conform.generators.edges` apply to its fields as to a stream's: the
journal's readers are Rust (serde: ``u64``, ``u32``) and whatever a consumer writes, so
``2^64 - 1`` in ``seq``, ``null`` where a model may be unknown, ``"x12"`` or ``-1`` where
a count is due are the values their habits get wrong.  Two reader variants of
:func:`~stella_conform.generators.journals.journal_cases` write them:

* ``journal-edge-values``: one valid cell in every field of its class, on every line
  that has such a field (a change the line's schema refuses is not made);
* ``journal-bad-edge-values``: one bad cell in one field of one line, which the
  reference journal reader then rejects.

:data:`JOURNAL_CELLS` are graded in every run, as strata of ``J.bad-body-rejected``
(:data:`JOURNAL_STRATA`); :func:`journal_cells_in` finds them in a parsed line for the
reach audit.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.edges import (
    ABSENT,
    BAD_CELLS,
    VALID_CELLS,
    Cell,
    Field,
    held_cells,
    walk,
    write,
)
from stella_conform.generators.engine.picks import between, choose_at
from stella_conform.generators.mutations.stream import json_copy
from stella_conform.oracle.journal import EVENTS, misfit
from stella_conform.schemas.vocabulary import load_schema

JOURNAL_VARIANTS = ("journal-edge-values", "journal-bad-edge-values")

#: The cells a journal is graded on in every run: the extremes of its u64 and u32 fields,
#: "" and null where they fit, and what a lax reader coerces where a count is due.
JOURNAL_CELLS = (
    "edge.string-empty",
    "edge.null",
    "edge.u64-max",
    "edge.u32-max",
    "bad-value.non-numeric-string",
    "bad-value.negative-unsigned",
    "bad-value.beyond-u64",
    "bad-value.boolean-number",
)


def _strata(cells: tuple[Cell, ...]) -> tuple[Mapping[str, int], ...]:
    return tuple({"edge-cell": k} for k, c in enumerate(cells) if k and c.id in JOURNAL_CELLS)


#: Per journal variant, the strata besides its simplest journal.
JOURNAL_STRATA: Mapping[str, tuple[Mapping[str, int], ...]] = {
    "journal-edge-values": _strata(VALID_CELLS),
    "journal-bad-edge-values": _strata(BAD_CELLS),
}


@cache
def journal_fields() -> tuple[Field, ...]:
    """The envelope's fields (tag ``""``: every line) and each recognized body's."""
    root = load_schema("trace.schema.json")
    envelope = [f for f in walk(root, "", root["$defs"]["Envelope"]) if f.path != ("event",)]
    bodies = [
        f for tag in EVENTS if tag in root["$defs"] for f in walk(root, tag, root["$defs"][tag])
    ]
    return tuple(envelope + bodies)


def _own(entry: Mapping[str, Any]) -> list[Field]:
    tag = entry.get("event")
    return [f for f in journal_fields() if f.tag in ("", tag)]


def _fits(entry: Mapping[str, Any]) -> bool:
    tag = entry.get("event")
    return isinstance(tag, str) and tag in EVENTS and misfit(tag, dict(entry)) is None


def journal_cells_in(obj: Mapping[str, Any]) -> frozenset[str]:
    """The cells a parsed journal line of a recognized event holds (valid where it fits)."""
    tag = obj.get("event")
    if not isinstance(tag, str) or tag not in EVENTS:
        return frozenset()
    return frozenset(held_cells(obj, _own(obj), _fits(obj)))


def _ordinary(f: Field) -> Any:
    """A value of the field's class, written before its edge where the field is optional."""
    if f.boolean:
        return True
    if f.integer:
        return 7
    if f.number:
        return 0.5
    return "x" if f.string else None


def edge_entries(draw: st.DrawFn, entries: list[dict[str, Any]], variant: str) -> None:
    """Write the variant's cell in the journal's entries (numbered, not yet spelled)."""
    if variant == "journal-edge-values":
        cell = choose_at(draw, "edge-cell", VALID_CELLS)
        for entry in entries:
            for f in _own(entry):
                if not cell.holds(f):
                    continue
                before = json_copy(entry)
                key = f.path[-1]
                if cell.value is not ABSENT and len(f.path) == 1 and key not in entry:
                    entry[key] = _ordinary(f)
                if not (write(entry, f, cell.value) and _fits(entry)):
                    entry.clear()
                    entry.update(before)
        return
    cell = choose_at(draw, "edge-cell", BAD_CELLS)
    first = choose_at(draw, "edge-field", range(64))
    places = [
        (i, f)
        for i, entry in enumerate(entries)
        for f in _own(entry)
        if cell.holds(f) and len(f.path) == 1 and f.path[0] in entry
    ]
    if not places:  # no such field: a required envelope field of the wrong type
        places = [(i, f) for i, e in enumerate(entries) for f in _own(e) if f.path == ("seq",)]
        cell = Cell(cell.id, cell.what, cell.holds, "12")
    for attempt in range(len(places)):
        index, f = places[(first + attempt) % len(places)]
        entry = dict(entries[index])
        if write(entry, f, cell.value) and not _fits(entry):
            entries[index] = entry
            return
    entries.insert(between(draw, 0, len(entries) - 1), {"seq": "12", "event": "turn_start"})


__all__ = [
    "JOURNAL_CELLS",
    "JOURNAL_STRATA",
    "JOURNAL_VARIANTS",
    "edge_entries",
    "journal_cells_in",
    "journal_fields",
]
