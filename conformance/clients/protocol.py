"""Parse and validate what a client writes in report and persistent modes.

Every byte a client writes is untrusted.  :func:`parse_message` turns one
stdout line into a checked message or raises :class:`ProtocolError` whose text
names the offending output, so the runner can report "the adapter is broken"
without the kit itself failing.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from stella_conform.schemas.fastfit import FastCompiler, Fits
from stella_conform.schemas.fit import FitCheck, FitCompiler
from stella_conform.schemas.vocabulary import load_schema

PROTOCOL_VERSION = 1
MODE_ENV = "STELLA_CONFORM_MODE"
PROTOCOL_ENV = "STELLA_CONFORM_PROTOCOL"
#: Set to ``sha256``: the kit accepts ``{"sha256": HEX}`` for a long text in a summary.
DIGESTS_ENV = "STELLA_CONFORM_DIGESTS"
#: Envelope profile: the stella command whose output the document is.
COMMAND_ENV = "STELLA_CONFORM_COMMAND"
CLIENT_KINDS = ("hello", "line", "pending", "summary")


class ProtocolError(Exception):
    """The client broke the adapter protocol; the message says how.

    ``cause`` is the mistake without the output it quotes: the same in every case that
    shows it, so a report can say it once.
    """

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause or message


def excerpt(raw: bytes, limit: int = 120) -> str:
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return repr(text + ("…" if len(raw) > limit else ""))


_DEFS = {"hello": "Hello", "line": "Line", "pending": "Pending", "summary": "Summary"}


@cache
def _checks() -> dict[str, FitCheck]:
    """The explaining check of each message kind (why a message does not fit)."""
    compiler = FitCompiler(load_schema("protocol.schema.json"))
    return {kind: compiler.compile({"$ref": f"#/$defs/{name}"}) for kind, name in _DEFS.items()}


@cache
def _fits() -> dict[str, Fits]:
    """The same question answered yes/no by generated code (``schemas/fastfit.py``), as the
    decoder asks it: a client writes a message per line of every case, so the explaining
    check, many times dearer, runs only on a no."""
    compiler = FastCompiler(load_schema("protocol.schema.json"))
    return compiler.compile_many({kind: {"$ref": f"#/$defs/{n}"} for kind, n in _DEFS.items()})


#: ``json.loads`` minus its Python layers (a message per line of every case): the
#: default decoder's own scanner, the same acceptance (NaN included) and the same failures.
_SCAN: Any = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")


def _loads(text: str) -> Any:
    if text.startswith("\ufeff"):  # json.loads refuses a BOM
        raise ValueError("Unexpected UTF-8 BOM")
    # a message starts with its "{" and ends at the line's end: no whitespace to skip
    start = 0 if text[:1] == "{" else _WS.match(text).end()  # type: ignore[union-attr]
    value, end = _SCAN(text, start)
    if end != len(text) and _WS.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise ValueError("extra data")
    return value


@cache
def _enums() -> dict[str, dict[str, list[Any]]]:
    """Per message kind, the fields that take one of a list of values, and the values."""
    defs = load_schema("protocol.schema.json")["$defs"]
    return {
        kind: {
            name: list(spec["enum"])
            for name, spec in defs[definition]["properties"].items()
            if isinstance(spec, dict) and "enum" in spec
        }
        for kind, definition in _DEFS.items()
    }


def allowed_values(values: list[Any]) -> str:
    """``"run_complete", "error" or null``: values as a client writes them, in JSON."""
    spelled = [json.dumps(v) for v in values]
    return spelled[0] if len(spelled) == 1 else f"{', '.join(spelled[:-1])} or {spelled[-1]}"


def _allowed_values(kind: str, message: dict[str, Any]) -> str | None:
    """A field outside its list of values, said with every allowed value in JSON spelling
    (``turn_complete`` is not a terminator: the summary's are ``run_complete``, ``error``
    and null), or None when that is not what is wrong."""
    for name, values in _enums()[kind].items():
        if name in message and not any(_same(message[name], v) for v in values):
            got = json.dumps(message[name], ensure_ascii=False)
            where = "#the-summary-field-by-field" if kind == "summary" else ""
            return (
                f"{name!r} is {clip_text(got)}; the allowed values are {allowed_values(values)}"
                f" (docs/adapter-protocol.md{where})"
            )
    return None


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def clip_text(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_message(raw: bytes, *, expect: tuple[str, ...] = CLIENT_KINDS) -> dict[str, Any]:
    """One client message, validated; raises :class:`ProtocolError`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"output is not UTF-8 (byte {exc.start}): {excerpt(raw)}") from None
    try:
        message = _loads(text)
    except (RecursionError, ValueError, StopIteration):
        raise ProtocolError(f"output line is not JSON: {excerpt(raw)}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"output line is not a JSON object: {excerpt(raw)}")
    kind = message.get("kind")
    if not isinstance(kind, str) or kind not in _checks():  # [] or {} are unhashable
        raise ProtocolError(f"unknown message kind {kind!r}: {excerpt(raw)}")
    if kind not in expect:
        raise ProtocolError(f"expected {' or '.join(expect)}, got {kind}: {excerpt(raw)}")
    problem = None if _fits()[kind](message) else _checks()[kind](message, "")
    if problem is not None:
        problem = _allowed_values(kind, message) or problem
        cause = f"malformed {kind} message ({problem})"
        raise ProtocolError(f"{cause}: {excerpt(raw)}", cause)
    if kind == "hello" and message["protocol"] != PROTOCOL_VERSION:
        raise ProtocolError(
            f"client speaks protocol {message['protocol']}, this kit speaks {PROTOCOL_VERSION}"
        )
    return message
