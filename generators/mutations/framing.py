"""How lines are cut and terminated (rules R1 and R6): long lines, Unicode whitespace, a byte
order mark, blank lines, CRLF, the missing final newline and the torn last line.

The last five work on the stream's bytes (``byte_level``): they apply after every
object-level mutation.
"""

from __future__ import annotations

from hypothesis import strategies as st

from stella_conform.generators.content import SEEDS, Content
from stella_conform.generators.engine.picks import between, choose, choose_at, index_at, option_at
from stella_conform.generators.mutations.stream import (
    Apply,
    Line,
    Mutation,
    Stream,
    insert_at,
    pick_known,
)
from stella_conform.generators.runs import encode
from stella_conform.schemas.vocabulary import Vocabulary


def _huge(size: int) -> Apply:
    """A long line made of a *known* field (a preview delta), so no unknown field is involved."""

    def apply(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
        mark = f"long-line-{'1m' if size > 1_000_000 else '64k'}"
        filler = "long preview " * ((size + between(draw, 0, 64)) // 13 + 1)
        if "text_delta" in vocab.known:
            line = Line({"type": "text_delta", "delta": filler}, marks={mark})
            insert_at(draw, stream, line, not_last=True)
            return
        target = pick_known(draw, stream, vocab)
        if target is not None:
            target.obj["attachment"] = filler
            target.marks.add(mark)

    return apply


#: Unicode whitespace beyond JSON's four, as UTF-8.
UNICODE_SPACES = (" ", " ", " ", "", "", "　", "")


def unicode_whitespace(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Unicode whitespace around a line, or a line made of it."""
    space = choose(draw, UNICODE_SPACES).encode("utf-8")
    events: list[int] = [i for i, line in enumerate(stream.lines) if line.is_event]
    around: bool = draw(st.booleans())
    if events and around:
        line = stream.lines[choose(draw, events)]
        before, after = choose(draw, ((space, b""), (b"", space), (space, space)))
        line.raw = before + line.to_bytes() + after
        line.marks.add("unicode-whitespace")
    else:
        insert_at(draw, stream, Line(raw=space, marks={"unicode-whitespace"}), not_last=True)


def utf8_bom(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A UTF-8 byte order mark before the first line."""
    if stream.lines:
        first = stream.lines[0]
        first.raw = b"\xef\xbb\xbf" + first.to_bytes()
        first.marks.add("utf8-bom")


def blank_lines(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Empty and whitespace-only lines (a lone CR among them: a blank CRLF line)."""
    kinds = (b"", b"   ", b"\t", b" \t ", b"\r", b" \r")
    for _ in range(between(draw, 1, 3)):
        insert_at(draw, stream, Line(raw=choose(draw, kinds), marks={"blank-lines"}))
    # and, from one seed (none for the simplest), more of them: before the first line,
    # after the last, and of every kind
    c = Content(draw(SEEDS))
    around = option_at(draw, "blank-around", 2)  # a stratum: before the first, after the last
    if c.chance() or around:
        stream.lines.insert(0, Line(raw=c.pick(kinds), marks={"blank-lines"}))
    if c.chance() or around:
        stream.lines.append(Line(raw=c.pick(kinds), marks={"blank-lines"}))
    for raw in c.sample(kinds, c.count(0, 3)):
        at = c.count(0, len(stream.lines))
        stream.lines.insert(at, Line(raw=raw, marks={"blank-lines"}))


def crlf(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """CRLF on every line, or (a third of the time) on some lines of an LF stream."""
    if index_at(draw, "crlf-lines", 3) < 2 or len(stream.lines) < 2:
        stream.crlf = True
        return
    c = Content(draw(SEEDS))
    for index in [0, *c.sample(range(1, len(stream.lines)), c.count(0, len(stream.lines) - 1))]:
        stream.lines[index].end = b"\r\n"
        stream.lines[index].marks.add("crlf")


def no_trailing_newline(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    stream.final_newline = False


TORN_KINDS = ("anywhere", "mid-key", "mid-string", "mid-escape", "mid-utf8")


def _inside_strings(data: bytes, openers: tuple[bytes, ...]) -> list[int]:
    """Cut points strictly inside the strings that follow an opener (a key or a value)."""
    spots: list[int] = []
    for i in range(len(data) - 1):
        if data[i : i + 2] in openers:
            j = i + 2
            while j < len(data) and data[j : j + 1] != b'"':
                j += 2 if data[j : j + 1] == b"\\" else 1
            spots.extend(range(i + 2, min(j, len(data)) + 1))
    return spots


def torn_tail(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """Cut the last line short, as a process killed mid-write leaves it."""
    events = [i for i, line in enumerate(stream.lines) if line.is_event]
    if not events:
        return
    index = events[-1]
    del stream.lines[index + 1 :]  # the torn line is the last line
    line = stream.lines[index]
    obj = dict(line.obj)
    kind = choose_at(draw, "torn-kind", TORN_KINDS)
    if kind == "mid-escape":
        obj["note"] = 'say "hi"\n'
    elif kind == "mid-utf8":
        obj["note"] = "café ☃"
    data = encode(obj)
    if kind == "mid-key":
        spots = _inside_strings(data, (b'{"', b',"'))
    elif kind == "mid-string":
        spots = _inside_strings(data, (b':"',))
    elif kind == "mid-escape":
        spots = [i + 1 for i in range(len(data)) if data[i : i + 1] == b"\\"]
    elif kind == "mid-utf8":
        spots = [i for i in range(1, len(data)) if 0x80 <= data[i] < 0xC0]
    else:
        spots = list(range(1, len(data)))
    spots = [s for s in spots if 1 <= s < len(data)] or list(range(1, len(data)))
    cut = choose(draw, spots)
    line.raw = data[:cut]
    line.marks.update(("torn-tail", f"torn-tail:{kind}"))
    stream.final_newline = False


def torn_then_newline(draw: st.DrawFn, stream: Stream, vocab: Vocabulary) -> None:
    """A torn last line followed by a newline: the final line, or a corrupt one?"""
    if "torn-tail" not in {m for line in stream.lines for m in line.marks}:
        torn_tail(draw, stream, vocab)
    for line in stream.lines:
        if "torn-tail" in line.marks:
            line.marks.add("torn-then-newline")
            stream.final_newline = True


#: This family's mutations; when each applies is :data:`.registry.ORDER`'s to say.
FRAMING_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "long-line-64k",
        "R1",
        "a known event over 64 KiB (a large unknown field)",
        _huge(65 * 1024),
    ),
    Mutation(
        "long-line-1m",
        "R1",
        "a known event over 1 MiB (a large unknown field)",
        _huge(1024 * 1024 + 1),
    ),
    Mutation(
        "unicode-whitespace",
        "R1",
        "Unicode whitespace (NBSP, U+2028, form feed...) around a line or as a line",
        unicode_whitespace,
        reading="unicode-whitespace",
    ),
    Mutation(
        "utf8-bom",
        "R1",
        "a UTF-8 byte order mark before the first line",
        utf8_bom,
        reading="utf8-bom",
    ),
    Mutation("blank-lines", "R1", "blank and whitespace-only lines", blank_lines, byte_level=True),
    Mutation("crlf", "R1", "CRLF line endings, on every line or some", crlf, byte_level=True),
    Mutation(
        "no-trailing-newline",
        "R6",
        "a complete last line without its newline",
        no_trailing_newline,
        byte_level=True,
    ),
    Mutation(
        "torn-tail",
        "R6",
        "the last line cut short (mid-key, mid-string, "
        "mid-escape, inside a UTF-8 character, or anywhere)",
        torn_tail,
        byte_level=True,
    ),
    Mutation(
        "torn-then-newline",
        "R6",
        "a torn last line followed by a newline",
        torn_then_newline,
        byte_level=True,
        reading="torn-then-newline",
    ),
)
