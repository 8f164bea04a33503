"""Text from outside made safe for every place the kit prints or saves it.

A client controls every string it writes: a summary's text, a line's ``type``, its
stderr, its first line; a config names clients and vocabularies; a disk names files and
folders.  That text ends up in JSON reports (strict parsers refuse NaN and lone
surrogates), JUnit XML (XML 1.0 forbids most control characters), a terminal (escape
sequences clear the screen, retitle the window or write the clipboard), a CI log (a line
starting with ``::`` is a GitHub workflow command), Markdown (a pull-request comment or a
step summary renders HTML, links and @mentions) and an HTML page.

Each output has its functions here, and every renderer passes outside text through them:

- a terminal or CI log: :func:`for_terminal` (kit lines carrying outside text),
  :func:`terminal_safe` (one piece of it);
- Markdown: :func:`markdown_code` (in a table cell), :func:`markdown_name` (a name),
  :func:`markdown_block` (kit lines carrying outside text);
- HTML: :func:`html_text`;  JUnit XML: :func:`xml_safe`;
- JSON: :func:`json_safe` (the value), :func:`json_text` (the document's text).

Each makes text inert for its output, and says where it cut.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
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
# and lone surrogates (valid in a Python str, never in UTF-8: printed raw, they fail the
# write): shown as ``\uD800``, what they are, not as U+FFFD
_INVISIBLE += "\ud800-\udfff"
_CONTROLS = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROLS_BUT_NEWLINE = re.compile(f"[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROLS_BUT_TAB = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROLS_BUT_LAYOUT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
# What JSON writes raw inside a string (json.dumps escapes only C0 and the quote)
_JSON_RAW = re.compile(f"[\\x7f-\\x9f{_INVISIBLE}]")


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
    """Text for JUnit XML, which a CI test view shows and a log may print: what XML 1.0
    forbids, and every other control or invisible character, as ``\\xNN`` / ``\\uNNNN``
    (newlines and tabs kept), and no line a workflow command."""
    visible = terminal_safe(text, keep_newlines=True, keep_tabs=True)
    return no_workflow_commands(_XML_ILLEGAL.sub(_escape_char, visible))


def json_text(document: str) -> str:
    """A JSON document's text with every DEL, C1 control and invisible character written
    as a ``\\uXXXX`` escape: the same JSON value, and nothing in the file that acts when
    it is printed (``json.dumps`` escapes only the C0 controls).

    Outside its strings a JSON text holds only ASCII, so every character replaced is
    inside a string, where ``\\uXXXX`` means that character.
    """
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


def html_text(text: str) -> str:
    """Text from outside in an HTML page, as an element's text or an attribute's value:
    markup escaped, control and invisible characters as ``\\xNN`` / ``\\uNNNN`` (newlines
    and tabs kept: a ``<pre>`` shows them), no line a workflow command."""
    visible = terminal_safe(text, keep_newlines=True, keep_tabs=True)
    return html.escape(no_workflow_commands(visible))


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
    if keep_newlines:
        pattern = _CONTROLS_BUT_LAYOUT if keep_tabs else _CONTROLS_BUT_NEWLINE
    else:
        pattern = _CONTROLS_BUT_TAB if keep_tabs else _CONTROLS
    return pattern.sub(_escape_char, text)


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
    """Kit output that carries outside text, made safe to print in a terminal or a CI log:
    its lines kept, each control and invisible character visible, no line a workflow
    command."""
    return no_workflow_commands(terminal_safe(text, keep_newlines=True))


def markdown_code(text: str, limit: int = 500) -> str:
    """Client text as an inline Markdown code span inside a table cell.

    Inside a code span nothing is a link, an @mention, an emoji shortcode or HTML. The
    fence is one backtick longer than the longest run in the text, pipes are escaped for
    the table and newlines are shown as ``\\x0a``.
    """
    body = terminal_safe(clip(no_surrogates(text), limit)).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


#: Characters a name is never written with in Markdown: HTML, table and inline syntax.
_NAME_ESCAPES = {c: f"&#{ord(c)};" for c in "&<>\"'`|*_[]()#!~@:\\{}$^"}


def markdown_name(text: str, limit: int = 200) -> str:
    """A name from a config or a shard (a client, a vocabulary), or one line of a client's
    stderr, in Markdown: as text in a ``<code>`` element, every character that could be
    markup written as a numeric character reference.

    A code span keeps its content literal on a CommonMark renderer, but leaves the raw
    ``<script>`` in the file for any consumer that is not one; a reference is text to
    every renderer, and inside ``<code>`` GitHub links no mention and no emoji.
    """
    body = terminal_safe(clip(no_surrogates(text), limit)).replace("\n", " ")
    return "<code>" + "".join(_NAME_ESCAPES.get(c, c) for c in body) + "</code>"


def markdown_block(lines: Sequence[str], limit: int = 2000) -> str:
    """Kit lines that carry outside text, as a fenced Markdown code block: inside it nothing
    is HTML, a link, an @mention or an emoji.  Each line is clipped, its control and
    invisible characters (its own newlines too) visible, and none is a workflow command.

    The fence is a run of backticks longer than any in the text, so no line closes it.
    """
    shown = [no_workflow_commands(terminal_safe(clip(line, limit))) for line in lines]
    longest = max((len(run) for line in shown for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}text", *shown, fence])
