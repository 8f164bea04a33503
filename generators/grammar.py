"""The JSON grammar and the line framing, production by production, and a scanner that says
which of them a case's bytes hold.

The generators build runs event by event; real parsers break on the text: their line
readers, stream decoders, number types and key matching.  This module is the audit's
instrument: :data:`PRODUCTIONS` lists what RFC 8259 allows (and forbids) between tokens,
in strings, numbers and nesting, and what the contract's framing ("one JSON object per
line") allows on a line, in words; :func:`scan` finds them in bytes, never trusting
what a mutation meant to do.  ``benchmarks/reach.py`` scans the generated cases of a
default run per profile and writes the table in ``docs/generators.md``; the test suite
holds every production to being reached in every profile it lists.

Example::

    >>> sorted(scan(b'{"type" : "text","text":"caf\\\\u00e9"}\\r\\n', "stream"))[:3]
    ['frame.crlf', 'str.escape-u-bmp', 'ws.space-between']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from stella_conform.generators.seam_grammar import SEAM_ROWS, seams_in
from stella_conform.oracle.decoder import UNICODE_WS, beyond_f64, parse_line


@dataclass(frozen=True)
class TextForm:
    """How an input's bytes hold JSON: one object per line, or one document.

    Each input kind the kit grades names its form (``conformance/kinds``); :func:`scan` reads
    the bytes by it.  The form's ``name`` is what :func:`scan` takes as ``kind``.
    """

    name: str
    #: One JSON text (the newline stella prints after it is not its content), not lines.
    document: bool
    #: The key the writer puts first (another first key is ``obj.key-order``).
    first_key: str
    #: The key naming an event's type ("" when the text has none).
    type_key: str


#: A stream: lines of events, each led by its ``type``.
STREAM_LINES = TextForm("stream", document=False, first_key="type", type_key="type")
#: A trace journal: lines of entries, each led by its ``seq``, typed by ``event``.
JOURNAL_LINES = TextForm("journal", document=False, first_key="seq", type_key="event")
#: An envelope: one document, led by its ``schema_version``.
ENVELOPE_DOCUMENT = TextForm("envelope", document=True, first_key="schema_version", type_key="")
#: The forms :func:`scan` reads, by name.
FORMS = {form.name: form for form in (STREAM_LINES, JOURNAL_LINES, ENVELOPE_DOCUMENT)}
#: The names :func:`scan` takes as ``kind``.
KINDS = tuple(FORMS)


@dataclass(frozen=True)
class Production:
    """One thing the grammar or the framing allows (or forbids), and where it must reach."""

    id: str
    area: str
    what: str
    #: Profiles whose checks it can change, so a default run of each must draw it.
    profiles: tuple[str, ...]


_STREAM = ("reader", "dashboard", "recorder")
_TEXT = ("reader", "dashboard", "recorder", "envelope", "trace")
#: Where strings hold every kind of character (a journal's hold identifiers only).
_DOCS = ("reader", "dashboard", "recorder", "envelope")

PRODUCTIONS: tuple[Production, ...] = (
    # whitespace: RFC 8259 section 2, ws = space, tab, LF, CR
    Production("ws.space-between", "whitespace", "a space between two tokens", _TEXT),
    Production("ws.tab-between", "whitespace", "a tab between two tokens", _TEXT),
    Production(
        "ws.cr-between",
        "whitespace",
        "a carriage return between two tokens (inside a line: not a line end)",
        ("reader", "recorder", "envelope", "trace"),
    ),
    Production(
        "ws.lf-between",
        "whitespace",
        "a line feed between two tokens (one document; in a stream it ends the line)",
        ("envelope",),
    ),
    Production(
        "ws.inside-brackets",
        "whitespace",
        "whitespace just inside a bracket: after { or [, before } or ]",
        _TEXT,
    ),
    Production(
        "ws.before-value", "whitespace", "whitespace before a line's (or document's) value", _TEXT
    ),
    Production(
        "ws.after-value", "whitespace", "whitespace after a line's (or document's) value", _TEXT
    ),
    # strings: section 7
    Production(
        "str.escape-quote-backslash", "strings", 'the escapes \\" and \\\\ in a string', _DOCS
    ),
    Production(
        "str.escape-short",
        "strings",
        "the short escapes \\b \\f \\n \\r \\t",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production("str.escape-solidus", "strings", "the optional escape \\/", _TEXT),
    Production(
        "str.escape-u-control", "strings", "\\u escapes of control characters (\\u0000)", _STREAM
    ),
    Production(
        "str.escape-u-ascii",
        "strings",
        "\\u escapes of printable ASCII (run\\u005fcomplete)",
        _TEXT,
    ),
    Production("str.escape-u-bmp", "strings", "\\u escapes of non-ASCII (\\u00e9, \\u2028)", _DOCS),
    Production("str.escape-u-upper", "strings", "\\u escapes with upper-case hex (\\u00E9)", _DOCS),
    Production(
        "str.escape-surrogate-pair",
        "strings",
        "an astral character as an escaped surrogate pair (\\ud83d\\ude42)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "str.lone-surrogate",
        "strings",
        "a lone surrogate escape (a registered reading: lone-surrogate)",
        ("reader",),
    ),
    Production(
        "str.raw-2-byte",
        "strings",
        "a raw two-byte UTF-8 character",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "str.raw-3-byte",
        "strings",
        "a raw three-byte UTF-8 character",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "str.raw-4-byte",
        "strings",
        "a raw four-byte UTF-8 character (outside the BMP)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "str.raw-line-separator",
        "strings",
        "U+2028, U+2029 or U+0085 raw in a string (text to JSON, a line end to some readers)",
        _STREAM,
    ),
    Production("str.empty", "strings", 'the empty string ""', _DOCS),
    Production("str.escaped-key", "strings", "an escape inside an object key (\\u0074ype)", _TEXT),
    Production(
        "str.escaped-type",
        "strings",
        "the type (or event) member spelled with an escape, in its key or its value",
        ("reader", "dashboard", "recorder", "trace"),
    ),
    # numbers: section 6
    Production("num.zero", "numbers", "the integer 0", _TEXT),
    Production("num.negative", "numbers", "a negative number", ("reader", "recorder", "envelope")),
    Production("num.fraction", "numbers", "a fraction (0.5)", _TEXT),
    Production(
        "num.exponent",
        "numbers",
        "an exponent (2e-3)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "num.exponent-upper",
        "numbers",
        "an upper-case exponent (2E-3)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "num.exponent-plus",
        "numbers",
        "an exponent with a plus sign (1e+0)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "num.integer-literal-number",
        "numbers",
        "an integral value written with a fraction or exponent (0.0, 2E+0)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "num.negative-zero-float",
        "numbers",
        "negative zero as a float (-0.0)",
        ("reader", "dashboard", "recorder"),
    ),
    Production(
        "num.negative-zero-integer",
        "numbers",
        "-0 (a registered reading where an integer is due: negative-zero)",
        ("reader",),
    ),
    Production(
        "num.above-2^53",
        "numbers",
        "an integer above 2^53 (a double cannot hold it)",
        ("reader", "dashboard", "recorder", "envelope"),
    ),
    Production(
        "num.above-2^63",
        "numbers",
        "an integer above 2^63 - 1 (not an i64; a u64 up to 2^64 - 1)",
        ("reader", "recorder"),
    ),
    Production(
        "num.below-minus-2^53",
        "numbers",
        "a negative integer below -2^53",
        ("recorder",),
    ),
    Production(
        "num.beyond-u64",
        "numbers",
        "an integer beyond u64 (2^64; a registered reading where it is ts: ts-out-of-range)",
        ("reader",),
    ),
    Production(
        "num.beyond-f64",
        "numbers",
        "a number beyond a double (1e400; a registered reading: number-beyond-f64)",
        ("reader", "recorder"),
    ),
    # literals and nesting: sections 3, 4, 5
    Production("lit.true-false", "values", "the literals true and false", _TEXT),
    Production("lit.null", "values", "the literal null", _TEXT),
    Production("nest.empty-object", "values", "an empty object {}", _STREAM),
    Production("nest.empty-array", "values", "an empty array []", _TEXT),
    Production(
        "nest.deep",
        "values",
        "nesting 65 to 127 levels (past System.Text.Json's 64, within serde_json's 127)",
        ("reader",),
    ),
    Production(
        "nest.deeper-than-128",
        "values",
        "nesting deeper than 128 levels (a registered reading: deep-nesting)",
        ("reader",),
    ),
    Production(
        "obj.key-order",
        "values",
        "keys in another order than stella writes (type, event or schema_version not first)",
        _TEXT,
    ),
    Production(
        "obj.duplicate-key",
        "values",
        "a key twice in one object (a registered reading: duplicate-keys)",
        ("reader",),
    ),
    # text that is not JSON (a corrupt line, which a lenient parser reads)
    Production(
        "bad.number-spelling",
        "not JSON",
        "a number spelling the grammar refuses (01, +1, .5, 1., 0x1F)",
        ("reader",),
    ),
    Production(
        "bad.raw-control",
        "not JSON",
        "a raw control character in a string (a tab, \\x01, \\x1f, NUL)",
        ("reader",),
    ),
    Production("bad.escape", "not JSON", "an escape JSON does not have (\\x41)", ("reader",)),
    Production(
        "bad.literal",
        "not JSON",
        "a literal JSON does not have (True, NaN, Infinity)",
        ("reader",),
    ),
    Production("bad.utf8", "not JSON", "bytes that are not UTF-8 in a line", ("reader",)),
    # framing: the contract's "one JSON object per line"
    Production("frame.crlf", "framing", "a line ended by CRLF", ("reader", "trace")),
    Production(
        "frame.mixed-endings",
        "framing",
        "CRLF and LF line ends in one stream",
        ("reader",),
    ),
    Production("frame.blank-empty", "framing", "an empty line", ("reader", "trace")),
    Production(
        "frame.blank-whitespace",
        "framing",
        "a line of spaces and tabs only",
        ("reader", "trace"),
    ),
    Production("frame.blank-cr", "framing", "a blank line holding a CR", ("reader",)),
    Production("frame.blank-first", "framing", "a blank first line", ("reader",)),
    Production(
        "frame.blank-after-last",
        "framing",
        "blank lines after the last event",
        ("reader",),
    ),
    Production(
        "frame.unterminated-last",
        "framing",
        "a complete last line without its newline",
        ("reader",),
    ),
    Production(
        "frame.torn-last",
        "framing",
        "a torn (unparseable) last line without a newline",
        ("reader", "recorder", "trace"),
    ),
    Production(
        "frame.torn-then-newline",
        "framing",
        "a torn last line followed by a newline (a registered reading: torn-then-newline)",
        ("reader",),
    ),
    Production(
        "frame.two-values",
        "framing",
        "two JSON values on one line (or a value and a stray token): not one object",
        ("reader", "trace"),
    ),
    Production(
        "frame.value-across-lines",
        "framing",
        "one value written over several lines: no line is an object",
        ("reader",),
    ),
    Production(
        "frame.corrupt-middle",
        "framing",
        "a line that is not JSON, with lines after it",
        ("reader", "trace"),
    ),
    Production(
        "frame.not-object",
        "framing",
        "a line that is JSON but not an object (a registered reading: non-object-line)",
        ("reader",),
    ),
    Production("frame.over-64k", "framing", "a line over 64 KiB", ("reader",)),
    Production("frame.over-1m", "framing", "a line over 1 MiB", ("reader",)),
    Production(
        "frame.char-across-4k",
        "framing",
        "a multi-byte character across a 4 KiB boundary of its line or the stream",
        ("reader", "dashboard"),
    ),
    Production(
        "frame.bom",
        "framing",
        "a UTF-8 BOM before the first line (a registered reading)",
        ("reader",),
    ),
    Production(
        "frame.unicode-whitespace",
        "framing",
        "Unicode whitespace beyond JSON's four around or as a line (a registered reading)",
        ("reader",),
    ),
    # the seams: a line's edges, a read buffer's, the stream's end, a run's steps
    *(Production(*row) for row in SEAM_ROWS),
)


def _edge_productions() -> tuple[Production, ...]:
    """The edge cells of ``generators/edges.py``: values and names in the fields of known
    events and journal lines (what ``edges.cells_in`` and ``journal_edges.journal_cells_in``
    find in a line), bold where a profile's strata hold them."""
    from stella_conform.generators.edges import CELLS, ENVELOPE_CELLS
    from stella_conform.generators.journal_edges import JOURNAL_CELLS

    def profiles(cell: str) -> tuple[str, ...]:
        envelope = ("envelope",) if cell in ENVELOPE_CELLS else ()
        return ("reader", *envelope, *(("trace",) if cell in JOURNAL_CELLS else ()))

    return tuple(Production(cell, "edges", what, profiles(cell)) for cell, what in CELLS.items())


PRODUCTIONS += _edge_productions()
BY_ID = {p.id: p for p in PRODUCTIONS}

# ------------------------------------------------------------------ the scanner

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|.)", re.S)
_BAD_NUMBER = re.compile(
    rb"(?:^|[^0-9A-Za-z_.+\-])(?:\+[0-9]|-?\.[0-9]|-?0[0-9]|0[xX])|[0-9]\.(?:[^0-9]|$)"
)
_BAD_LITERAL = re.compile(rb"\b(?:True|False|None|NaN|Infinity)\b")
_INSIDE = re.compile(rb"[\[{][ \t\r\n]|[ \t\r\n][\]}]")
_EMPTY_OBJECT = re.compile(rb"\{[ \t\r\n]*\}")
_EMPTY_ARRAY = re.compile(rb"\[[ \t\r\n]*\]")
_SEPARATORS = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85")
_JSON_WS = b" \t\r\n"
_BOUNDARY = 4096
_TWO_53, _I64, _U64 = 2**53, 2**63 - 1, 2**64 - 1


def _parses(text: bytes) -> tuple[bool, object]:
    """Whether the bytes are one JSON text (the reference decoder's parser: no NaN)."""
    value, error = parse_line(text)
    return error is None, value


def _text(found: set[str], data: bytes, form: TextForm) -> None:
    """Productions of one JSON text that parses (a line, or a whole document)."""
    strings = _STRING.findall(data)
    skeleton = _STRING.sub(b'""', data)
    inner = skeleton.strip(_JSON_WS)
    for byte, name in ((b" ", "space"), (b"\t", "tab"), (b"\r", "cr"), (b"\n", "lf")):
        if byte in inner:
            found.add(f"ws.{name}-between")
    if _INSIDE.search(skeleton):
        found.add("ws.inside-brackets")
    if skeleton[:1] in (b" ", b"\t", b"\r", b"\n"):
        found.add("ws.before-value")
    # a document ends with the newline stella prints after it; a line's is not its content
    tail = skeleton[:-1] if form.document and skeleton.endswith(b"\n") else skeleton
    if tail[-1:] in (b" ", b"\t", b"\r", b"\n"):
        found.add("ws.after-value")
    if _EMPTY_OBJECT.search(skeleton):
        found.add("nest.empty-object")
    if _EMPTY_ARRAY.search(skeleton):
        found.add("nest.empty-array")
    if b"true" in skeleton or b"false" in skeleton:
        found.add("lit.true-false")
    if b"null" in skeleton:
        found.add("lit.null")
    _strings(found, strings)
    _keys(found, data, form)
    _numbers(found, skeleton)
    depth = deepest = 0
    for code in skeleton.translate(None, b'"0123456789:,-+.eEtruefalsn \t\r\n'):
        depth += 1 if code in (0x5B, 0x7B) else -1
        deepest = max(deepest, depth)
    if 65 <= deepest <= 127:
        found.add("nest.deep")
    elif deepest > 128:
        found.add("nest.deeper-than-128")


def _strings(found: set[str], strings: list[bytes]) -> None:
    if b'""' in strings:
        found.add("str.empty")
    joined = b"".join(strings)
    if b"\\" in joined:
        high = False
        for match in _ESCAPE.finditer(joined):
            body = match.group(1)
            if len(body) == 1:
                high = False
                if body in b'"\\':
                    found.add("str.escape-quote-backslash")
                elif body == b"/":
                    found.add("str.escape-solidus")
                elif body in b"bfnrt":
                    found.add("str.escape-short")
                continue
            hex_digits = body[1:]
            code = int(hex_digits, 16)
            if any(c in b"ABCDEF" for c in hex_digits):
                found.add("str.escape-u-upper")
            if 0xDC00 <= code <= 0xDFFF:
                found.add("str.escape-surrogate-pair" if high else "str.lone-surrogate")
                high = False
                continue
            if high:
                found.add("str.lone-surrogate")
            high = 0xD800 <= code <= 0xDBFF
            if high:
                continue
            if code < 0x20:
                found.add("str.escape-u-control")
            elif code < 0x80:
                found.add("str.escape-u-ascii")
            else:
                found.add("str.escape-u-bmp")
        if high:
            found.add("str.lone-surrogate")
    if max(joined, default=0) >= 0x80:
        if re.search(rb"[\xc2-\xdf]", joined):
            found.add("str.raw-2-byte")
        if re.search(rb"[\xe0-\xef]", joined):
            found.add("str.raw-3-byte")
        if re.search(rb"[\xf0-\xf4]", joined):
            found.add("str.raw-4-byte")
        if any(s in joined for s in _SEPARATORS):
            found.add("str.raw-line-separator")


def _keys(found: set[str], data: bytes, form: TextForm) -> None:
    """Keys (strings followed by a colon), walked in step with the strings of the text."""
    first = True
    tokens = list(_STRING.finditer(data))
    for index, match in enumerate(tokens):
        after = data[match.end() :].lstrip(_JSON_WS)
        if after[:1] != b":":
            continue
        key = match.group(0)
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        value = b""
        if following is not None and not data[match.end() : following.start()].strip(b": \t\r\n"):
            value = following.group(0)
        if b"\\" not in key and not first and b"\\" not in value:
            continue
        try:
            name = json.loads(key)
        except ValueError:
            continue
        if first and name != form.first_key:
            found.add("obj.key-order")
        first = False
        if b"\\" in key:
            found.add("str.escaped-key")
        if name == form.type_key and (b"\\" in key or b"\\" in value):
            found.add("str.escaped-type")


def _numbers(found: set[str], skeleton: bytes) -> None:
    if not any(d in skeleton for d in b"0123456789"):
        return
    for match in _NUMBER.finditer(skeleton):
        text = match.group(0)
        if text[:1] == b"-":
            found.add("num.negative")
        if b"." in text:
            found.add("num.fraction")
        if b"e" in text or b"E" in text:
            found.add("num.exponent")
            if b"E" in text:
                found.add("num.exponent-upper")
            if b"+" in text:
                found.add("num.exponent-plus")
        if b"." in text or b"e" in text or b"E" in text:
            value = float(text)
            if beyond_f64(text.decode("ascii")):  # the decoder's test, as the oracle's point
                found.add("num.beyond-f64")
            if value not in (float("inf"), float("-inf")) and value == int(value):
                found.add("num.integer-literal-number")
            if value == 0 and text[:1] == b"-":
                found.add("num.negative-zero-float")
            continue
        if text == b"0":
            found.add("num.zero")
        elif text == b"-0":
            found.add("num.negative-zero-integer")
        elif len(text) > 15:
            number = int(text)
            if number > _U64:
                found.add("num.beyond-u64")
            if number > _I64:
                found.add("num.above-2^63")
            if number > _TWO_53:
                found.add("num.above-2^53")
            if number < -_TWO_53:
                found.add("num.below-minus-2^53")
            if beyond_f64(text.decode("ascii")):
                found.add("num.beyond-f64")


def _cells_in(value: dict[str, object]) -> frozenset[str]:
    from stella_conform.generators.edges import cells_in

    return cells_in(value)


def _journal_cells_in(value: dict[str, object]) -> frozenset[str]:
    from stella_conform.generators.journal_edges import journal_cells_in

    return journal_cells_in(value)


def _not_json(found: set[str], line: bytes) -> None:
    """What makes a line that does not parse not JSON (for a lenient parser to misread)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        found.add("bad.utf8")
    strings = _STRING.findall(line)
    skeleton = _STRING.sub(b'""', line)
    if _BAD_NUMBER.search(skeleton):
        found.add("bad.number-spelling")
    if _BAD_LITERAL.search(skeleton):
        found.add("bad.literal")
    for s in strings:
        if any(b < 0x20 for b in s):
            found.add("bad.raw-control")
        for match in _ESCAPE.finditer(s):
            body = match.group(1)
            if len(body) == 1 and body not in b'"\\/bfnrt':
                found.add("bad.escape")


def _two_values(line: bytes) -> bool:
    try:
        value, _ = json.JSONDecoder().raw_decode(line.decode("utf-8").lstrip(" \t"))
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict)


def _lines(found: set[str], data: bytes, form: TextForm) -> None:
    chunks = data.split(b"\n")
    terminated = [True] * (len(chunks) - 1) + [False]
    if chunks and chunks[-1] == b"":
        chunks.pop()
        terminated.pop()
    if data.startswith(b"\xef\xbb\xbf"):
        found.add("frame.bom")
    contents = [
        c[:-1] if t and c.endswith(b"\r") else c for c, t in zip(chunks, terminated, strict=True)
    ]
    blank = [not c.strip(_JSON_WS) for c in chunks]
    nonblank = [i for i, b in enumerate(blank) if not b]
    last = nonblank[-1] if nonblank else -1
    endings = {
        t and c.endswith(b"\r")
        for c, t, b in zip(chunks, terminated, blank, strict=True)
        if t and not b
    }
    if True in endings:
        found.add("frame.crlf")
        if False in endings:
            found.add("frame.mixed-endings")
    if blank and blank[0]:
        found.add("frame.blank-first")
    if last >= 0 and last < len(chunks) - 1:
        found.add("frame.blank-after-last")
    failed: list[int] = []
    for i, (content, is_blank) in enumerate(zip(contents, blank, strict=True)):
        chunk = chunks[i]
        if len(chunk) > 65536:
            found.add("frame.over-64k")
            if len(chunk) > 1048576:
                found.add("frame.over-1m")
        if is_blank:
            if chunk == b"" and terminated[i]:
                found.add("frame.blank-empty")
            elif b"\r" in chunk:
                found.add("frame.blank-cr")
            elif chunk:
                found.add("frame.blank-whitespace")
            continue
        ok, value = _parses(content)
        if ok:
            if not isinstance(value, dict):
                found.add("frame.not-object")
            elif form is STREAM_LINES:
                found |= _cells_in(value)
            elif form is JOURNAL_LINES:
                found |= _journal_cells_in(value)
            _text(found, content, form)
            if i == last and not terminated[i]:
                found.add("frame.unterminated-last")
            continue
        failed.append(i)
        _not_json(found, content)
        text = content.decode("utf-8", "replace")
        if text.strip(UNICODE_WS) != text.strip(" \t\r\n"):
            found.add("frame.unicode-whitespace")
        if i == last:
            found.add(
                "frame.torn-then-newline"
                if terminated[i] or i < len(chunks) - 1
                else "frame.torn-last"
            )
        else:
            found.add("frame.corrupt-middle")
            if _two_values(content):
                found.add("frame.two-values")
    for i in failed:
        if contents[i].lstrip()[:1] == b"{" and i + 1 < len(contents):
            for j in range(i + 1, min(len(contents), i + 400)):
                ok, value = _parses(b"\n".join(contents[i : j + 1]))
                if ok and isinstance(value, dict):
                    found.add("frame.value-across-lines")
                    break
    if _across_boundary(data):
        found.add("frame.char-across-4k")


def _across_boundary(data: bytes) -> bool:
    """A multi-byte UTF-8 character that spans a 4 KiB offset of its line or the stream."""
    if len(data) < _BOUNDARY or max(data) < 0x80:
        return False
    starts = [0]
    starts += [m.end() for m in re.finditer(rb"\n", data)]
    for start in starts:
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        for origin in {0, start}:
            first = ((start - origin) // _BOUNDARY + 1) * _BOUNDARY + origin
            for edge in range(first, end, _BOUNDARY):
                if 0x80 <= data[edge] < 0xC0:  # a continuation byte: a character straddles
                    return True
    return False


def scan(
    data: bytes, kind: str | TextForm = "stream", touched: Iterable[str] = ()
) -> frozenset[str]:
    """The productions these bytes hold, as the ids of :data:`PRODUCTIONS`.

    ``kind`` is a :class:`TextForm` or its name: ``stream`` or ``journal`` (lines) or
    ``envelope`` (one document); ``touched`` are the registered points the oracle saw (a
    duplicate key is one).
    """
    form = FORMS.get(kind) if isinstance(kind, str) else kind
    if form is None:
        raise ValueError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    found: set[str] = set()
    if form.document:
        ok, value = _parses(data)
        if ok:
            _text(found, data, form)
            events = value.get("events") if isinstance(value, dict) else None
            for event in events if isinstance(events, list) else ():
                if isinstance(event, dict):  # a stream's events: their fields' cells
                    found |= _cells_in(event)
        else:
            _not_json(found, data)
    else:
        _lines(found, data, form)
    if "duplicate-keys" in touched:
        found.add("obj.duplicate-key")
    found |= seams_in(data, form.name)
    return frozenset(found)


__all__ = [
    "BY_ID",
    "ENVELOPE_DOCUMENT",
    "FORMS",
    "JOURNAL_LINES",
    "KINDS",
    "PRODUCTIONS",
    "STREAM_LINES",
    "Production",
    "TextForm",
    "scan",
]
