#!/usr/bin/env python3
"""A conforming client that takes reading B at every registered point of the contract.

``reference_client.py`` takes the kit's default (reading A) everywhere; this one
takes the other reading everywhere (docs/contract-readings.md), and still
passes every check: the proof that the grader honours both readings.

* a UTF-8 BOM before the first line is ignored (utf8-bom)
* Unicode whitespace around a line is trimmed; a line of it is blank (unicode-whitespace)
* a line that is JSON but not an object is unrecognized (non-object-line)
* a missing or non-string type is an error (missing-or-non-string-type)
* a stage without scope is an error (scopeless-stage)
* a field beside its legacy alias is an error (field-and-alias)
* ts is not part of the event: any value is ignored (ts-out-of-range)
* an unparseable line ended by a newline is corrupt, even the last (torn-then-newline)
* JSON as serde_json reads it: -0 is a float, numbers beyond f64, lone surrogates and
  nesting of 128 levels or more are not JSON, a duplicate field of a known event is an error
  (negative-zero, number-beyond-f64, lone-surrogate, deep-nesting, duplicate-keys)
* a key beside a tagged union's arm is an error (extra-key-beside-arm), two arms too
* ``ts: null`` on a known type is an error: the wire schema types it as an integer (ts-null)
* the version gap counts distinct unrecognized type names, not events (unknown-count)
* an integral number written as a float (``4200.0``, ``1e3``) is the integer it equals
  (integral-float)
* nothing is read after ``run_complete``: nothing more is coming (after-terminator)
* the elapsed time is the whole run's, last stamp less first, clamped to 0 (elapsed-clamp)
* a struct written as an array and a unit variant as a one-key map are read as serde reads
  them (serde-forms)
"""

from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stella_reader import (
    ALIASES,
    Adapter,
    Reader,
    Rejected,
    _reject_constant,
    main,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a tenth of a client's start-up; annotations are strings
    from typing import Any

#: Unicode White_Space (Rust's str::trim), JSON's four included.
UNICODE_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
BOM = b"\xef\xbb\xbf"
SURROGATE = re.compile("[\ud800-\udfff]")
MAX_DEPTH = 128
F64_MAX = 1.7976931348623157e308


#: The structs of the kit's default vocabulary, by the field that holds one: their fields
#: in declaration order (serde reads a struct from an array of them, in that order).
STRUCTS = {("tool_start", "call"): ("call_id", "name", "input")}
#: The arms of a tool result's output, each a struct (read from an array as well).
ARMS = {"ok": ("content",), "error": ("message",)}
#: The enums of unit variants, by the field that holds one (serde reads {"run": null}).
UNIT_ENUMS = {("stage", "scope"), ("budget_tick", "mode"), ("file_change", "kind")}


def serde_forms(tag: str, event: dict[str, Any]) -> dict[str, Any]:
    """The event as serde reads it: a struct written as an array is the object of its
    fields in declaration order, a unit variant written as a one-key map is its name."""
    out = dict(event)
    for (owner, name), fields in STRUCTS.items():
        value = out.get(name)
        if owner == tag and isinstance(value, list) and len(value) <= len(fields):
            out[name] = dict(zip(fields, value, strict=False))
    for owner, name in UNIT_ENUMS:
        value = out.get(name)
        if owner == tag and isinstance(value, dict) and len(value) == 1:
            ((variant, inner),) = value.items()
            if inner is None:
                out[name] = variant
    output = out.get("output")
    if tag == "tool_result" and isinstance(output, dict) and len(output) == 1:
        ((arm, inner),) = output.items()
        if arm in ARMS and isinstance(inner, list) and len(inner) <= len(ARMS[arm]):
            out["output"] = {arm: dict(zip(ARMS[arm], inner, strict=False))}
    return out


class NonObject(dict):  # type: ignore[type-arg]
    """A line that is JSON but not an object, carried to the unrecognized branch."""


def _float(text: str) -> Any:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    # 1.0 (or 1e3) is the integer it equals, as JSON Schema's integer reads it
    return int(value) if value.is_integer() else value


def _int(text: str) -> Any:
    if text == "-0":
        return -0.0  # a float to serde: it does not fit an integer field
    value = int(text)
    if abs(value) > F64_MAX:
        raise ValueError("number out of range")
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _strings(value: Any) -> Any:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class ReaderB(Reader):
    """The reference reader, with reading B at every registered point."""

    def __init__(self) -> None:
        super().__init__()
        self.duplicates = False
        self.named = 0  # unrecognized events with a type name

    def trim(self, content: bytes) -> bytes:
        """Unicode whitespace around the line goes (a line of it is blank)."""
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return content
        return text.strip(UNICODE_WS).encode("utf-8", "surrogatepass")

    def push(self, line: int, content: bytes, terminated: bool = True) -> list[dict[str, Any]]:
        if line == 1 and content.startswith(BOM):
            content = content[len(BOM) :]
        out = super().push(line, self.trim(content), terminated)
        if terminated and self.pending is not None and self.pending[0] == line:
            # ended by a newline, so written whole: corrupt, not torn
            bad, reason = self.pending
            self.pending = None
            return self._reject(bad, f"corrupt line: {reason}")
        return out

    def parse(self, content: bytes) -> Any:
        self.duplicates = False

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            if len({k for k, _ in items}) != len(items):
                self.duplicates = True
            return dict(items)

        value = json.loads(
            content.decode("utf-8"),
            parse_constant=_reject_constant,
            parse_float=_float,
            parse_int=_int,
            object_pairs_hook=pairs,
        )
        if any(SURROGATE.search(s) for s in _strings(value)):
            raise ValueError("lone surrogate in a string")
        if _depth(value) >= MAX_DEPTH:  # serde_json refuses 128 levels
            raise ValueError(f"nested {MAX_DEPTH} levels or deeper")
        if not isinstance(value, dict):
            return NonObject(value=value)
        return value

    def type_of(self, event: dict[str, Any]) -> str | None:
        if isinstance(event, NonObject):
            return None
        tag = event.get("type")
        if not isinstance(tag, str):
            raise Rejected("the line has no string type")
        return tag if tag in self.known_types else None

    def on_unknown(self, line: int, event: dict[str, Any]) -> None:
        if isinstance(event, NonObject):
            self.unrecognized_events += 1
            return
        super().on_unknown(line, event)
        self.named += isinstance(event.get("type"), str)

    def normalize(self, tag: str, event: dict[str, Any]) -> dict[str, Any]:
        alias = ALIASES.get(tag)
        if alias and alias[0] in event and alias[1] in event:
            raise Rejected(f"{tag}: both {alias[0]!r} and its alias {alias[1]!r}")
        return super().normalize(tag, serde_forms(tag, event))

    def misfit(self, tag: str, event: dict[str, Any]) -> str | None:
        if self.duplicates:
            return f"{tag}: a duplicate field"
        if "ts" in event and event["ts"] is None:
            return f"{tag}: 'ts' must be an integer, got null"
        output = event.get("output")
        if tag == "tool_result" and isinstance(output, dict) and len(output) > 1:
            return f"{tag}: output has a key beside its arm"
        unstamped = {k: v for k, v in event.items() if k != "ts"}  # ts is the sink's, ignored
        return super().misfit(tag, unstamped)

    first_ts: int | None = None

    def _clock(self, ts: Any) -> None:
        if isinstance(ts, int) and not isinstance(ts, bool) and 0 <= ts < 2**64:
            # the whole run's time difference, clamped: last stamp less first, at least 0
            self.first_ts = ts if self.first_ts is None else self.first_ts
            self.elapsed_ms = max(0, ts - self.first_ts)

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        # each type name once (a line without a name still counts once)
        out["unrecognized_events"] += len(self.unrecognized_types) - self.named
        return out


class AdapterB(Adapter):
    reader_class = ReaderB

    def read(self, stream: Any, emit: Any) -> Reader:
        reader = self.reader_class()
        for number, content, terminated in self.lines(stream):
            for message in reader.push(number, content, terminated):
                emit(message)
            if reader.rejected or reader.run_complete:
                return reader  # nothing more is coming: nothing after run_complete is read
        for message in reader.finish():
            emit(message)
        return reader


if __name__ == "__main__":
    main(AdapterB)
