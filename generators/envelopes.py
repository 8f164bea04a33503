"""Hypothesis strategies for stella's JSON envelopes: one *variant* per thing to get right.

An :class:`EnvelopeCase` is the document's bytes plus the command that printed
it (a reader knows which command it ran; the query envelope and the turn
envelope differ).  The expected reading is never stored here: the grader asks
:func:`stella_conform.oracle.envelope.read_envelope`.

Variants, each varying one thing on shapes chosen so that one reader flaw
trips one check:

``raw``, ``pipeline``
    success shapes of the raw step loop and of a ``--pipeline`` run;
``failure``, ``preflight``
    a raw or pipeline failure (every key kept, ``null`` where there is no
    value) and the four-key pre-flight error envelope;
``extra-keys``
    keys the reader has never seen, at the top and nested, on raw and query
    envelopes;
``schema-version``
    a version other than 1 (or not a number, or missing) on any shape;
``files-touched``
    a raw run with file-touch records one level in;
``events-unknown``, ``events-bad-body``
    the events array carrying unrecognized types, or a known type whose body
    does not fit;
``query``
    a query command's list report (``rows``) or object report;
``usage-values``
    a raw or pipeline success whose ``step_usage`` events hold token counts and
    durations above 2^53 (a double cannot hold them: the sum a reader reports must be
    the exact one), and whose ``cost_usd`` is written ``2.5E-1`` or ``1e-2``;
``events-bad-values``
    a raw success whose events hold a bad value in a field a reader reads:
    ``"input_tokens":"1200"``, ``null``, ``-1``, ``1.5``, ``true``, ``""`` or a count
    beyond u64 in a ``step_usage`` (a known type whose body does not fit: the envelope
    is an error, never a run with fewer tokens).

Every document is compact, pretty-printed, or spelled another way JSON allows (any
whitespace between tokens, CR and LF included; keys in another order; ASCII and
non-ASCII escaped, ``\\/``): whitespace, layout and key order are not part of the
contract.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from stella_conform.generators.alphabets import strings
from stella_conform.generators.edges import ENVELOPE_VARIANTS
from stella_conform.generators.engine.picks import index_at, option_at, set_at, text_at
from stella_conform.generators.events import MODELS, prose, strategies_for
from stella_conform.generators.hazards import (
    HARD_TEXTS,
    KEY_ORDERS,
    TWO_53,
    Spelling,
    number_spellings,
    spell_number,
    string_writer,
)
from stella_conform.generators.mutations import MUTATIONS, Stream
from stella_conform.generators.runs import Run, runs
from stella_conform.oracle.decoder import decode_all
from stella_conform.schemas.vocabulary import Vocabulary

VARIANTS = (
    "raw",
    "pipeline",
    "failure",
    "preflight",
    "extra-keys",
    "schema-version",
    "files-touched",
    "events-unknown",
    "events-bad-body",
    "query",
    "usage-values",
    "events-bad-values",
    # a cell of generators/edges.py in a raw success's events
    "events-edge-values",
    "events-bad-edge-values",
)
RUN_COMMAND = "stella run --output-format json"
PIPELINE_COMMAND = "stella run --output-format json --pipeline my-verifier"
QUERY_COMMANDS = (
    "stella stats --format json",
    "stella usage report --format json",
    "stella memory list --format json",
    "stella context list --format json",
    "stella inspect 42 --step 3 --format json",
    "stella calibration --format json",
)
PREFLIGHT_REASONS = (
    "no API key found. Set ANTHROPIC_API_KEY or add it to settings.json",
    "unknown provider 'antrhopic'",
    "settings.json: expected value at line 3 column 5",
)
ABORT_REASONS = ("spend limit of $3.00 reached", "deadline of 20m reached", "step limit reached")
WRONG_VERSIONS: tuple[Any, ...] = (0, 2, 3, 99, -1, "1", "v1", 1.5, None, True, [1], {"major": 1})
_MISSING = object()

Doc = dict[str, Any]


@dataclass(frozen=True)
class EnvelopeCase:
    """One envelope document and the command a reader ran to get it."""

    variant: str
    command: str
    data: bytes

    @property
    def doc(self) -> Any:
        return json.loads(self.data)


#: Whitespace a document may hold between its tokens (a newline is as good as a space in
#: one JSON text), and around it.
_DOC_COLONS = (": ", ":", " : ", ":\t", ":\r\n ")
_DOC_COMMAS = (",\n", ", ", ",\r\n", ",\t", ",\n\n")
_DOC_INNER = ("\n", "", " ", "\r\n", "\t")
_DOC_LEAD = ("", "\n", " ", "\r\n")
_DOC_TRAIL = ("\n", "", "\r\n", "\n\n", " \n")


_DOC_ORDERS = ("as-is", "reversed", "sorted")


def _version_first(reorder: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    """``reorder`` with ``schema_version`` kept first: a query envelope is "schema_version
    first, then the payload" (scripting-and-automation), so a reader may gate on its first
    key; key order is free only in the turn envelope ("Key order isn't part of the
    contract")."""

    def ordered(keys: list[str]) -> list[str]:
        rest = reorder([k for k in keys if k != "schema_version"])
        return (["schema_version"] if "schema_version" in keys else []) + rest

    return ordered


def _render(draw: st.DrawFn, doc: Doc, command: str = RUN_COMMAND) -> bytes:
    """The document compact, pretty-printed, or spelled another way JSON allows: any of its
    whitespace between tokens (CR and LF included), keys in another order (a query
    envelope's ``schema_version`` stays first), strings with other escapes, and whitespace
    before and after it."""
    layout = index_at(draw, "envelope-layout", 3)
    if layout == 0:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    elif layout == 1:
        text = json.dumps(doc, ensure_ascii=False, indent=draw(st.sampled_from((1, 2, 4))))
    else:
        order = set_at(draw, "key-order", _DOC_ORDERS, draw(st.sampled_from(_DOC_ORDERS)))
        string = string_writer(draw)
        respell = set_at(draw, "respell-numbers", (False, True), draw(st.booleans()))

        def numbers(key: str, value: Any) -> str | None:
            if not respell or key != "cost_usd" or not isinstance(value, float):
                return None
            options = [s for s in number_spellings(value) if s != "-0"]
            return spell_number(draw, options)

        spelling = Spelling(
            set_at(draw, "colon", _DOC_COLONS, draw(st.sampled_from(_DOC_COLONS))),
            set_at(draw, "comma", _DOC_COMMAS, draw(st.sampled_from(_DOC_COMMAS))),
            _version_first(KEY_ORDERS[order]) if command in QUERY_COMMANDS else KEY_ORDERS[order],
            numbers,
            inner=set_at(draw, "inner", _DOC_INNER, draw(st.sampled_from(_DOC_INNER))),
            string=string,
        )
        lead = set_at(draw, "lead", _DOC_LEAD, draw(st.sampled_from(_DOC_LEAD)))
        trail = set_at(draw, "trail", _DOC_TRAIL, draw(st.sampled_from(_DOC_TRAIL)))
        return (lead + spelling.write(doc) + trail).encode("utf-8")
    return text.encode("utf-8") + b"\n"


def _final_text(run: Run) -> str | None:
    return decode_all(run.to_bytes()).summary.final_text


def _model(run: Run) -> str | None:
    for event in reversed(run.events):
        if "model" in event and isinstance(event["model"], str):
            return str(event["model"])
    return None


def _records(draw: st.DrawFn, min_size: int = 0) -> list[Doc]:
    paths = st.sampled_from(
        ("src/lib.rs", "README.md", "crates/store/src/migrate.rs", "docs/ü.md", "a b/c.py")
    )
    return draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "path": paths,
                    "lines_added": st.integers(0, 500),
                    "lines_removed": st.integers(0, 500),
                }
            ),
            min_size=min_size,
            max_size=4,
        )
    )


def _withheld(draw: st.DrawFn) -> Doc | None:
    if draw(st.booleans()):
        return None
    return {"withheld_by": "trust_gate", "memories": draw(st.integers(0, 9)), "rules": 1}


def _cost(draw: st.DrawFn) -> float:
    return float(draw(st.floats(0, 5, allow_nan=False).map(lambda x: round(x, 4))))


def _completed(draw: st.DrawFn, run: Run) -> Doc:
    """The keys every successful run's envelope starts with."""
    return {
        "schema_version": 1,
        "status": "completed",
        "text": _final_text(run) or draw(prose()),
        "cost_usd": _cost(draw),
        "reason": None,
    }


def raw_success(draw: st.DrawFn, vocab: Vocabulary, *, records: int = 0) -> Doc:
    run = draw(runs(vocab, failed=False, max_turns=2, max_steps=2))
    return {
        **_completed(draw, run),
        "model": _model(run) or draw(st.sampled_from(MODELS)),
        "events": run.events,
        "files_touched": {"files_touched": _records(draw, records)},
        "withheld": _withheld(draw),
    }


def pipeline_success(draw: st.DrawFn, vocab: Vocabulary) -> Doc:
    run = draw(runs(vocab, failed=False, max_turns=2, max_steps=2))
    return {
        **_completed(draw, run),
        "task_class": draw(st.sampled_from(("code_change", "question", "refactor"))),
        "verdict": {"deterministic": draw(st.booleans()), "summary": draw(prose())},
        "revisions": draw(st.integers(0, 3)),
        "candidates_run": draw(st.integers(1, 3)),
        "model": _model(run) or draw(st.sampled_from(MODELS)),
        "events": run.events,
        "reflection": draw(st.none() | st.fixed_dictionaries({"notes": prose()})),
    }


def failure(draw: st.DrawFn, vocab: Vocabulary) -> tuple[str, Doc]:
    run = draw(runs(vocab, failed=True, max_turns=2, max_steps=2))
    aborted = draw(st.booleans())
    status = "aborted" if aborted else "error"
    reason = draw(st.sampled_from(ABORT_REASONS)) if aborted else run.events[-1]["message"]
    if draw(st.booleans()):
        return RUN_COMMAND, {
            "schema_version": 1,
            "status": status,
            "text": None,
            "cost_usd": _cost(draw),
            "reason": reason,
            "model": _model(run),
            "events": run.events,
            "files_touched": {"files_touched": _records(draw)},
            "withheld": None,
        }
    return PIPELINE_COMMAND, {
        "schema_version": 1,
        "status": status,
        "text": None,
        "cost_usd": _cost(draw),
        "reason": reason,
        "task_class": None,
        "verdict": None,
        "revisions": None,
        "candidates_run": None,
        "model": _model(run),
        "events": run.events,
        "reflection": None,
    }


def preflight(draw: st.DrawFn) -> Doc:
    return {
        "schema_version": 1,
        "status": "error",
        "text": None,
        "reason": draw(st.sampled_from(PREFLIGHT_REASONS)),
    }


def query(draw: st.DrawFn) -> tuple[str, Doc]:
    command = draw(st.sampled_from(QUERY_COMMANDS))
    if "inspect" in command:
        return command, {
            "schema_version": 1,
            "session": 42,
            "step": 3,
            "verified": draw(st.booleans()),
            "model": draw(st.sampled_from(MODELS)),
        }
    row = st.fixed_dictionaries(
        {
            "model": st.sampled_from(MODELS),
            "total_cost_usd": st.floats(0, 100, allow_nan=False).map(lambda x: round(x, 2)),
            "runs": st.integers(0, 1000),
        }
    )
    return command, {"schema_version": 1, "rows": draw(st.lists(row, max_size=5))}


_EXTRA_NAMES = st.sampled_from(("trace_id", "x_vendor", "duration_ms", "session", "_meta", "rows2"))
_EXTRA_VALUES = st.one_of(
    st.none(),
    st.integers(),
    strings(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.fixed_dictionaries({"nested": st.booleans()}),
)


def _add_extras(draw: st.DrawFn, doc: Doc) -> None:
    targets = [doc]
    payload = doc.get("files_touched")
    if isinstance(payload, dict):
        targets.append(payload)
        targets.extend(r for r in payload.get("files_touched", []) if isinstance(r, dict))
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(targets))
        name = draw(_EXTRA_NAMES)
        if name not in target:
            target[name] = draw(_EXTRA_VALUES)
    if not any(k not in _TOP_KEYS for k in doc):
        doc["x_vendor"] = draw(_EXTRA_VALUES)
    hard = option_at(draw, "hard-text", len(HARD_TEXTS) + 1)
    if hard:  # a stratum: characters JSON spells its own way, in an unknown key's value
        doc["x_vendor_text"] = text_at(draw, "hard-text", HARD_TEXTS[hard - 1])


_TOP_KEYS = frozenset(
    (
        "schema_version", "status", "text", "cost_usd", "reason", "model", "events",
        "files_touched", "withheld", "task_class", "verdict", "revisions", "candidates_run",
        "reflection", "rows",
    )
)  # fmt: skip


def _events_mutated(draw: st.DrawFn, vocab: Vocabulary, doc: Doc, mutation: str) -> None:
    stream = Stream.of(doc["events"])
    MUTATIONS[mutation].apply(draw, stream, vocab)
    doc["events"] = [line.obj for line in stream.lines if line.raw is None]


#: The step_usage counts an envelope reader sums (EnvelopeReading.input_tokens, ...).
TOKEN_FIELDS = ("input_tokens", "output_tokens")
#: The other step_usage integers: above 2^53 too, for readers that keep them.
OTHER_COUNTS = ("cached_input_tokens", "duration_ms")
#: A u64 field's bad values: the real bug's ``"1200"``, and what else a lenient reader
#: turns into a number (or into nothing) instead of refusing the envelope.
BAD_COUNTS: tuple[Any, ...] = ("1200", "1200.0", None, -1, 1.5, True, "", 2**64, "9007199254740993")


def _with_usage(draw: st.DrawFn, vocab: Vocabulary, doc: Doc) -> list[Doc]:
    """The doc's step_usage events, one inserted before the last event when it had none."""
    events: list[Any] = doc["events"]
    steps = [e for e in events if isinstance(e, dict) and e.get("type") == "step_usage"]
    if not steps:
        usage = dict(draw(strategies_for(vocab).for_type("step_usage")))
        events.insert(draw(st.integers(0, max(0, len(events) - 1))), usage)
        steps = [usage]
    return steps


def _double_sum(values: list[int]) -> int:
    """What a reader that parses numbers as doubles (JSON.parse) and adds them reports."""
    total = 0.0
    for value in values:
        total += float(value)
    return int(total)


def _big_count(draw: st.DrawFn) -> int:
    """An odd integer above 2^53: no double holds it, so a reader that parses into one rounds."""
    return TWO_53 + 2 * draw(st.integers(0, 2**40)) + 1


def usage_values(draw: st.DrawFn, vocab: Vocabulary) -> tuple[str, Doc]:
    """A success whose token counts are exact only as integers, its cost in another spelling.

    Every ``step_usage`` gets counts above 2^53 in the fields a reader sums, at least one
    of them odd, and the counts are nudged until a sum in doubles differs from the exact
    one (two rounding errors can cancel): a reader that loses precision reports another
    total on every case.
    """
    pipeline = draw(st.booleans())
    doc = pipeline_success(draw, vocab) if pipeline else raw_success(draw, vocab)
    if "step_usage" in vocab.known:
        steps = _with_usage(draw, vocab, doc)
        for event in steps:
            for name in (*TOKEN_FIELDS, *OTHER_COUNTS):
                if name in event and (name in TOKEN_FIELDS or draw(st.booleans())):
                    event[name] = _big_count(draw)
        for name in TOKEN_FIELDS:
            counted = [e for e in steps if isinstance(e.get(name), int)]
            while counted and _double_sum([e[name] for e in counted]) == sum(
                e[name] for e in counted
            ):
                counted[0][name] += 2
    if draw(st.booleans()):
        clock = TWO_53 + 2 * draw(st.integers(0, 10_000)) + 1
        for event in doc["events"]:
            clock += draw(st.integers(1, 3))
            event["ts"] = clock
    command = PIPELINE_COMMAND if pipeline else RUN_COMMAND
    return command, doc


def _spelled(draw: st.DrawFn, doc: Doc) -> bytes:
    """The document with its costs (a number everywhere) in another JSON spelling."""
    colon = draw(st.sampled_from((":", ": ")))
    comma = draw(st.sampled_from((",", ", ")))

    def numbers(key: str, value: Any) -> str | None:
        if key != "cost_usd" or not isinstance(value, float):
            return None
        options = [s for s in number_spellings(value) if s != "-0"]
        return draw(st.sampled_from(options)) if options else None

    return Spelling(colon, comma, numbers=numbers).write(doc).encode("utf-8") + b"\n"


def events_bad_values(draw: st.DrawFn, vocab: Vocabulary) -> Doc:
    """A raw success whose events hold a bad value where a reader reads a number.

    Mostly a token count of a ``step_usage`` (the real bug: ``"input_tokens":"1200"``
    read as nothing); otherwise a bad value in any read field of a type the reader
    knows (the ``bad-read-values`` hazard).  Each value is one the body's schema refuses,
    so every reading of the contract rejects the envelope.
    """
    doc = raw_success(draw, vocab)
    if "step_usage" not in vocab.known or draw(st.integers(0, 7)) == 7:
        _events_mutated(draw, vocab, doc, "bad-read-values")
        return doc
    steps = _with_usage(draw, vocab, doc)
    event = draw(st.sampled_from(steps))
    counts = [n for n in (*TOKEN_FIELDS, *OTHER_COUNTS) if n in event]
    name = draw(st.sampled_from(TOKEN_FIELDS if draw(st.integers(0, 3)) < 3 else counts))
    before = event.get(name)
    for value in (draw(st.sampled_from(BAD_COUNTS)), *BAD_COUNTS):
        event[name] = value
        if vocab.misfit("step_usage", vocab.normalize("step_usage", event)) is not None:
            return doc
    event[name] = before  # a vocabulary that takes any value here: another field, another way
    _events_mutated(draw, vocab, doc, "bad-read-values")
    return doc


@st.composite
def envelope_cases(
    draw: st.DrawFn, vocab: Vocabulary | None = None, variants: tuple[str, ...] = VARIANTS
) -> EnvelopeCase:
    """Envelope documents of the given variants (public strategy)."""
    vocab = vocab or Vocabulary.default()
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown envelope variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
    variant = draw(st.sampled_from(variants))
    command = RUN_COMMAND
    if variant == "raw":
        doc = raw_success(draw, vocab)
    elif variant == "pipeline":
        command, doc = PIPELINE_COMMAND, pipeline_success(draw, vocab)
    elif variant == "failure":
        command, doc = failure(draw, vocab)
    elif variant == "preflight":
        doc = preflight(draw)
    elif variant == "extra-keys":
        if draw(st.booleans()):
            doc = raw_success(draw, vocab, records=1)
        else:
            command, doc = query(draw)
        _add_extras(draw, doc)
    elif variant == "schema-version":
        shape = draw(st.sampled_from(("raw", "pipeline", "preflight", "query")))
        if shape == "raw":
            doc = raw_success(draw, vocab)
        elif shape == "pipeline":
            command, doc = PIPELINE_COMMAND, pipeline_success(draw, vocab)
        elif shape == "preflight":
            doc = preflight(draw)
        else:
            command, doc = query(draw)
        wrong = draw(st.sampled_from((*WRONG_VERSIONS, _MISSING)))
        if wrong is _MISSING:
            del doc["schema_version"]
        else:
            doc["schema_version"] = wrong
    elif variant == "files-touched":
        doc = raw_success(draw, vocab, records=1)
    elif variant == "events-unknown":
        doc = raw_success(draw, vocab)
        for _ in range(draw(st.integers(1, 2))):
            _events_mutated(draw, vocab, doc, "unknown-type")
    elif variant == "events-bad-body":
        doc = raw_success(draw, vocab)
        breaker = draw(
            st.sampled_from(("bad-body-missing-field", "bad-body-wrong-type", "bad-body-null"))
        )
        _events_mutated(draw, vocab, doc, breaker)
    elif variant == "usage-values":
        command, doc = usage_values(draw, vocab)
        data = _spelled(draw, doc) if draw(st.booleans()) else _render(draw, doc, command)
        return EnvelopeCase(variant, command, data)
    elif variant == "events-bad-values":
        doc = events_bad_values(draw, vocab)
    elif variant in ENVELOPE_VARIANTS:
        doc = raw_success(draw, vocab)
        _events_mutated(draw, vocab, doc, ENVELOPE_VARIANTS[variant])
    else:
        command, doc = query(draw)
    return EnvelopeCase(variant, command, _render(draw, doc, command))


__all__ = ["VARIANTS", "EnvelopeCase", "envelope_cases"]
