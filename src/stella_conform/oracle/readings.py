"""The register of readings: points where the contract can honestly be read two ways.

The contract is prose, a TypeScript sample, a wire schema and stella's own
behaviour, and at a few points they disagree.  A client that follows any of
them is conforming there, so the kit never fails it for that choice.  Each
point has a stable id (used in fixture expectations, generated cases, reports
and ``corpus diff``), the kit's default reading (A) and the other one (B).

The reference decoder takes a set of ids whose reading B it follows (all A by
default) and reports which points a stream *touched*; :func:`read_stream`
decodes the stream under A, then under B for every touched point (and the
combinations a stream reaches), so the grader knows every conforming reading
of a case.  ``docs/contract-readings.md`` gives the contract's words for each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from stella_conform.oracle import client_points

if TYPE_CHECKING:
    from stella_conform.oracle.decoder import Decoded, LineOutcome, RunSummary
    from stella_conform.oracle.envelope import EnvelopeReading
    from stella_conform.schemas.vocabulary import Vocabulary


@dataclass(frozen=True)
class Point:
    """One ambiguous point of the contract."""

    id: str
    title: str
    #: The kit's default reading (A).
    default: str
    #: The other reasonable reading (B).
    alternative: str
    #: What stella's own stream reader does (for the register; the kit never grades by it).
    stella: str


POINTS: tuple[Point, ...] = (
    Point(
        "prose-constraint",
        "a body that breaks a constraint its wire schema states only in prose",
        "an error: the schema's description says MUST",
        "accepted: the schema's keywords allow it (what a validating client decides)",
        "A: enforces it",
    ),
    Point(
        "utf8-bom",
        "a UTF-8 byte order mark before the first line",
        "the first line is not JSON (strict parsers refuse the BOM)",
        "the BOM is ignored (RFC 8259 lets a parser do so)",
        "A: it rejects line 1 (its whole-input trim is str::trim, and U+FEFF is no whitespace)",
    ),
    Point(
        "non-object-line",
        'a line that is JSON but not an object ([1,2,3], 42, "x", null)',
        "an error: each line is a JSON object",
        "unrecognized: the sample's typeof event.type check skips it",
        "A: rejects the line",
    ),
    Point(
        "missing-or-non-string-type",
        "an object whose type is missing or not a string",
        "unrecognized: the sample's typeof event.type !== 'string' branch skips it",
        "an error: the line carries no type to dispatch on",
        "B: rejects the line, on purpose",
    ),
    Point(
        "scopeless-stage",
        "a stage event without scope (recorded before scope existed)",
        "unrecognized: the wire schema says it decodes as unrecognized",
        "an error: a known type whose required field is missing",
        "B: rejects the line",
    ),
    Point(
        "shape-archived-today",
        "a body an older stella wrote in its own shape, which today's vocabulary reads as an "
        "archived shape (a stage without scope, in a stream of stella-older)",
        "known: the stella that wrote it had no such field (its stages were the engine's)",
        "as today's vocabulary reads it: an archived shape (unrecognized, or an error where "
        "scopeless-stage takes B)",
        "the older stella: A; today's stella: B (it rejects a stage without scope)",
    ),
    Point(
        "field-and-alias",
        "a field and its legacy alias on one line (text with text and delta), or a field and "
        "the old name the wire schema's descriptions give it in one object (verifier and judge)",
        "accepted: the self-describing name wins",
        "an error: the same field twice",
        "B: rejects the line as a duplicate field",
    ),
    Point(
        "serde-forms",
        "a struct written as a JSON array, or a unit variant as a one-key map, inside a known "
        'event: "call":["c1","read",{}], "scope":{"run":null} (the other forms serde reads)',
        "an error: the wire schema describes an object (a string), and the body does not fit",
        "accepted: read as serde reads it (a struct's fields in declaration order; the variant "
        "the one key names)",
        "B: its serde-derived types read both forms",
    ),
    Point(
        "learnt-alias",
        "a line that fits its type only with what the wire schema says in its descriptions: "
        "an alias (a field, a value or an event type that shipped under an older name), or a "
        "value an enum does not list, which its description reads as 'other'",
        "decoded: 'if a field is renamed, the old name still works as an alias'; an "
        "unrecognized token 'reads as other'",
        "a client that knows only the schema's keywords: an error (an old type name: unrecognized)",
        "A for a field or a value; an old type name is read as today's type (a body that does "
        "not fit rejects) but, not among its known tags, counted as unrecognized",
    ),
    Point(
        "ts-out-of-range",
        "a ts on a known type that is negative, fractional, a string or above u64",
        "an error: ts is a u64 in the wire schema",
        "accepted: ts is a sink stamp, not part of the event, and is ignored",
        "B: the stream reader ignores ts entirely (its journal reader takes A)",
    ),
    Point(
        "ts-null",
        "ts: null on a known type",
        "the absent stamp: read ts as ts ?? null",
        "an error: the wire schema types ts as an integer (a client that validates against it)",
        "A: both of its readers accept it",
    ),
    Point(
        "torn-then-newline",
        "an unparseable last non-blank line followed by a newline",
        "torn and tolerated: the final line is the last non-blank one",
        "an error: a line ended by a newline was written whole, so it is corrupt",
        "A: drops the last non-blank line when it fails",
    ),
    Point(
        "unicode-whitespace",
        "Unicode whitespace other than JSON's four (NBSP, U+2028, form feed) around a line",
        "not JSON: JSON whitespace is space, tab, CR and LF",
        "trimmed: a line of only such whitespace is blank",
        "B: trims Unicode whitespace from every line",
    ),
    Point(
        "integral-float",
        "an integral number written with a fraction or an exponent (1.0, 1e3) where an "
        "integer is due in the stream or an envelope (a ts, a count, schema_version; not "
        "the trace journal, whose one typed source, its Rust types, takes A)",
        "an error: the literal is a float (serde_json, Python's json), not an integer",
        "the integer it equals: JSON Schema's integer is a value test, JSON.parse cannot "
        "tell 1.0 from 1, and the contract's jq compares .schema_version == 1 by value",
        "A: serde_json refuses a float where it reads a u64",
    ),
    Point(
        "negative-zero",
        "-0 in an integer field",
        "an integer: -0 is the number zero",
        "an error: -0 is a float to serde and does not fit an integer field",
        "B: rejects the line",
    ),
    Point(
        "number-beyond-f64",
        "a number beyond the range of a 64-bit float (1e400)",
        "JSON: the grammar has no limit (JSON.parse reads Infinity)",
        "not JSON: RFC 8259 lets a parser limit the range",
        "B: serde_json refuses the line",
    ),
    Point(
        "lone-surrogate",
        'a lone surrogate escape in a string ("\\ud800")',
        "JSON: the grammar allows any \\u escape (JSON.parse, Python)",
        "not JSON: the string is not Unicode",
        "B: serde_json refuses the line",
    ),
    Point(
        "deep-nesting",
        "nesting of 128 levels or more (inside an unrecognized event)",
        "JSON: the grammar has no depth limit",
        "not JSON: RFC 8259 lets a parser limit the depth",
        "B: serde_json refuses 128 levels (127 parse)",
    ),
    Point(
        "duplicate-keys",
        "a key twice in one object of a known event",
        "the last one wins (JSON.parse, Python, Go)",
        "an error: the same field twice",
        "A: the last one wins (it parses each line into a serde_json Value first)",
    ),
    Point(
        "unknown-count",
        "the count of unrecognized events, where a type name occurs twice (or a line has none)",
        "occurrences: every unrecognized event counts",
        "distinct type names: 'count the unrecognized event types'",
        "its decoder tracks the list of known type tags; it counts no events for a client",
    ),
    Point(
        "tokens-without-usage",
        "the token totals of an envelope whose events hold no step_usage",
        "0: the sum of no step_usage events",
        "null: unknown, as no event reported any",
        "the envelope carries no token keys; its readers sum step_usage",
    ),
    Point(
        "tokens-not-read",
        "the token totals of an envelope whose step_usage events the reader does not read "
        "(it claims not to read events, or knows no step_usage, or events is absent or null)",
        "null: nothing was read to count",
        "0: none counted (the contract's own jq reads a count it lacks as 0: .revisions // 0)",
        "the envelope carries no token keys; its readers sum step_usage",
    ),
    Point(
        "after-terminator",
        "lines after run_complete (more events, a body that does not fit, a corrupt line)",
        "read: every line follows the rules, so a bad body after run_complete is an error",
        "not read: 'Match on run_complete to know that nothing more is coming'; the client "
        "stops there",
        "A: it reads the whole input",
    ),
    Point(
        "elapsed-clamp",
        "the elapsed time of a run whose ts goes backwards ('Clamp a negative time "
        "difference to zero')",
        "each step's difference clamped: the forward steps between stamps, summed",
        "the whole run's difference clamped: the last stamp less the first, at least 0",
        "its stream reader computes no elapsed time",
    ),
    Point(
        "extra-key-beside-arm",
        'a key beside the single key of a tagged-union object ({"ok":{...},"x":1})',
        "ignored: rule 5, unknown fields are ignored",
        "an error: the wrapper is closed (additionalProperties: false in the wire schema)",
        "B: rejects the line",
    ),
)
BY_ID: Mapping[str, Point] = {p.id: p for p in POINTS}
IDS = frozenset(BY_ID)

#: Points that are edge values of the JSON grammar, detected from a parsed line.
JSON_EDGES = ("negative-zero", "number-beyond-f64", "lone-surrogate", "deep-nesting")

#: Most decodes one stream may cost when the oracle follows its readings.
MAX_READINGS = 16


def label(taken: Iterable[str]) -> str:
    """The id of a reading that takes B at several points: ids joined by ``+``, sorted."""
    return "+".join(sorted(taken))


def split_label(reading: str) -> frozenset[str]:
    return frozenset(p for p in reading.split("+") if p)


@dataclass(frozen=True)
class Alternative:
    """The oracle's reading of a stream when B is taken at the points in ``taken``."""

    taken: frozenset[str]
    outcomes: list[LineOutcome] = field(repr=False)
    summary: RunSummary
    #: For a document (an envelope): the reference reader's reading of it under ``taken``.
    document: EnvelopeReading | None = None
    #: The points this reading's decode reached (``None``: not recorded). A point it did not
    #: reach is moot for a client taking it (read past, or never reached: a rejection first).
    touched: frozenset[str] | None = None

    @property
    def reading(self) -> str:
        return label(self.taken)

    @property
    def verdict(self) -> str:
        return self.document.verdict if self.document is not None else self.summary.verdict


@dataclass(frozen=True)
class Readings:
    """Every conforming reading of one stream: the default, then the alternatives."""

    default: Alternative
    alternatives: tuple[Alternative, ...]
    #: Points the stream touches (under any reading).
    touched: frozenset[str]

    @property
    def all(self) -> tuple[Alternative, ...]:
        return (self.default, *self.alternatives)


def _key(outcomes: list[LineOutcome], summary: RunSummary) -> str:
    doc = summary.to_json()
    doc.pop("reason", None)
    lines = [(o.line, o.kind.value, o.tag) for o in outcomes]
    return json.dumps([doc, lines], sort_keys=True, default=str)


def careful_default(data: bytes, vocab: Vocabulary | None = None) -> tuple[Decoded, set[str]]:
    """The default reading of a stream, and the points of this register it touches."""
    from stella_conform.oracle.decoder import decode_all

    touched: set[str] = set()
    return decode_all(data, vocab, choices=frozenset(), touched=touched), touched


def read_stream(
    source: bytes | IO[bytes] | Iterable[bytes],
    vocab: Vocabulary | None = None,
    *,
    decoded: tuple[Decoded, Collection[str]] | None = None,
) -> Readings:
    """Decode ``source`` under the default reading and every reading B it reaches.

    An alternative is kept only when it changes what a client does (verdict, a
    line's outcome, or the summary); readings that agree collapse into one.
    Combinations are explored breadth first: taking B at one point can reveal
    another (reading past a line that A rejects), up to :data:`MAX_READINGS`.

    ``decoded``: the default reading and the points it touched, when the caller has
    already decoded the stream carefully (:func:`careful_default`): a generated case is
    decoded once, and only a stream that touches a point is decoded again.
    """
    from stella_conform.oracle.decoder import decode_all

    data = bytes(source if isinstance(source, (bytes, bytearray)) else b"".join(source))
    if decoded is None:
        first, touched = careful_default(data, vocab)
    else:
        first, touched = decoded[0], set(decoded[1])
    # each decode once (by the stream's length, as a client stopping at run_complete reads
    # a prefix of it, and the readings the decoder follows): a reading that differs from
    # another only where a client uses the outcomes is not decoded again
    decodes: dict[tuple[int, frozenset[str]], tuple[Decoded, frozenset[str]]] = {
        (len(data), frozenset()): (first, frozenset(touched))
    }

    def decode_once(
        stream: bytes, vocab: Vocabulary | None, *, choices: frozenset[str], touched: set[str]
    ) -> Decoded:
        key = (len(stream), choices)
        if key not in decodes:
            seen: set[str] = set()
            decodes[key] = (
                decode_all(stream, vocab, choices=choices, touched=seen),
                frozenset(seen),
            )
        again, seen_there = decodes[key]
        touched.update(seen_there)
        return again

    # the points of a client's use of the outcomes (where it stops, how it clocks the run),
    # which the decoder does not note: found over its outcomes
    touched = set(touched)
    first = client_points.follow(data, vocab, frozenset(), first, touched, decode_once)
    default = Alternative(frozenset(), first.outcomes, first.summary, touched=frozenset(touched))
    if not touched:
        return Readings(default, (), frozenset())
    all_touched = set(touched)

    def read_with(taken: frozenset[str], more: set[str]) -> tuple[object, Any]:
        again = client_points.decode_following(data, vocab, taken, more, decode_once)
        all_touched.update(more)
        return _key(again.outcomes, again.summary), again

    found = [
        Alternative(taken, again.outcomes, again.summary, touched=more)
        for taken, more, again in _explore(touched, _key(first.outcomes, first.summary), read_with)
    ]
    return Readings(default, tuple(found), frozenset(all_touched))


def _explore(
    touched: Collection[str],
    first_key: object,
    read: Callable[[frozenset[str], set[str]], tuple[object, Any]],
) -> Iterator[tuple[frozenset[str], frozenset[str], Any]]:
    """Every reading that differs from the ones before it, breadth first over the sets of
    points taken: a point a reading touches is tried on top of it. ``read(taken, more)``
    reads once with ``taken`` (adding the points it touched to ``more``) and gives a key
    that is equal for readings that agree; at most :data:`MAX_READINGS` reads in all."""
    seen_keys = {first_key}
    seen_sets: set[frozenset[str]] = {frozenset()}
    queue = [frozenset({p}) for p in sorted(touched)]
    reads = 1
    while queue and reads < MAX_READINGS:
        taken = queue.pop(0)
        if taken in seen_sets:
            continue
        seen_sets.add(taken)
        more: set[str] = set()
        key, value = read(taken, more)
        reads += 1
        if key not in seen_keys:
            seen_keys.add(key)
            yield taken, frozenset(more), value
        queue.extend(taken | {p} for p in sorted(more - taken))


def line_readings(number: int, value: Any, vocab: Vocabulary) -> list[str]:
    """The readings under which one parsed line that the default reading rejects fits its
    type (or is unrecognized): each a label, fewest points first, none that holds another;
    empty when every reading rejects it. What ``validate`` says beside a problem, line by
    line (a stream's readings are :func:`read_stream`'s)."""
    from stella_conform.oracle.decoder import Kind, classify

    touched: set[str] = set()
    if classify(number, value, vocab, touched=touched).kind is not Kind.REJECT or not touched:
        return []
    fits: list[frozenset[str]] = []

    def read(taken: frozenset[str], more: set[str]) -> tuple[object, None]:
        outcome = classify(number, value, vocab, choices=taken, touched=more)
        if outcome.kind is not Kind.REJECT and not any(f <= taken for f in fits):
            fits.append(taken)
        return object(), None  # every set is read (a line is cheap): no two collapse

    for _ in _explore(touched, None, read):
        pass
    return [label(f) for f in fits]


@dataclass(frozen=True)
class TextReadings:
    """The readings under which a line the default reading does not parse as JSON is read
    (a BOM before line 1, Unicode whitespace around a line): each a label, fewest points
    first, none that holds another."""

    #: The readings under which it parses (or is blank).
    parses: tuple[str, ...] = ()
    #: Whether it is blank there (only whitespace, read as such, and perhaps a BOM).
    blank: bool = False
    #: The readings under which it parses and is not rejected (known, unrecognized, blank).
    fits: tuple[str, ...] = ()
    #: Where it parses but fits under no reading: why the first reading that parses it
    #: rejects it.
    reason: str | None = None


def text_readings(number: int, content: bytes, vocab: Vocabulary | None) -> TextReadings:
    """The readings under which line ``number`` (``content``, without its newline), which
    the default reading does not parse as JSON, is JSON or blank: what ``validate`` says
    beside such a problem. The reference decoder reads the line, alone, under each reading
    (as the last line, unterminated: a line that does not parse is then torn under every
    reading, as no ``torn-then-newline`` is reached); line 1 keeps its number, as the
    ``utf8-bom`` point concerns line 1 only."""
    from stella_conform.oracle.decoder import Kind, decode

    stream = content if number == 1 else b"\n" + content

    def last(taken: frozenset[str], more: set[str]) -> LineOutcome:
        *_, outcome = decode(stream, vocab, choices=taken, touched=more)
        return outcome

    touched: set[str] = set()
    if last(frozenset(), touched).kind is not Kind.TORN or not touched:
        return TextReadings()
    parses: list[frozenset[str]] = []
    fits: list[frozenset[str]] = []
    blank = False
    reasons: list[str] = []

    def read(taken: frozenset[str], more: set[str]) -> tuple[object, None]:
        nonlocal blank
        outcome = last(taken, more)
        if outcome.kind is Kind.TORN:
            return object(), None
        if not any(p <= taken for p in parses):
            parses.append(taken)
            blank = blank or outcome.kind is Kind.BLANK
        if outcome.kind is Kind.REJECT:
            reasons.append(str(outcome.reason))
        elif not any(f <= taken for f in fits):
            fits.append(taken)
        return object(), None  # every set is read (a line is cheap): no two collapse

    for _ in _explore(touched, None, read):
        pass
    return TextReadings(
        tuple(label(p) for p in parses),
        blank,
        tuple(label(f) for f in fits),
        None if fits or not reasons else reasons[0],
    )


@dataclass(frozen=True)
class SummaryReading:
    """Another conforming reading of a stream read without holding it: what ``decode``
    prints for a stream of any length (its line outcomes are not kept)."""

    taken: frozenset[str]
    summary: RunSummary

    @property
    def reading(self) -> str:
        return label(self.taken)


def summary_readings(
    lines: Callable[[], Iterable[bytes]], vocab: Vocabulary | None, touched: Collection[str]
) -> list[SummaryReading]:
    """The other conforming readings of the stream ``lines()`` yields (each call reads it
    again from the start), given the points its default reading touched.

    :func:`read_stream` for a stream of any size: each reading is decoded in one pass and
    only its summary kept (readings that agree collapse by a digest of their outcomes).
    The points of :mod:`~stella_conform.oracle.client_points`, which the decoder does not
    note, are looked for in the default reading's pass, made only when the stream's bytes
    may touch one (:func:`~stella_conform.oracle.client_points.may_touch`) or another
    point is touched.
    """
    import hashlib

    from stella_conform.oracle.decoder import RunFold, decode

    def digest_of(choices: frozenset[str], more: set[str]) -> tuple[str, RunSummary]:
        plain = choices - client_points.CLIENT_POINTS
        fold = RunFold(
            vocab.turn_boundaries if vocab is not None else "turn_complete",
            bounded=True,  # flat memory, as decode's own fold
            choices=plain,
            touched=more,
        )
        clock = client_points.WholeRun()
        digest = hashlib.sha256()
        for outcome in _read_until_stopped(decode(lines(), vocab, choices=plain, touched=more)):
            if outcome is None:  # a line after run_complete
                more.add(client_points.AFTER_TERMINATOR)
                if client_points.AFTER_TERMINATOR in choices:
                    break
                continue
            fold.feed(outcome)
            clock.feed(outcome)
            digest.update(f"{outcome.line}:{outcome.kind.value}:{outcome.tag}\n".encode())
        summary = fold.finish()
        if clock.elapsed_ms != summary.elapsed_ms:
            more.add(client_points.ELAPSED_CLAMP)
            if client_points.ELAPSED_CLAMP in choices:
                summary.elapsed_ms = clock.elapsed_ms
        doc = summary.to_json()
        doc.pop("reason", None)
        digest.update(json.dumps(doc, sort_keys=True, default=str).encode())
        return digest.hexdigest(), summary

    if not touched and not client_points.may_touch(lines()):
        return []
    reached = set(touched)
    first_key = digest_of(frozenset(), reached)[0]
    if not reached:
        return []
    return [
        SummaryReading(taken, summary)
        for taken, _more, summary in _explore(reached, first_key, digest_of)
    ]


def _read_until_stopped(outcomes: Iterable[LineOutcome]) -> Iterator[LineOutcome | None]:
    """``outcomes``, with ``None`` before the first line other than a blank one after the
    first ``run_complete`` (where a client stopping there stops); the blank lines between
    come after the ``None``, as that client never reads them either."""
    from stella_conform.oracle.decoder import Kind

    ended, marked = False, False
    blanks: list[LineOutcome] = []
    for outcome in outcomes:
        if ended and not marked:
            if outcome.kind is Kind.BLANK:
                blanks.append(outcome)
                continue
            marked = True
            yield None
            yield from blanks
        yield outcome
        if outcome.kind is Kind.KNOWN and outcome.tag == client_points.TERMINATOR:
            ended = True
    if not marked:
        yield from blanks


def read_envelope_readings(
    data: bytes,
    command: str,
    vocab: Vocabulary | None = None,
    reads: Collection[str] | None = None,
) -> tuple[Alternative, ...]:
    """The other conforming readings of an envelope: its events follow the stream's points."""
    from stella_conform.oracle.decoder import RunSummary
    from stella_conform.oracle.envelope import read_envelope

    touched: set[str] = set()
    default = read_envelope(data, command, vocab, reads, touched=touched)
    if not touched:
        return ()
    seen = {json.dumps(default.to_json(), sort_keys=True, default=str)}
    found: list[Alternative] = []
    queue = [frozenset({p}) for p in sorted(touched)]
    tried: set[frozenset[str]] = set()
    while queue and len(tried) < MAX_READINGS:
        taken = queue.pop(0)
        if taken in tried:
            continue
        tried.add(taken)
        more: set[str] = set()
        reading = read_envelope(data, command, vocab, reads, choices=taken, touched=more)
        key = json.dumps(reading.to_json(), sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            found.append(Alternative(taken, [], RunSummary(), reading, frozenset(more)))
        queue.extend(taken | {p} for p in sorted(more - taken))
    return tuple(found)


def envelope_also_conforming(
    data: bytes, command: str, vocab: Vocabulary | None = None
) -> list[dict[str, Any]]:
    """The ``also_conforming`` entries of an envelope fixture's expectation, from the oracle:
    per other reading, its verdict and every key whose value differs from the default's."""
    from stella_conform.oracle.envelope import read_envelope

    base = read_envelope(data, command, vocab).to_json()
    out = []
    for alt in read_envelope_readings(data, command, vocab):
        assert alt.document is not None
        doc = alt.document.to_json()
        entry: dict[str, Any] = {"reading": alt.reading, "verdict": doc["verdict"]}
        entry.update({k: v for k, v in doc.items() if v != base.get(k) and k not in entry})
        out.append(entry)
    return out


def also_conforming(readings: Readings) -> list[dict[str, Any]]:
    """The ``also_conforming`` entries of a fixture expectation, from the oracle."""
    from stella_conform.oracle.corpus import COMPARED

    out = []
    base = readings.default.summary.to_json()
    for alt in readings.alternatives:
        doc = alt.summary.to_json()
        entry: dict[str, Any] = {
            "reading": alt.reading,
            "verdict": doc["verdict"],
            "rejected_line": doc["rejected_line"],
        }
        for key in COMPARED:
            if key in doc and doc[key] != base.get(key) and key not in entry:
                entry[key] = doc[key]
        out.append(entry)
    return out
