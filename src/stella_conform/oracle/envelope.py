"""The reference reader for stella's JSON envelopes: the oracle of the ``envelope`` profile.

Two envelopes share the rules: the turn envelope of ``stella run|fleet
--output-format json`` (three shapes: the raw step loop, a ``--pipeline`` run,
the pre-flight error envelope) and the query envelope of the read-only query
commands' ``--format json`` (``rows`` for list reports, the object's own keys
otherwise).  A reader knows which command produced the document, so the
command is an input here, as it is for a real client.

The rules a reader is graded on, in the contract's words:

* check only the keys you use; ignore keys you do not recognize;
* an unexpected ``schema_version`` is the signal to stop, loudly;
* a failure keeps every key with ``null`` values; the pre-flight error
  envelope has only ``schema_version``, ``status``, ``text`` and ``reason``;
* ``files_touched`` holds the telemetry payload, its list one level in;
* ``events`` holds stream events and follows the stream rules (unknown types
  inert, a known type with a body that does not fit is an error).

Reading a key the reader uses with the wrong JSON type is a rejection: that is
the "misread" a version bump exists to prevent.

A reader that claims to read only some parts (``reads``: the shapes ``run``,
``pipeline``, ``query`` and the nested ``events`` and ``files_touched``) is read
here the same way: a part it does not read is not looked at, so a malformed
``events`` entry is nothing to a reader that never reads ``events``.

The values a reader extracts are part of the reading: ``cost_usd`` from its key,
and the token counts from the ``step_usage`` events (the envelope has no token
keys of its own: a reader that looks for one reports zero).  A reader that reads
no ``step_usage`` event (it does not read ``events``, or knows no ``step_usage``, or
the envelope has no events) reports its totals as ``null``, or as ``0`` where the
envelope holds no ``step_usage`` event at all: the register's ``tokens-not-read``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from stella_conform.oracle.decoder import Kind, RunFold, classify, parse_line
from stella_conform.schemas.vocabulary import Vocabulary

SCHEMA_VERSION = 1
#: The read-only query commands whose ``--format json`` uses the query envelope.
QUERY_COMMANDS = (
    "stats",
    "usage report",
    "inspect",
    "calibration",
    "memory list",
    "context list",
    "context validate",
)
#: Keys only a ``--pipeline`` run reports.
PIPELINE_KEYS = ("task_class", "verdict", "revisions", "candidates_run", "reflection")
PREFLIGHT_KEYS = frozenset({"schema_version", "status", "text", "reason"})

Shape = Literal["raw", "pipeline", "preflight", "query-rows", "query-object"]


def is_query_command(command: str) -> bool:
    """True for ``stella stats --format json`` and the other query commands."""
    words = command.split()
    if words and words[0] == "stella":
        words = words[1:]
    text = " ".join(w for w in words if not w.startswith("-"))
    return any(text == q or text.startswith(q + " ") for q in QUERY_COMMANDS)


@dataclass
class EnvelopeReading:
    """What a correct reader takes from one envelope."""

    verdict: str = "accept"
    reason: str | None = None
    shape: Shape | None = None
    status: str | None = None
    text: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    files_touched: list[str] | None = None
    known_events: int | None = None
    unrecognized_events: int | None = None
    rows: int | None = None
    cost_usd: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    keys: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "shape": self.shape,
            "status": self.status,
            "text": self.text,
            "model": self.model,
            "stop_reason": self.stop_reason,
            "files_touched": self.files_touched,
            "known_events": self.known_events,
            "unrecognized_events": self.unrecognized_events,
            "rows": self.rows,
            "cost_usd": self.cost_usd,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


def envelope_parts(data: bytes, command: str) -> frozenset[str]:
    """The shapes a document can be (``run``, ``pipeline``, ``query``), for ``reads`` claims.

    Decided from the command and the keys, before any reading: a document a reader
    refuses still belongs to the shape its command prints.  A pre-flight error envelope
    (no model, no events) can come from either kind of run.
    """
    if is_query_command(command):
        return frozenset({"query"})
    doc, _ = parse_line(data)
    keys = set(doc) if isinstance(doc, dict) else set()
    if keys & set(PIPELINE_KEYS) or "--pipeline" in command.split():
        return frozenset({"pipeline"})
    if "events" not in keys and "model" not in keys:
        return frozenset({"run", "pipeline"})
    return frozenset({"run"})


class _Reject(Exception):
    pass


def _optional(doc: dict[str, Any], key: str, kinds: tuple[type, ...], what: str) -> Any:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, kinds):
        raise _Reject(f"{key!r} is not {what} or null")
    return value


def read_envelope(
    data: bytes,
    command: str = "stella run --output-format json",
    vocab: Vocabulary | None = None,
    reads: Collection[str] | None = None,
    *,
    choices: frozenset[str] = frozenset(),
    touched: set[str] | None = None,
) -> EnvelopeReading:
    """Read one envelope document as a conforming reader must (of ``reads``: every part).

    ``choices``/``touched``: the registered readings of its events, as for a stream
    (:mod:`stella_conform.oracle.readings`).
    """
    reading = EnvelopeReading()
    try:
        _read(data, command, vocab or Vocabulary.default(), reading, reads, choices, touched)
    except _Reject as exc:
        reading.verdict, reading.reason = "reject", str(exc)
    return reading


def _read(
    data: bytes,
    command: str,
    vocab: Vocabulary,
    out: EnvelopeReading,
    reads: Collection[str] | None = None,
    choices: frozenset[str] = frozenset(),
    touched: set[str] | None = None,
) -> None:
    doc, problem = parse_line(data)
    if problem is not None:
        raise _Reject(f"the envelope is {problem}")
    if not isinstance(doc, dict):
        raise _Reject("the envelope is JSON but not an object")
    out.keys = list(doc)
    version = doc.get("schema_version")
    if isinstance(version, float) and version.is_integer():  # 1.0: an integer, by value?
        if touched is not None:
            touched.add("integral-float")
        if "integral-float" in choices:
            version = int(version)
    if not (isinstance(version, int) and not isinstance(version, bool)):
        raise _Reject(
            f"schema_version is {version!r}, not a number: not an envelope this reader knows"
        )
    if version != SCHEMA_VERSION:
        raise _Reject(f"unsupported schema_version {version} (this reader knows {SCHEMA_VERSION})")
    if is_query_command(command):
        _read_query(doc, out)
    else:
        _read_turn(doc, vocab, out, reads, choices, touched)


def _read_query(doc: dict[str, Any], out: EnvelopeReading) -> None:
    if "rows" in doc:
        rows = doc["rows"]
        if not isinstance(rows, list):
            raise _Reject("'rows' is not an array")
        out.shape, out.rows = "query-rows", len(rows)
    else:
        out.shape = "query-object"


def _read_turn(
    doc: dict[str, Any],
    vocab: Vocabulary,
    out: EnvelopeReading,
    reads: Collection[str] | None = None,
    choices: frozenset[str] = frozenset(),
    touched: set[str] | None = None,
) -> None:
    status = doc.get("status")
    if not isinstance(status, str):
        raise _Reject("'status' is missing or not a string")
    out.status = status
    out.text = _optional(doc, "text", (str,), "a string")
    out.model = _optional(doc, "model", (str,), "a string")
    out.stop_reason = _optional(doc, "reason", (str,), "a string")
    if "events" not in doc and "model" not in doc and set(doc) & PREFLIGHT_KEYS == PREFLIGHT_KEYS:
        out.shape = "preflight"
    elif any(k in doc for k in PIPELINE_KEYS):
        out.shape = "pipeline"
    else:
        out.shape = "raw"
    cost = doc.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        out.cost_usd = cost
    payload = None
    if reads is None or "files_touched" in reads:
        payload = _optional(doc, "files_touched", (dict,), "an object")
    if payload is not None:
        records = payload.get("files_touched")
        if records is not None:
            if not isinstance(records, list):
                raise _Reject("'files_touched.files_touched' is not an array")
            paths = []
            for index, record in enumerate(records):
                if not isinstance(record, dict) or not isinstance(record.get("path"), str):
                    raise _Reject(f"'files_touched.files_touched[{index}]' has no string 'path'")
                paths.append(record["path"])
            out.files_touched = paths
    events = None
    if reads is None or "events" in reads:
        events = _optional(doc, "events", (list,), "an array")
    if events is not None:
        fold = RunFold(vocab.turn_boundaries, choices=choices, touched=touched)
        tokens = [0, 0]
        usages = 0
        for index, value in enumerate(events, 1):
            outcome = classify(index, value, vocab, True, choices, touched)
            if outcome.kind is Kind.REJECT:
                raise _Reject(f"events[{index - 1}]: {outcome.reason}")
            fold.feed(outcome)
            if outcome.kind is Kind.KNOWN and outcome.tag == "step_usage" and outcome.event:
                tokens[0] += outcome.event.get("input_tokens", 0)
                tokens[1] += outcome.event.get("output_tokens", 0)
                usages += 1
        summary = fold.finish()
        out.known_events = summary.known_events
        out.unrecognized_events = summary.unrecognized_events
        if "step_usage" in vocab.known:
            out.input_tokens, out.output_tokens = tokens
            if not usages:  # no step_usage to sum: no tokens (A), or not known (B)
                if touched is not None:
                    touched.add("tokens-without-usage")
                if "tokens-without-usage" in choices:
                    out.input_tokens = out.output_tokens = None
            return
    # no step_usage event read: the events not read (claimed), absent or null, or step_usage
    # not a type the reader knows: nothing counted, null (A); or, where the envelope holds
    # no step_usage event at all, none counted, 0 (B). Where it holds one, the count is in
    # the document, and a reader that did not read it has no zero to report.
    if _holds_step_usage(doc):
        return
    if touched is not None:
        touched.add("tokens-not-read")
    if "tokens-not-read" in choices:
        out.input_tokens = out.output_tokens = 0


def _holds_step_usage(doc: dict[str, Any]) -> bool:
    """Whether the envelope's ``events`` hold a ``step_usage`` event (read or not)."""
    events = doc.get("events")
    return isinstance(events, list) and any(
        isinstance(e, dict) and e.get("type") == "step_usage" for e in events
    )
