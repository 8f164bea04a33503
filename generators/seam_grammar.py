"""The seams' rows of the grammar audit (:mod:`stella_conform.generators.grammar`), and the
scanner that finds them in bytes.

The grammar's productions say what a line holds; these say where a reader joins what it
read: a line's edges (a character a language's ``strip()`` removes that JSON does not
take as whitespace), its read buffer's edges (a character across 8, 16 or 64 KiB), the
stream's end (a last line without its newline that is content, or a bad body), the order
of a run's events (previews across a tool call, a text without previews after some), and
an envelope without a cost or token counts.  Like the grammar's, each is found in the
bytes (the events read as the default vocabulary reads them), never taken from what a
mutation meant to do.

    >>> cut = b'{"type":"text","text":"a"}\\n\\x1e\\n{"type":"text_delta","delta":"b"}'
    >>> sorted(seams_in(cut, "stream"))
    ['frame.strip-control-edge', 'seq.unterminated-delta-last']
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from stella_conform.schemas.vocabulary import Vocabulary

_READER = ("reader",)
_BOTH = ("reader", "dashboard")
_DASHBOARD = ("dashboard",)

#: ``(id, area, what, profiles)`` of each production, in the audit's order.
SEAM_ROWS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "frame.strip-control-edge",
        "framing",
        "FS, GS, RS or US (which Python's str.strip() removes; not JSON) at a line's edge, "
        "or as the line",
        _READER,
    ),
    (
        "frame.trim-bom-edge",
        "framing",
        "U+FEFF (which JavaScript's trim() removes; not JSON) at an edge of a line after the "
        "first, or as the line",
        _READER,
    ),
    (
        "frame.char-across-8k",
        "framing",
        "a multi-byte character across an 8 KiB boundary of its line or the stream",
        _BOTH,
    ),
    (
        "frame.char-across-16k",
        "framing",
        "a multi-byte character across a 16 KiB boundary of its line or the stream",
        _BOTH,
    ),
    (
        "frame.char-across-64k",
        "framing",
        "a multi-byte character across a 64 KiB boundary of the stream (a pipe's read)",
        _BOTH,
    ),
    (
        "frame.bad-body-unterminated-last",
        "framing",
        "a known event whose body does not fit, as the last line, without its newline",
        _READER,
    ),
    (
        "seq.unterminated-text-last",
        "sequences",
        "a run cut off on a text, the last line, without its newline",
        _BOTH,
    ),
    (
        "seq.unterminated-delta-last",
        "sequences",
        "a run cut off on a text_delta, the last line, without its newline",
        _BOTH,
    ),
    (
        "seq.unterminated-tool-result-last",
        "sequences",
        "a run cut off on a tool_result, the last line, without its newline",
        _READER,
    ),
    (
        "seq.preview-across-tool",
        "sequences",
        "a text_delta, then a tool call before any text: the preview outlives the step",
        _DASHBOARD,
    ),
    (
        "seq.preview-left-after-tool",
        "sequences",
        "previews from before a tool call that no text replaces by the stream's end",
        _DASHBOARD,
    ),
    (
        "seq.text-without-deltas-after-deltas",
        "sequences",
        "a text no text_delta preceded, after the previews of an earlier text",
        _DASHBOARD,
    ),
    (
        "env.no-cost-no-tokens",
        "envelope",
        "an envelope with a status but no cost_usd and no step_usage: nothing to report",
        ("envelope",),
    ),
)

#: FS, GS, RS and US, which Python's ``str.strip()`` removes (JSON does not).
_PY_STRIP = frozenset(b"\x1c\x1d\x1e\x1f")
#: U+FEFF in UTF-8, which JavaScript's ``trim()`` removes.
_BOM = b"\xef\xbb\xbf"
_JSON_WS = b" \t\r\n"
_CONTENT = {"text": "text", "text_delta": "delta", "tool_result": "tool-result"}
_SIZES = ((8192, "8k"), (16384, "16k"))


@cache
def _vocab() -> Vocabulary:
    return Vocabulary.default()


def _object(content: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _fits(event: dict[str, Any]) -> bool | None:
    """Whether a known event's body fits (``None``: not a known type)."""
    vocab = _vocab()
    tag = event.get("type")
    if not isinstance(tag, str) or tag not in vocab.known:
        return None
    return vocab.misfit(tag, vocab.normalize(tag, event)) is None


def _edges(found: set[str], number: int, content: bytes) -> None:
    """A trimmed-away character at an edge of a line that does not parse."""
    if content[0] in _PY_STRIP or content[-1] in _PY_STRIP:
        found.add("frame.strip-control-edge")
    if number > 0 and (content.startswith(_BOM) or content.endswith(_BOM)):
        found.add("frame.trim-bom-edge")


def _across(data: bytes, size: int, lines: bool) -> bool:
    """A multi-byte character across a ``size`` offset of the stream (or of a line)."""
    if len(data) <= size or max(data) < 0x80:
        return False
    origins = [0]
    if lines:
        origins += [m.end() for m in re.finditer(rb"\n", data)]
    for origin in origins:
        end = data.find(b"\n", origin) if lines else -1
        end = len(data) if end < 0 else end
        for edge in range(origin + size, end, size):
            if 0x80 <= data[edge] < 0xC0:
                return True
    return False


def _order(found: set[str], events: list[dict[str, Any]]) -> None:
    """The previews' sequences: across a tool call, left at the end, a text without."""
    pending = across = streamed = False
    for event in events:
        tag = event.get("type")
        if tag == "text_delta":
            pending = True
        elif tag == "tool_start" and pending:
            found.add("seq.preview-across-tool")
            across = True
        elif tag == "text":
            if not pending and streamed:
                found.add("seq.text-without-deltas-after-deltas")
            streamed = streamed or pending
            pending = across = False
    if pending and across:
        found.add("seq.preview-left-after-tool")


def _stream(found: set[str], data: bytes) -> None:
    chunks = data.split(b"\n")
    terminated = data.endswith(b"\n")
    if terminated:
        chunks.pop()
    events: list[dict[str, Any]] = []
    for number, chunk in enumerate(chunks):
        content = chunk[:-1] if chunk.endswith(b"\r") else chunk
        if not content.strip(_JSON_WS):
            continue
        event = _object(content)
        if event is None:
            _edges(found, number, content)
            continue
        if _fits(event):
            events.append(event)
    _order(found, events)
    last = chunks[-1] if chunks and not terminated else b""
    if last.strip(_JSON_WS):
        event = _object(last)
        fits = None if event is None else _fits(event)
        if fits is False:
            found.add("frame.bad-body-unterminated-last")
        elif fits and event is not None and event.get("type") in _CONTENT:
            found.add(f"seq.unterminated-{_CONTENT[event['type']]}-last")
    for size, name in _SIZES:
        if _across(data, size, lines=True):
            found.add(f"frame.char-across-{name}")
    if _across(data, 65536, lines=False):
        found.add("frame.char-across-64k")


def _envelope(found: set[str], data: bytes) -> None:
    doc = _object(data)
    if doc is None or "status" not in doc or "cost_usd" in doc:
        return
    events = doc.get("events")
    if not isinstance(events, list) or not any(
        isinstance(e, dict) and e.get("type") == "step_usage" for e in events
    ):
        found.add("env.no-cost-no-tokens")


def seams_in(data: bytes, form: str) -> set[str]:
    """The seams' productions these bytes hold (``form``: a text form's name)."""
    found: set[str] = set()
    if form == "stream":
        _stream(found, data)
    elif form == "envelope":
        _envelope(found, data)
    return found


__all__ = ["SEAM_ROWS", "seams_in"]
