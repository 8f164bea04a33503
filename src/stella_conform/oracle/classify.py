"""Classifying a line that parsed as JSON: known, unrecognized or rejected, and the
points of :mod:`stella_conform.oracle.readings` it touches on the way.

Where the contract can be read two ways the default is reading A of a point;
``choices`` names the points where reading B is taken instead, and ``touched`` (when
given) collects the points a line reaches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stella_conform.oracle import prefilters
from stella_conform.oracle.outcomes import NO_CHOICES, Kind, LineOutcome
from stella_conform.oracle.parsing import integral_floats_as_integers
from stella_conform.oracle.serde_forms import reaches, serde_body
from stella_conform.schemas.fit import json_type_name
from stella_conform.schemas.prose import violation
from stella_conform.schemas.tagged_unions import beside_arm
from stella_conform.schemas.vocabulary import ArchivedShape, Vocabulary

_FLOATS = frozenset({"integral-float"})
_STAMP = frozenset({"ts-out-of-range"})


def _fits_relaxed(
    fits: Callable[[str, Any], bool], tag: str, body: dict[str, Any], stamped: bool
) -> list[tuple[frozenset[str], dict[str, Any]]]:
    """The ways ``body``, which does not fit, fits taking reading B at ``integral-float``
    (its integral floats read as integers), at ``ts-out-of-range`` (its stamp dropped), or
    at both where neither alone does (``"duration_ms":4200.0,"ts":-5``): ``(points, body)``
    each, fewest points first."""
    found: list[tuple[frozenset[str], dict[str, Any]]] = []
    whole = integral_floats_as_integers(body)
    floats = whole is not body
    if floats and fits(tag, whole):  # 1.0 where an integer is due
        found.append((_FLOATS, whole))
    if stamped:
        unstamped = {k: v for k, v in body.items() if k != "ts"}
        if fits(tag, unstamped):  # only the stamp is out of range
            found.append((_STAMP, unstamped))
        elif floats and not found:  # 1.0 where an integer is due and a bad stamp too
            unstamped = {k: v for k, v in whole.items() if k != "ts"}
            if fits(tag, unstamped):
                found.append((_FLOATS | _STAMP, unstamped))
    return found


def classify(
    line: int,
    value: Any,
    vocab: Vocabulary,
    terminated: bool = True,
    choices: frozenset[str] = NO_CHOICES,
    touched: set[str] | None = None,
) -> LineOutcome:
    """The outcome for a line that parsed as JSON (reading B at the points in ``choices``)."""
    if not isinstance(value, dict):
        if touched is not None:
            touched.add("non-object-line")
        what = f"line is JSON but not an object (got {json_type_name(value)})"
        if "non-object-line" in choices:
            return LineOutcome(line, Kind.UNKNOWN, raw=value, terminated=terminated, reason=what)
        return LineOutcome(line, Kind.REJECT, raw=value, terminated=terminated, reason=what)
    tag = value.get("type")
    if not isinstance(tag, str):
        why = (
            "missing 'type'"
            if "type" not in value
            else (f"non-string 'type' ({json_type_name(tag)})")
        )
        if touched is not None:
            touched.add("missing-or-non-string-type")
        if "missing-or-non-string-type" in choices:
            return LineOutcome(line, Kind.REJECT, raw=value, reason=why, terminated=terminated)
        return LineOutcome(
            line, Kind.UNKNOWN, event=value, raw=value, reason=why, terminated=terminated
        )
    entry = vocab.dispatch.get(tag)
    if entry is None:
        if vocab.learnt and tag in vocab.type_aliases:
            return _old_type_name(line, value, tag, vocab, terminated, choices, touched)
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    fast, alias, missing = entry
    plain = alias is None or alias.field in value or alias.legacy not in value
    if plain and (missing is None or missing in value) and fast(value):
        # the hot path: no legacy spelling, no archived shape, and the body fits
        outcome = LineOutcome(line, Kind.KNOWN, tag, value, value, None, terminated)
        if (touched is None and not choices and tag not in vocab.prose_constrained) or (
            prefilters.ENABLED and tag in vocab.pointless and tag not in _pair_holders(vocab)
        ):
            return outcome
        return _known_points(outcome, vocab, choices, touched)
    return _known_slowly(line, value, tag, vocab, terminated, choices, touched)


def _known_slowly(
    line: int,
    value: dict[str, Any],
    tag: str,
    vocab: Vocabulary,
    terminated: bool,
    choices: frozenset[str],
    touched: set[str] | None,
) -> LineOutcome:
    """A line of a known type that the fast check refused: a legacy spelling, an archived
    shape, a null stamp, or a body that does not fit (unless a chosen reading makes it)."""
    archived = vocab.archived_shape(tag, value)
    if archived is not None:
        return _archived(line, tag, value, terminated, archived, choices, touched)
    body = value
    if "ts" in value and value["ts"] is None:  # ts ?? null: a null stamp is no stamp
        if touched is not None:
            touched.add("ts-null")
        if "ts-null" in choices:  # the wire schema types ts as an integer
            return LineOutcome(
                line,
                Kind.REJECT,
                tag=tag,
                raw=value,
                terminated=terminated,
                reason=f"known type {tag!r} with a body that does not fit: 'ts' is null, "
                "and the wire schema types it as an integer",
            )
        body = {k: v for k, v in value.items() if k != "ts"}
    normalized = vocab.normalize(tag, body)
    misfit = None if vocab.fits(tag, normalized) else vocab.misfit(tag, normalized)
    stamped = "ts" in body
    if misfit is not None:
        for points, candidate in _fits_relaxed(vocab.fits, tag, normalized, stamped):
            if touched is not None:
                touched.update(points)
            if misfit is not None and points <= choices:
                misfit, normalized = None, candidate
    if misfit is not None:
        misfit, normalized = _serde_fit(vocab, tag, normalized, misfit, choices, touched)
    if misfit is not None and vocab.learnt:
        misfit, normalized = _learnt_fit(vocab, tag, normalized, stamped, misfit, choices, touched)
    if misfit is not None:
        return LineOutcome(
            line,
            Kind.REJECT,
            tag=tag,
            raw=value,
            terminated=terminated,
            reason=f"known type {tag!r} with a body that does not fit: {misfit}",
        )
    outcome = LineOutcome(
        line, Kind.KNOWN, tag=tag, event=normalized, raw=value, terminated=terminated
    )
    if (touched is None and not choices and tag not in vocab.prose_constrained) or (
        prefilters.ENABLED and tag in vocab.pointless and tag not in _pair_holders(vocab)
    ):
        return outcome
    return _known_points(outcome, vocab, choices, touched)


#: Per schema document (by id): the types whose bodies can hold a field an alias the
#: descriptions name is learnt for (``_pair_holders``).
_HOLDERS: dict[int, frozenset[str]] = {}


def _learnt_pairs(vocab: Vocabulary) -> list[tuple[str, str]]:
    """The (field, old name) pairs the schema's descriptions name (``learnt-alias``)."""
    return [(a.name, a.legacy) for a in vocab.learnt if a.kind == "field"]


def _pair_holders(vocab: Vocabulary) -> frozenset[str]:
    """The known types whose schema reaches an object that has a field the descriptions
    name an old name for: only a line of one can hold the field beside its old name."""
    if not vocab.learnt:
        return frozenset()
    key = id(vocab.root)
    if key not in _HOLDERS:
        wheres = {a.where for a in vocab.learnt if a.kind == "field"}
        _HOLDERS[key] = frozenset(
            tag
            for tag, member in vocab.members.items()
            if any(reaches(member, vocab.root, where) for where in wheres)
        )
    return _HOLDERS[key]


def _field_beside_learnt_alias(vocab: Vocabulary, tag: str, raw: Any) -> tuple[str, str] | None:
    """A field and the old name the schema's descriptions give it, both in one object of
    the event (``"verifier"`` and ``"judge"``): the first such pair, or ``None``."""
    pairs = _learnt_pairs(vocab)
    if not pairs or tag not in _pair_holders(vocab):
        return None
    stack = [raw]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for name, legacy in pairs:
                if name in item and legacy in item:
                    return name, legacy
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return None


def _serde_fit(
    vocab: Vocabulary,
    tag: str,
    normalized: dict[str, Any],
    misfit: str,
    choices: frozenset[str],
    touched: set[str] | None,
) -> tuple[str | None, dict[str, Any]]:
    """``(misfit, body)`` for a body that does not fit: it may fit as serde reads it, a
    struct written as an array or a unit variant as a one-key map (reading B of
    ``serde-forms``, what stella does; reading A keeps it an error)."""
    home = vocab.home(tag)
    read = serde_body(normalized, home.members[tag], home.root)
    if read is normalized or not vocab.fits(tag, read):
        return misfit, normalized
    if touched is not None:
        touched.add("serde-forms")
    if "serde-forms" in choices:
        return None, read
    return misfit, normalized


def _learnt_fit(
    vocab: Vocabulary,
    tag: str,
    normalized: dict[str, Any],
    stamped: bool,
    misfit: str,
    choices: frozenset[str],
    touched: set[str] | None,
) -> tuple[str | None, dict[str, Any]]:
    """``(misfit, body)`` for a body that does not fit, read by a vocabulary that learnt
    aliases: it may fit with an alias the schema names only in its descriptions (and, it
    may be, taking B at integral-float or ts-out-of-range too)."""
    tolerant = vocab.tolerant
    if tolerant is None or tag not in tolerant.members:
        return misfit, normalized
    ways = (
        [(NO_CHOICES, normalized)]
        if tolerant.fits(tag, normalized)
        else [
            (points, candidate)
            for points, candidate in _fits_relaxed(tolerant.fits, tag, normalized, stamped)
            if not vocab.fits(tag, candidate)  # that needs no alias: read above
        ]
    )
    if ways and touched is not None:
        touched.add("learnt-alias")
        touched.update(*(points for points, _ in ways))
    taken = [candidate for points, candidate in ways if points <= choices]
    if taken and "learnt-alias" in choices:
        misfit += (
            " (it fits only with an alias the wire schema's descriptions name, which "
            "a client of the schema's keywords does not know)"
        )
    elif taken:
        return None, taken[0]
    return misfit, normalized


def _old_type_name(
    line: int,
    value: dict[str, Any],
    tag: str,
    vocab: Vocabulary,
    terminated: bool,
    choices: frozenset[str],
    touched: set[str] | None,
) -> LineOutcome:
    """A line whose type is an old name the schema's descriptions keep as an alias
    (``judge_verdict`` for ``verdict``): the type it names today (reading A of
    ``learnt-alias``), or an unrecognized type (reading B: a client of the keywords)."""
    today = vocab.type_aliases[tag]
    tolerant = vocab.tolerant
    if today not in vocab.known or tolerant is None:
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    if touched is not None:
        touched.add("learnt-alias")
    if "learnt-alias" in choices:
        return LineOutcome(line, Kind.UNKNOWN, tag, value, value, None, terminated)
    read = classify(line, value, tolerant, terminated)
    if read.kind is Kind.KNOWN:
        return LineOutcome(line, Kind.KNOWN, today, read.event, value, None, terminated)
    return read


def _known_points(
    outcome: LineOutcome, vocab: Vocabulary, choices: frozenset[str], touched: set[str] | None
) -> LineOutcome:
    """Points a known event that fits can still touch: a field beside its alias, a key beside
    a tagged union's arm."""
    raw, tag = outcome.raw, str(outcome.tag)
    reason = None
    later = vocab.archived_today.get(tag)
    if later is not None and isinstance(raw, dict) and later.missing not in raw:
        if touched is not None:
            touched.add("shape-archived-today")
        if "shape-archived-today" in choices:  # read as today's vocabulary reads it
            return _archived(outcome.line, tag, raw, outcome.terminated, later, choices, touched)
    home = vocab.home(tag)  # a type the client knows from another stella is read as it wrote it
    alias = home.aliases.get(tag)
    if alias is not None and alias.field in raw and alias.legacy in raw:
        if touched is not None:
            touched.add("field-and-alias")
        if "field-and-alias" in choices:
            reason = f"{tag!r} carries both {alias.field!r} and its legacy alias {alias.legacy!r}"
    learnt = _field_beside_learnt_alias(vocab, tag, raw) if reason is None else None
    if learnt is not None:  # an alias the schema's descriptions name, as serde reads it too
        if touched is not None:
            touched.add("field-and-alias")
        if "field-and-alias" in choices:
            reason = f"an object carries both {learnt[0]!r} and its old name {learnt[1]!r}"
    if reason is None and tag in vocab.prose_constrained:
        broken = violation(vocab, tag, raw)
        if broken is not None:
            if touched is not None:
                touched.add("prose-constraint")
            if "prose-constraint" not in choices:  # reading A: the schema's words say MUST
                reason = broken
    if reason is None:
        beside = beside_arm(home, tag, raw)
        if beside is not None:
            if touched is not None:
                touched.add("extra-key-beside-arm")
            if "extra-key-beside-arm" in choices:
                reason = f"{tag!r}: {beside}"
    if reason is None:
        return outcome
    return LineOutcome(
        outcome.line,
        Kind.REJECT,
        tag=tag,
        raw=raw,
        terminated=outcome.terminated,
        reason=f"known type {tag!r} with a body that does not fit: {reason}",
    )


def _archived(
    line: int,
    tag: str,
    raw: Any,
    terminated: bool,
    shape: ArchivedShape,
    choices: frozenset[str],
    touched: set[str] | None,
) -> LineOutcome:
    """A known line in an archived shape: unrecognized (reading A of ``scopeless-stage``),
    or an error (its reading B)."""
    if touched is not None:
        touched.add("scopeless-stage")
    if "scopeless-stage" in choices:
        return LineOutcome(
            line,
            Kind.REJECT,
            tag=tag,
            raw=raw,
            terminated=terminated,
            reason=f"known type {tag!r} without required field {shape.missing!r}",
        )
    return LineOutcome(
        line,
        Kind.UNKNOWN,
        tag=tag,
        event=raw,
        raw=raw,
        terminated=terminated,
        reason=f"archived shape: {tag!r} without {shape.missing!r}",
    )
