"""Every mutation by id, in the order mutations apply, and applying a set of them.

The order is part of what is generated: a case's mutations draw one after another in the
order of :data:`MUTATIONS`, so reordering :data:`ORDER` (or a family's rows) changes every
generated case and the case cache's digest.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st

from stella_conform.generators.mutations.bodies import BODY_MUTATIONS, breakable
from stella_conform.generators.mutations.described import (
    DESCRIBED_MUTATIONS,
    described_applicable,
)
from stella_conform.generators.mutations.fields import FIELD_MUTATIONS
from stella_conform.generators.mutations.framing import FRAMING_MUTATIONS
from stella_conform.generators.mutations.json_text import JSON_TEXT_MUTATIONS
from stella_conform.generators.mutations.serde_forms import SERDE_MUTATIONS
from stella_conform.generators.mutations.stamps import STAMP_MUTATIONS
from stella_conform.generators.mutations.stream import Mutation, Stream
from stella_conform.generators.mutations.unknown_types import TYPE_MUTATIONS, near_misses
from stella_conform.schemas.vocabulary import Vocabulary

#: The structural mutations in the order they apply (byte-level ones keep their place among
#: themselves but follow every object-level one: :func:`_with_hazards`).
ORDER: tuple[str, ...] = (
    # the type field, unknown fields, line length, aliases, ts
    "unknown-type",
    "unknown-in-tool-pair",
    "type-missing",
    "type-non-string",
    "type-near-miss",
    "extra-fields",
    "extra-fields-nested",
    "extra-fields-borrowed",
    "extra-field-huge",
    "long-line-64k",
    "long-line-1m",
    "legacy-alias",
    "ts-removed",
    "ts-backwards",
    "ts-extreme",
    # bodies that do not fit, lines that are not JSON objects
    "bad-body-missing-field",
    "bad-body-wrong-type",
    "bad-body-null",
    "bad-body-wrong-nesting",
    "non-json-line",
    "not-object-line",
    # the registered readings: cases the contract lets a client read two ways
    "scopeless-stage",
    "field-and-alias",
    "ts-null",
    "ts-out-of-range",
    "unicode-whitespace",
    "negative-zero",
    "number-beyond-f64",
    "lone-surrogate",
    "deep-nesting",
    "duplicate-keys",
    "extra-key-beside-arm",
    "serde-forms",
    "value-read-as-other",
    "field-beside-learnt-alias",
    "old-type-name",
    "utf8-bom",
    # byte-level
    "blank-lines",
    "crlf",
    "no-trailing-newline",
    "torn-tail",
    "torn-then-newline",
)

FAMILIES: tuple[tuple[Mutation, ...], ...] = (
    TYPE_MUTATIONS,
    FIELD_MUTATIONS,
    STAMP_MUTATIONS,
    BODY_MUTATIONS,
    JSON_TEXT_MUTATIONS,
    FRAMING_MUTATIONS,
    SERDE_MUTATIONS,
    DESCRIBED_MUTATIONS,
)


def _registry() -> dict[str, Mutation]:
    """The structural mutations of every family, in :data:`ORDER`."""
    rows = [m for family in FAMILIES for m in family]
    by_id = {m.id: m for m in rows}
    if len(rows) != len(ORDER) or set(by_id) != set(ORDER):
        unordered = sorted(set(by_id) - set(ORDER))
        missing = sorted(set(ORDER) - set(by_id))
        raise AssertionError(
            f"ORDER names each mutation once: not in ORDER {unordered}, in no family {missing}"
        )
    return {mutation_id: by_id[mutation_id] for mutation_id in ORDER}


def applicable(mutation_id: str, vocab: Vocabulary) -> bool:
    """Whether the mutation can be made with the types the client knows.

    A client that knows only ``text`` and ``run_complete`` has no known type with a
    nested object, so no rule-4 case of the wrong-nesting kind exists for it: that
    mutation is left out of its cases instead of failing to generate.
    """
    if mutation_id in ("bad-body-missing-field", "bad-read-values"):
        return breakable(vocab, lambda types: True)
    if mutation_id == "bad-body-wrong-type":
        return breakable(vocab, lambda types: bool(types))
    if mutation_id in ("bad-body-null", "bad-edge-values"):
        return breakable(vocab, lambda types: "null" not in (types or ["null"]))
    if mutation_id == "bad-body-wrong-nesting":
        return breakable(vocab, lambda types: types == ["object"])
    if mutation_id == "type-near-miss":
        return bool(near_misses(vocab))
    return described_applicable(mutation_id, vocab)


def _with_hazards() -> dict[str, Mutation]:
    """The structural mutations (:data:`ORDER`), then the content hazards.

    The hazards' modules build on this package's model, so they are imported here, once the
    package's modules are loaded, rather than at the top.
    """
    from stella_conform.generators.edges import EDGES
    from stella_conform.generators.hazards import HAZARDS
    from stella_conform.generators.seams import SEAMS
    from stella_conform.generators.text import TEXT

    every = [*_registry().values(), *HAZARDS, *TEXT, *EDGES, *SEAMS]
    # object-level first (structure, then content), byte-level last, each in registry order
    ordered = [m for m in every if not m.byte_level] + [m for m in every if m.byte_level]
    return {m.id: m for m in ordered}


MUTATIONS: Mapping[str, Mutation] = _with_hazards()


def _rejecting() -> frozenset[str]:
    from stella_conform.generators.edges import EDGES_REJECTING
    from stella_conform.generators.hazards import HAZARDS_REJECTING
    from stella_conform.generators.seams import SEAMS_REJECTING
    from stella_conform.generators.text import TEXT_REJECTING

    return HAZARDS_REJECTING | TEXT_REJECTING | EDGES_REJECTING | SEAMS_REJECTING


#: Mutations after which a correct client must reject the stream.
REJECTING = (
    frozenset(
        {
            "bad-body-missing-field",
            "bad-body-wrong-type",
            "bad-body-null",
            "bad-body-wrong-nesting",
            "non-json-line",
            "not-object-line",
        }
    )
    | _rejecting()
)


def canonical_order(ids: list[str] | tuple[str, ...]) -> list[str]:
    """Mutation ids in application order (object-level first, torn tail last)."""
    order = list(MUTATIONS)
    unknown = [i for i in ids if i not in MUTATIONS]
    if unknown:
        raise ValueError(f"unknown mutation id(s): {', '.join(unknown)}")
    return sorted(dict.fromkeys(ids), key=order.index)


def apply_mutations(
    draw: st.DrawFn, stream: Stream, ids: list[str] | tuple[str, ...], vocab: Vocabulary
) -> Stream:
    for mutation_id in canonical_order(ids):
        MUTATIONS[mutation_id].apply(draw, stream, vocab)
    return stream
