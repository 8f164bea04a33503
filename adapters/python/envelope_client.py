#!/usr/bin/env python3
"""A conforming reader of stella's JSON envelopes, with a stella-conform adapter.

What a script that runs ``stella run --output-format json`` (or a query
command with ``--format json``) should do with the one object it gets back:
read only the keys it uses, stop loudly on an unexpected ``schema_version``,
take the failure shapes in stride, find ``files_touched`` one level in, and
read ``events`` by the stream rules.  Standard library only.

Which command printed the document comes from ``STELLA_CONFORM_COMMAND``
(default ``stella run --output-format json``), as a real script knows what it
ran.  Modes as in ``stella_reader.py``: ``exit`` (exit 0 / 1), ``report`` and
``persistent`` (a hello, then one summary per document).
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import PROTOCOL, Reader

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any

NAME = "stella-envelope-reader-python"
QUERY = ("stats", "usage report", "inspect", "calibration", "memory list", "context list",
         "context validate")  # fmt: skip


#: What the reader claims to read, added to its hello (a narrower reader sets it).
HELLO_CLAIMS: dict[str, Any] = {}


class Refused(Exception):
    """The envelope cannot be read safely; stop loudly."""


def is_query(command: str) -> bool:
    words = [w for w in command.split() if not w.startswith("-")]
    if words[:1] == ["stella"]:
        words = words[1:]
    text = " ".join(words)
    return any(text == q or text.startswith(q + " ") for q in QUERY)


class EnvelopeReader:
    """Reads one envelope. Override a method to break a rule."""

    def parse(self, data: bytes) -> Any:
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise Refused(f"not a JSON document: {exc}") from None

    def check_version(self, doc: dict[str, Any]) -> None:
        version = doc.get("schema_version")
        if type(version) is not int or version != 1:
            raise Refused(f"unsupported schema_version {version!r}; this script knows 1")

    def optional(self, doc: dict[str, Any], key: str, kind: type) -> Any:
        value = doc.get(key)
        if value is not None and not isinstance(value, kind):
            raise Refused(f"{key!r} has an unexpected type")
        return value

    def files_touched(self, doc: dict[str, Any]) -> list[str] | None:
        payload = self.optional(doc, "files_touched", dict)
        if payload is None or payload.get("files_touched") is None:
            return None
        records = payload["files_touched"]
        if not isinstance(records, list):
            raise Refused("files_touched.files_touched is not an array")
        paths = []
        for record in records:
            if not isinstance(record, dict) or not isinstance(record.get("path"), str):
                raise Refused("a files_touched record has no path")
            paths.append(record["path"])
        return paths

    def events(self, doc: dict[str, Any]) -> Reader | None:
        events = self.optional(doc, "events", list)
        if events is None:
            return None
        reader = Reader()
        for index, event in enumerate(events, 1):
            reader.push(index, json.dumps(event).encode("utf-8"))
            if reader.rejected or reader.pending:
                raise Refused(
                    f"events[{index - 1}]: {reader.rejected[1] if reader.rejected else 'bad'}"
                )
        return reader

    def read(self, data: bytes, command: str) -> dict[str, Any]:
        doc = self.parse(data)
        if not isinstance(doc, dict):
            raise Refused("the envelope is not an object")
        self.check_version(doc)
        out: dict[str, Any] = {}
        if is_query(command):
            rows = doc.get("rows")
            if "rows" in doc and not isinstance(rows, list):
                raise Refused("rows is not an array")
            out["rows"] = len(rows) if isinstance(rows, list) else None
            return out
        status = doc.get("status")
        if not isinstance(status, str):
            raise Refused("status is missing")
        out["status"] = status
        out["text"] = self.optional(doc, "text", str)
        out["model"] = self.optional(doc, "model", str)
        out["stop_reason"] = self.optional(doc, "reason", str)
        cost = doc.get("cost_usd")
        out["cost_usd"] = cost if isinstance(cost, (int, float)) and cost is not True else None
        out["files_touched"] = self.files_touched(doc)
        reader = self.events(doc)
        out["unrecognized_events"] = reader.unrecognized_events if reader else None
        out["input_tokens"], out["output_tokens"] = self.tokens(doc, reader)
        return out

    def tokens(self, doc: dict[str, Any], reader: Reader | None) -> tuple[Any, Any]:
        """Token counts: the envelope has no keys for them; the step_usage events do."""
        if reader is None:
            return None, None
        steps = [e for e in doc["events"] if isinstance(e, dict) and e.get("type") == "step_usage"]
        return sum(e["input_tokens"] for e in steps), sum(e["output_tokens"] for e in steps)


def summarize(reader: EnvelopeReader, data: bytes, command: str) -> dict[str, Any]:
    try:
        fields = reader.read(data, command)
    except Refused as exc:
        return {"kind": "summary", "verdict": "reject", "error": str(exc)}
    return {"kind": "summary", "verdict": "accept", **fields}


def main(reader_class: type[EnvelopeReader] = EnvelopeReader) -> None:
    mode = os.environ.get("STELLA_CONFORM_MODE", "exit")
    default = os.environ.get("STELLA_CONFORM_COMMAND", "stella run --output-format json")
    out = sys.stdout

    def emit(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    hello = {"kind": "hello", "protocol": PROTOCOL, "profiles": ["envelope"],
             "client": {"name": NAME, "version": "1.0", "language": "python"},
             **HELLO_CLAIMS}  # fmt: skip
    if mode == "persistent":
        emit(hello)
        for raw in sys.stdin.buffer:
            message = json.loads(raw)
            if message.get("kind") == "shutdown":
                sys.exit(0)
            command = message.get("env", {}).get("STELLA_CONFORM_COMMAND", default)
            import base64  # persistent mode only

            data = base64.b64decode(message["stream"])
            emit({**summarize(reader_class(), data, command), "id": message["id"]})
        sys.exit(0)
    if mode == "report":
        emit(hello)  # before reading: the kit sends the document after the hello
    if len(sys.argv) > 1:
        with open(sys.argv[1], "rb") as fh:
            data = fh.read()
    else:
        data = sys.stdin.buffer.read()
    summary = summarize(reader_class(), data, default)
    if mode == "report":
        emit(summary)
    elif summary["verdict"] == "reject":
        sys.stderr.write(f"{NAME}: {summary['error']}\n")
    sys.exit(0 if summary["verdict"] == "accept" else 1)


if __name__ == "__main__":
    main()
