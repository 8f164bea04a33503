"""What a reader that ends lines where ``str.splitlines()`` does reads of a stream's texts.

Such a reader cuts a line that holds a raw U+2028, U+2029, U+0085, a lone CR or one of
the other characters ``str.splitlines()`` splits at into pieces that are not JSON, and
loses every event of that line. When the pieces are then dropped (read as torn, or
skipped), the verdict can still be right; what shows the bug is the texts it reports:
exactly the stream's texts less those of the lines it cut. ``R1.lines-end-only-at-newline``
fails that pattern by name, and only that one: a text lost or changed for any other
reason is another check's finding.
"""

from __future__ import annotations

from typing import Any

from stella_conform.oracle.decoder import Kind, LineOutcome

#: What ``str.splitlines()`` ends a line at, besides the ``\n`` every reader ends one at.
SPLIT_AT = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _cut(content: bytes) -> bool:
    """Whether a line (without its ``\\n``) is cut in two by ``str.splitlines()``: a
    separator anywhere but a CR at its very end (a CRLF line's CR)."""
    text = content.decode("utf-8", "replace")
    if text.endswith("\r"):
        text = text[:-1]
    return any(ch in SPLIT_AT for ch in text)


def cut_lines(stream: bytes) -> frozenset[int]:
    """The 1-based numbers of the lines ``str.splitlines()`` cuts in two."""
    if not any(ch.encode("utf-8") in stream for ch in SPLIT_AT):
        return frozenset()
    return frozenset(
        number for number, content in enumerate(stream.split(b"\n"), 1) if _cut(content)
    )


def texts_read_by_splitting(outcomes: list[LineOutcome], stream: bytes) -> list[str] | None:
    """The texts a reader reports that ends lines where ``str.splitlines()`` does and loses
    the lines it cuts: the stream's texts less those of its cut lines. ``None`` when it
    loses no text (no text event is on a cut line), as it then reads the texts right."""
    cut = cut_lines(stream)
    texts = [o for o in outcomes if o.kind is Kind.KNOWN and o.tag == "text"]
    if not cut or not any(o.line in cut for o in texts):
        return None
    return [str((o.event or {}).get("text")) for o in texts if o.line not in cut]


def lost_at_separators(
    outcomes: list[LineOutcome], stream: bytes, summary: dict[str, Any], fields: tuple[str, ...]
) -> str | None:
    """Why the client's texts are those of a reader that split lines at U+2028 and its kin
    (every text it reports is the stream's, bar exactly those on the lines such a reader
    cuts), or ``None`` when they are not. Its ``texts`` decide where it computes them (a
    final text alone says less), else its ``final_text``."""
    survivors = texts_read_by_splitting(outcomes, stream)
    if survivors is None:
        return None
    lost = sorted(cut_lines(stream))
    where = ", ".join(str(n) for n in lost[:3])
    if "texts" in fields and "texts" in summary:
        if summary["texts"] != survivors:
            return None
        return (
            f"texts: the text(s) of line(s) {where} are missing, and only those: lines that "
            "hold a raw U+2028, U+2029, U+0085 or another character str.splitlines() splits "
            "at, inside a string, were cut there (a line ends at \\n only)"
        )
    if "final_text" in fields and "final_text" in summary:
        last = survivors[-1] if survivors else None
        if summary["final_text"] != last:
            return None
        return (
            f"final_text: {_short(last)} is the last text before line(s) {where}, whose text "
            "is lost: a line that holds a raw U+2028 (or another character str.splitlines() "
            "splits at) was cut there (a line ends at \\n only)"
        )
    return None


def _short(text: str | None) -> str:
    if text is None:
        return "null"
    return repr(text if len(text) <= 40 else text[:40] + "…")
