"""Tell a crash from a rejection by what the client's runtime printed on the way out.

In exit mode the verdict is the exit status, and 1 means "rejected".  But a
Python, Node.js, Java or Ruby program that dies of an uncaught exception also
exits 1, so a ``KeyError`` in the client's own code would count as a correct
rejection of a corrupt stream.  Every mainstream runtime prints an
unmistakable report when a program dies that way; :func:`crash_signature`
recognises those reports in the client's stderr and names the exception, so
the case is graded ``error`` ("crashed: KeyError: 'type'") instead.

A client that rejects *on purpose* by letting an exception escape can turn the
detection off (``run --no-crash-detection``); docs/adapter-protocol.md lists the
signatures.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: The most of an exception's message quoted in a crash's description.
MESSAGE_CAP = 200

_PY_HEADER = "Traceback (most recent call last):"
# "KeyError: 'type'", "json.decoder.JSONDecodeError: Expecting value: line 1 ...", "StopIteration"
_PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?::.*)?$")
_NODE_FRAME = re.compile(r"^\s+at \S")
# "TypeError: x", "Error [ERR_INVALID_ARG_TYPE]: x", "SyntaxError: Unexpected token } in JSON"
_NODE_ERROR = re.compile(r"^(?:Uncaught )?[A-Za-z_$][\w$.]*(?: \[[A-Z0-9_]+\])?(?::.*)?$")
_NODE_VERSION = re.compile(r"^Node\.js v\d+", re.MULTILINE)
_GO_PANIC = re.compile(r"^(panic: .*|fatal error: .*)$", re.MULTILINE)
_GO_GOROUTINE = re.compile(r"^goroutine \d+ \[", re.MULTILINE)
# Rust 1.73+: "thread 'main' panicked at src/main.rs:5:9:\n<message>";
# Rust 1.92+ adds the thread id: "thread 'main' (12014) panicked at ...";
# older: "thread 'main' panicked at '<message>', src/main.rs:5:9".
_RUST_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (.*)$", re.MULTILINE)
_JVM = re.compile(r'^Exception in thread "[^"]*" (\S.*)$', re.MULTILINE)
_DOTNET = re.compile(r"^Unhandled [eE]xception\. (\S.*)$", re.MULTILINE)
# "c.rb:3:in 'Hash#fetch': key not found: \"type\" (KeyError)"
_RUBY = re.compile(r"^\S+:\d+:in [`'][^']*': (.*) \(([A-Z][\w:]*)\)$", re.MULTILINE)


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MESSAGE_CAP else text[:MESSAGE_CAP] + "…"


def _python(text: str) -> str | None:
    at = text.rfind(_PY_HEADER)
    if at < 0:
        return None
    # The frames are indented; the first unindented line after the last header names
    # the exception (chained exceptions each start a new header, so the last one wins).
    for line in text[at + len(_PY_HEADER) :].splitlines():
        if line and not line[0].isspace() and _PY_EXCEPTION.match(line):
            return _short(line)
    return "an uncaught Python exception"


def _node(text: str) -> str | None:
    lines = text.splitlines()
    for index, line in enumerate(lines[:-1]):
        if _NODE_ERROR.match(line) and _NODE_FRAME.match(lines[index + 1]):
            return _short(line.removeprefix("Uncaught "))
    if _NODE_VERSION.search(text):
        # A thrown non-Error value: "<value>\n(Use `node --trace-uncaught ...`)".
        for index, line in enumerate(lines):
            if line.startswith("(Use `node --trace-uncaught") and index > 0:
                return _short(f"uncaught {lines[index - 1]}")
        return "an uncaught Node.js exception"
    return None


def _go(text: str) -> str | None:
    panic = _GO_PANIC.search(text)
    if panic and _GO_GOROUTINE.search(text, panic.end()):
        return _short(panic.group(1))
    return None


def _rust(text: str) -> str | None:
    panic = _RUST_PANIC.search(text)
    if panic is None:
        return None
    where = panic.group(1)
    if where.startswith("'"):  # the old format carries the message itself
        return _short(f"panic: {where}")
    following = text[panic.end() :].lstrip("\n").splitlines()
    message = following[0] if following else ""
    return _short(f"panic at {where.rstrip(':')}: {message}" if message else f"panic at {where}")


def _jvm(text: str) -> str | None:
    found = _JVM.search(text)
    return _short(found.group(1)) if found else None


def _dotnet(text: str) -> str | None:
    found = _DOTNET.search(text)
    return _short(found.group(1)) if found else None


def _ruby(text: str) -> str | None:
    found = _RUBY.search(text)
    return _short(f"{found.group(2)}: {found.group(1)}") if found else None


#: Runtime name and recogniser, in the order they are tried.
SIGNATURES: tuple[tuple[str, Callable[[str], str | None]], ...] = (
    ("Python", _python),
    ("Node.js", _node),
    ("Go", _go),
    ("Rust", _rust),
    ("JVM", _jvm),
    (".NET", _dotnet),
    ("Ruby", _ruby),
)


def crash_signature(stderr: str) -> str | None:
    """The exception a runtime reported dying of in ``stderr``, or None.

    >>> crash_signature('Traceback (most recent call last):\\n  File "c.py", line 4\\n'
    ...                 "KeyError: 'type'\\n")
    "KeyError: 'type'"
    """
    for _runtime, recognise in SIGNATURES:
        found = recognise(stderr)
        if found is not None:
            return found
    return None
