"""A conforming stella stream reader, and an adapter that speaks stella-conform's protocol.

Standard library only, on purpose: this is what a client author would write,
not a wrapper around the kit.  It follows the contract's six rules and the
further guarantees (aliases, text replacing previews, stages per scope, the
run_complete terminator, ts clamping).

The deliberately broken clients in ``adapters/broken/`` subclass
:class:`Reader` and override exactly one hook each.

Modes (chosen by the kit through ``STELLA_CONFORM_MODE``):

* ``exit`` (or unset): read the stream from stdin, or from the file named by
  the first argument; exit 0 to accept, 1 to reject (message on stderr).
* ``report``: the adapter protocol, lockstep: hello, one observation per line
  (or ``pending`` while a corrupt line might still turn out to be the torn
  last one), then a summary.
* ``persistent``: many cases in one process, each framed as a ``case`` message.
"""

from __future__ import annotations

import json
import os
import sys

# Imported where used, not here: a report- or exit-mode client starts once per case, and
# typing, hashlib (OpenSSL) and base64 are a third of this client's start-up CPU.
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations are strings (from __future__ import annotations)
    from typing import Any, BinaryIO, ClassVar

PROTOCOL = 1
NAME = "stella-reader-python"
VERSION = "1.0"

U64 = (0, 2**64 - 1)
U32 = (0, 2**32 - 1)

# Field facts of the known types (required fields, then optional ones).
# A type spec is a JSON type name, a tuple of them, ("enum", values), ("uint", bounds),
# or a callable for nested shapes.


def _tool_call(value: Any, path: str) -> str | None:
    if not isinstance(value, dict):
        return f"{path} must be an object"
    for key in ("call_id", "name"):
        if not isinstance(value.get(key), str):
            return f"{path}.{key} must be a string"
    if "input" not in value:
        return f"{path}.input is missing"
    return None


def _tool_output(value: Any, path: str) -> str | None:
    if not isinstance(value, dict):
        return f"{path} must be an object"
    ok, err = value.get("ok"), value.get("error")
    if isinstance(ok, dict) and isinstance(ok.get("content"), str):
        return None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return None
    return f"{path} must be {{'ok': {{'content': ...}}}} or {{'error': {{'message': ...}}}}"


NUM = ("number",)
REQUIRED: dict[str, dict[str, Any]] = {
    "stage": {"name": "string", "scope": ("enum", ("turn", "run"))},
    "text": {"text": "string"},
    "text_delta": {"delta": "string"},
    "reasoning": {"delta": "string"},
    "tool_start": {"call": _tool_call},
    "tool_result": {"call_id": "string", "output": _tool_output, "duration_ms": ("uint", U64)},
    "step_usage": {
        "step": ("uint", U64),
        "model": "string",
        "input_tokens": ("uint", U64),
        "output_tokens": ("uint", U64),
        "cached_input_tokens": ("uint", U64),
        "cost_usd": NUM,
        "duration_ms": ("uint", U64),
        "retries": ("uint", U32),
        "tool_calls": ("uint", U64),
    },
    "turn_complete": {"model": "string", "cost_usd": NUM},
    "run_complete": {"model": "string", "cost_usd": NUM},
    "error": {"message": "string", "retryable": "boolean"},
    "budget_tick": {"spent_usd": NUM, "mode": ("enum", ("off", "observed", "enforced"))},
    "file_change": {"path": "string", "kind": ("enum", ("read", "created", "modified", "deleted"))},
}
OPTIONAL: dict[str, dict[str, Any]] = {
    "tool_result": {"speculated": "boolean"},
    "step_usage": {
        "provider": "string",
        "reasoning_tokens": ("uint-or-null", U64),
        "output_text": ("string", "null"),
        "complete": "boolean",
    },
    "budget_tick": {
        "limit_usd": ("number", "null"),
        "session_spent_usd": ("number", "null"),
        "session_limit_usd": ("number", "null"),
        "deadline_remaining_ms": ("uint-or-null", U64),
    },
    "file_change": {"added": ("uint", U32), "removed": ("uint", U32), "diff": ("string", "null")},
}
# Renamed fields: (self-describing name, legacy name). The self-describing one wins.
ALIASES = {"text": ("text", "delta"), "text_delta": ("delta", "text")}
# A stage recorded before scope existed is an archived shape: unrecognized, not corrupt.
ARCHIVED_MISSING = {"stage": "scope"}
JSON_WS = b" \t\r\n"


def _is(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "null":
        return value is None
    raise ValueError(name)


def check_field(value: Any, spec: Any, path: str) -> str | None:
    if callable(spec):
        return spec(value, path)
    if isinstance(spec, str):
        return None if _is(value, spec) else f"{path} must be a {spec}"
    kind = spec[0]
    if kind == "enum":
        return (
            None
            if isinstance(value, str) and value in spec[1]
            else f"{path} must be one of {spec[1]}"
        )
    if kind in ("uint", "uint-or-null"):
        if value is None and kind == "uint-or-null":
            return None
        lo, hi = spec[1]
        if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
            return None
        return f"{path} must be an integer in [{lo}, {hi}]"
    if all(isinstance(s, str) for s in spec):
        return None if any(_is(value, s) for s in spec) else f"{path} must be {' or '.join(spec)}"
    raise ValueError(spec)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class Rejected(Exception):
    """Raised by a hook to fail the stream loudly at the current line."""


class Reader:
    """Reads one stream, one physical line at a time. Override a hook to break a rule."""

    known_types = frozenset(REQUIRED)
    #: Field facts per known type (a client of another vocabulary swaps them).
    required: ClassVar[dict[str, dict[str, Any]]] = REQUIRED
    optional: ClassVar[dict[str, dict[str, Any]]] = OPTIONAL

    def __init__(self) -> None:
        self.pending: tuple[int, str] | None = None
        self.rejected: tuple[int, str] | None = None
        self.known_events = 0
        self.unrecognized_events = 0
        self.unrecognized_types: list[str] = []
        self.texts: list[str] = []
        self.preview: list[str] = []
        self.stages: dict[str, list[str]] = {"turn": [], "run": []}
        self.turns_completed = 0
        self.run_complete = False
        self.last_known: str | None = None
        self.elapsed_ms: int | None = None
        self.last_ts: int | None = None
        self.usage: dict[str, int] | None = None

    # ------------------------------------------------------------ hooks (rules)

    def parse(self, content: bytes) -> Any:
        """Rule 1: each line is its own JSON document. Raises ValueError when it is not."""
        return json.loads(content.decode("utf-8"), parse_constant=_reject_constant)

    def type_of(self, event: dict[str, Any]) -> str | None:
        """Rule 2: the type string alone decides; None means unrecognized (rule 3)."""
        tag = event.get("type")
        if not isinstance(tag, str) or tag not in self.known_types:
            return None
        missing = ARCHIVED_MISSING.get(tag)
        if missing is not None and missing not in event:
            return None
        return tag

    def on_unknown(self, line: int, event: dict[str, Any]) -> None:
        """Rule 3: count it, nothing more."""
        self.unrecognized_events += 1
        tag = event.get("type")
        if isinstance(tag, str) and tag not in self.unrecognized_types:
            self.unrecognized_types.append(tag)

    def normalize(self, tag: str, event: dict[str, Any]) -> dict[str, Any]:
        alias = ALIASES.get(tag)
        if alias and alias[0] not in event and alias[1] in event:
            event = dict(event)
            event[alias[0]] = event.pop(alias[1])
        return event

    def misfit(self, tag: str, event: dict[str, Any]) -> str | None:
        """Rules 4 and 5: required fields with the right types; unknown fields ignored."""
        for name, spec in self.required[tag].items():
            if name not in event:
                return f"{tag}: missing required field {name!r}"
            problem = check_field(event[name], spec, name)
            if problem:
                return f"{tag}: {problem}"
        for name, spec in self.optional.get(tag, {}).items():
            if name in event:
                problem = check_field(event[name], spec, name)
                if problem:
                    return f"{tag}: {problem}"
        if event.get("ts") is not None:  # ts ?? null: a null stamp is no stamp
            problem = check_field(event["ts"], ("uint", U64), "ts")
            if problem:
                return f"{tag}: {problem}"
        return None

    def on_event(self, line: int, event: dict[str, Any], tag: str | None) -> None:
        """Every real event, known (``tag``) or not (``None``), exactly as it was parsed.

        A recorder or proxy overrides this to re-emit the event whole.
        """

    def torn_tail_ok(self) -> bool:
        """Rule 6: a cut-off final line is dropped, not an error."""
        return True

    def reject_line_number(self, line: int) -> int:
        return line

    # ------------------------------------------------------------ machinery

    def push(self, line: int, content: bytes, terminated: bool = True) -> list[dict[str, Any]]:
        """Observations for one physical line (content without its newline)."""
        if self.rejected:
            return []
        if not content.strip(JSON_WS):
            return [{"kind": "line", "line": line, "outcome": "blank"}]
        out: list[dict[str, Any]] = []
        if self.pending is not None:
            bad, reason = self.pending
            self.pending = None
            return out + self._reject(bad, f"corrupt line: {reason}")
        try:
            event = self.parse(content)
        except Rejected as exc:
            return self._reject(line, str(exc))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self.pending = (line, str(exc))
            return [{"kind": "pending", "line": line}]
        if not isinstance(event, dict):
            return self._reject(line, "line is JSON but not an object")
        try:
            tag = self.type_of(event)
            if tag is None:
                self.on_unknown(line, event)
                self.on_event(line, event, None)
                self._clock(event.get("ts"))
                raw = event.get("type")
                return [
                    {
                        "kind": "line",
                        "line": line,
                        "outcome": "unknown",
                        "type": raw if isinstance(raw, str) else None,
                    }
                ]
            parsed = event
            event = self.normalize(tag, event)
            problem = self.misfit(tag, event)
        except Rejected as exc:
            return self._reject(line, str(exc))
        if problem:
            return self._reject(line, problem)
        self._fold(tag, event)
        self.on_event(line, parsed, tag)
        return [{"kind": "line", "line": line, "outcome": "known", "type": tag}]

    def finish(self) -> list[dict[str, Any]]:
        """End of stream: a corrupt line still pending was the last one."""
        if self.pending is None or self.rejected:
            return []
        line, reason = self.pending
        self.pending = None
        if self.torn_tail_ok():
            return [{"kind": "line", "line": line, "outcome": "torn", "reason": reason}]
        return self._reject(line, f"corrupt final line: {reason}")

    def _reject(self, line: int, reason: str) -> list[dict[str, Any]]:
        self.rejected = (line, reason)
        return [{"kind": "line", "line": line, "outcome": "reject", "reason": reason}]

    def _clock(self, ts: Any) -> None:
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            return
        if self.last_ts is None:
            self.elapsed_ms = 0
        else:
            self.elapsed_ms = (self.elapsed_ms or 0) + max(0, ts - self.last_ts)
        self.last_ts = ts

    def _fold(self, tag: str, event: dict[str, Any]) -> None:
        self.known_events += 1
        self.last_known = tag
        self._clock(event.get("ts"))
        if tag == "text_delta":
            self.preview.append(event["delta"])
        elif tag == "text":
            self.texts.append(event["text"])  # replaces the preview, never appends
            self.preview.clear()
        elif tag == "stage":
            self.stages[event["scope"]].append(event["name"])
        elif tag == "step_usage":
            self.add_usage(event)
        elif tag == "turn_complete":
            self.turns_completed += 1
        elif tag == "run_complete":
            self.run_complete = True

    def add_usage(self, event: dict[str, Any]) -> None:
        """Token counts and durations, summed exactly (Python integers do not round)."""
        if self.usage is None:
            self.usage = {"input_tokens": 0, "output_tokens": 0, "duration_ms": 0}
        for name in self.usage:
            self.usage[name] += event[name]

    def summary(self) -> dict[str, Any]:
        terminator = (
            "run_complete"
            if self.run_complete
            else ("error" if self.last_known == "error" else None)
        )
        return {
            "kind": "summary",
            "verdict": "reject" if self.rejected else "accept",
            "rejected_line": self.reject_line_number(self.rejected[0]) if self.rejected else None,
            "known_events": self.known_events,
            "unrecognized_events": self.unrecognized_events,
            "unrecognized_types": sorted(self.unrecognized_types),
            "final_text": long_text(self.texts[-1]) if self.texts else None,
            "texts": [long_text(t) for t in self.texts],
            "terminator": terminator,
            "turns_completed": self.turns_completed,
            "stages": self.stages,
            "elapsed_ms": self.elapsed_ms,
            "preview": long_text("".join(self.preview)) if self.preview else None,
            "usage": self.usage,
        }


#: Texts longer than this travel as a digest when the kit accepts one (protocol v1,
#: STELLA_CONFORM_DIGESTS=sha256): a 50 MB text repeated in final_text and texts would
#: break the kit's 4 MiB message cap.
LONG_TEXT = 64 * 1024


def long_text(text: str) -> Any:
    if len(text) <= LONG_TEXT or os.environ.get("STELLA_CONFORM_DIGESTS") != "sha256":
        return text
    import hashlib

    return {"sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}


# ---------------------------------------------------------------------- the adapter


def physical_lines(stream: BinaryIO) -> Any:
    """(line number, content, terminated) for each physical line, read as it arrives."""
    number = 0
    while True:
        chunk = stream.readline()
        if not chunk:
            return
        number += 1
        if chunk.endswith(b"\n"):
            yield number, chunk[:-1], True
        else:
            yield number, chunk, False


class Adapter:
    """Runs a :class:`Reader` in whichever mode the kit asks for."""

    reader_class: type[Reader] = Reader
    profiles: tuple[str, ...] = ("reader", "dashboard")
    buffer_whole_stream = False  # rule 1 says never; a broken client sets this
    drop_unterminated_last_line = False
    #: The protocol modes this adapter speaks, listed in its hello.
    modes: tuple[str, ...] = ("report", "persistent")
    #: What the client claims to read (``knows``, ``computes``, ...), sent in the hello.
    claims: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self.out = sys.stdout

    def emit(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate from the stream: send it escaped
                text = json.dumps(message)
        self.out.write(text + "\n")
        self.out.flush()

    def hello(self) -> None:
        self.emit(
            {
                "kind": "hello",
                "protocol": PROTOCOL,
                "client": {"name": NAME, "version": VERSION, "language": "python"},
                "profiles": list(self.profiles),
                "modes": list(self.modes),
                **self.claims,
            }
        )

    def lines(self, stream: BinaryIO) -> Any:
        source = physical_lines(stream)
        if self.buffer_whole_stream:
            source = iter(list(source))
        for number, content, terminated in source:
            if self.drop_unterminated_last_line and not terminated:
                continue
            yield number, content, terminated

    def read(self, stream: BinaryIO, emit: Any) -> Reader:
        reader = self.reader_class()
        for number, content, terminated in self.lines(stream):
            for message in reader.push(number, content, terminated):
                emit(message)
            if reader.rejected:
                return reader
        for message in reader.finish():
            emit(message)
        return reader

    def run_exit(self, argv: list[str]) -> int:
        if argv:
            with open(argv[0], "rb") as fh:
                reader = self.read(fh, lambda m: None)
        else:
            reader = self.read(sys.stdin.buffer, lambda m: None)
        if reader.rejected:
            line, reason = reader.rejected
            sys.stderr.write(f"{NAME}: line {line}: {reason}\n")
            return 1
        return 0

    def run_report(self) -> int:
        self.hello()
        reader = self.read(sys.stdin.buffer, self.emit)
        self.emit(reader.summary())
        return 1 if reader.rejected else 0

    def run_persistent(self) -> int:
        self.hello()
        for raw in sys.stdin.buffer:
            message = json.loads(raw)
            if message.get("kind") == "shutdown":
                return 0
            if message.get("kind") != "case":
                continue
            case_id = message["id"]
            import base64
            import io

            data = io.BytesIO(base64.b64decode(message["stream"]))
            reader = self.read(data, lambda m, i=case_id: self.emit({**m, "id": i}))
            self.emit({**reader.summary(), "id": case_id})
        return 0

    def main(self, argv: list[str] | None = None) -> int:
        argv = sys.argv[1:] if argv is None else argv
        mode = os.environ.get("STELLA_CONFORM_MODE", "exit")
        if mode == "report":
            return self.run_report()
        if mode == "persistent":
            return self.run_persistent()
        return self.run_exit(argv)


def main(adapter: type[Adapter] = Adapter) -> None:
    try:
        sys.exit(adapter().main())
    except BrokenPipeError:
        sys.exit(1)
