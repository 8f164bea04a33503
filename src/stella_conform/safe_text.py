"""Client text made safe for every place the kit prints or saves it.

A client controls every string it writes: a summary's text, a line's ``type``, its
stderr.  That text ends up in JSON reports (strict parsers refuse NaN and lone
surrogates), JUnit XML (XML 1.0 forbids most control characters), a terminal (escape
sequences clear the screen or retitle the window), a CI log (a line starting with ``::``
is a GitHub workflow command) and Markdown (a pull-request comment renders HTML, links and
@mentions).  Each function here makes text inert for one of those, and says where it cut.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Limits for client values kept in reports: deep nesting made pretty-printing quadratic,
#: and a multi-megabyte string copied into every report made them unreadable.
MAX_DEPTH = 16
MAX_STRING = 4096
MAX_ITEMS = 100

_SURROGATES = re.compile(r"[\ud800-\udfff]")
# XML 1.0: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_XML_ILLEGAL = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# C0 controls, DEL and C1 controls: everything a terminal may act on; and the characters
# that reorder or hide text without being seen (bidirectional controls, zero-width and
# invisible format characters, the line and paragraph separators): shown as they are, a
# client's "pass" and "pa\u200bss" would read alike.
_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
_CONTROLS = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROLS_BUT_NEWLINE = re.compile(f"[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROLS_BUT_TAB = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def clip(text: str, limit: int = MAX_STRING) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut at {limit} of {len(text)} characters)"


def no_surrogates(text: str) -> str:
    """Lone surrogates (valid in a Python str, never in UTF-8) become U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


def json_safe(
    value: Any,
    *,
    depth: int = MAX_DEPTH,
    string: int | None = MAX_STRING,
    items: int | None = MAX_ITEMS,
) -> Any:
    """A copy of ``value`` that ``json.dumps(allow_nan=False)`` writes as valid UTF-8 JSON.

    NaN and infinities become strings (``"NaN"``, ``"Infinity"``), lone surrogates U+FFFD;
    with limits, strings are clipped, containers past ``items`` entries or nested past
    ``depth`` levels are cut, and each cut says what it left out.
    """
    if isinstance(value, str):
        text = no_surrogates(value)
        return clip(text, string) if string is not None else text
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        if depth <= 0:
            return f"… (an object nested deeper than {MAX_DEPTH} levels, cut)"
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if items is not None and index >= items:
                out["…"] = f"cut: {len(value) - items} more key(s)"
                break
            out[no_surrogates(str(key))] = json_safe(
                item, depth=depth - 1, string=string, items=items
            )
        return out
    if isinstance(value, (list, tuple)):
        if depth <= 0:
            return f"… (an array nested deeper than {MAX_DEPTH} levels, cut)"
        kept = list(value) if items is None else list(value[:items])
        out_list = [json_safe(v, depth=depth - 1, string=string, items=items) for v in kept]
        if items is not None and len(value) > items:
            out_list.append(f"… cut: {len(value) - items} more item(s)")
        return out_list
    return json_safe(str(value), depth=depth, string=string, items=items)


def xml_safe(text: str) -> str:
    """Text XML 1.0 allows: each forbidden character shown as ``\\xNN`` / ``\\uNNNN``."""
    return _XML_ILLEGAL.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_newlines: bool = False, keep_tabs: bool = False) -> str:
    """Text a terminal shows but never acts on: control and invisible characters as
    ``\\xNN`` / ``\\uNNNN``.

    Without ``keep_newlines`` a newline is escaped too, so client text never starts a
    line of the kit's output (where ``::error::`` would be a workflow command);
    ``keep_tabs`` keeps a line's tabs (a Go stack trace's indentation).
    """
    if keep_newlines and keep_tabs:
        raise ValueError("keep_newlines or keep_tabs, not both")
    pattern = (
        _CONTROLS_BUT_NEWLINE if keep_newlines else _CONTROLS_BUT_TAB if keep_tabs else _CONTROLS
    )
    return pattern.sub(_escape_char, no_surrogates(text))


def no_workflow_commands(text: str) -> str:
    """Lines that GitHub Actions would read as workflow commands (``::name::``) defused.

    The runner looks for ``::`` at the start of a line (after leading blanks); a zero-width
    space between the two colons keeps the text readable and the command dead.
    """
    return "\n".join(
        line.replace("::", ":\u200b:", 1) if line.lstrip().startswith("::") else line
        for line in text.split("\n")
    )


def for_terminal(text: str) -> str:
    """Kit output that carries client text, made safe to print in a terminal or a CI log."""
    return no_workflow_commands(terminal_safe(text, keep_newlines=True))


def markdown_code(text: str, limit: int = 500) -> str:
    """Client text as an inline Markdown code span inside a table cell.

    Inside a code span nothing is a link, an @mention, an emoji shortcode or HTML. The
    fence is one backtick longer than the longest run in the text, pipes are escaped for
    the table and newlines become spaces.
    """
    body = terminal_safe(clip(no_surrogates(text), limit)).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


#: Characters a name is never written with in Markdown: HTML, table and inline syntax.
_NAME_ESCAPES = {c: f"&#{ord(c)};" for c in "&<>\"'`|*_[]()#!~@:\\{}$^"}


def markdown_name(text: str, limit: int = 200) -> str:
    """A name from a config or a shard (a client, a vocabulary) in Markdown: as text in a
    ``<code>`` element, every character that could be markup written as a numeric
    character reference.

    A code span keeps its content literal on a CommonMark renderer, but leaves the raw
    ``<script>`` in the file for any consumer that is not one; a reference is text to
    every renderer, and inside ``<code>`` GitHub links no mention and no emoji.
    """
    body = terminal_safe(clip(no_surrogates(text), limit)).replace("\n", " ")
    return "<code>" + "".join(_NAME_ESCAPES.get(c, c) for c in body) + "</code>"
