"""Fixture files read once: the ``.jsonl`` fixtures (streams and trace journals, told apart by
their expectation) and the careful reading of a fixture's stream.

Every check of a run loads its fixtures, the same few dozen files, each validated against
the expectation schema and decoded carefully: once per file version and vocabulary here,
not once per check.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from stella_conform.oracle.corpus import Fixture, TraceFixture, read_jsonl_fixture
from stella_conform.oracle.decoder import Decoded
from stella_conform.oracle.readings import careful_default
from stella_conform.schemas.vocabulary import Vocabulary


def jsonl_fixture(path: Path) -> Fixture | TraceFixture:
    """:func:`read_jsonl_fixture`, once per file and version (its inode, size and time)."""
    try:
        st = path.stat()
    except OSError:
        return read_jsonl_fixture(path)  # says what is wrong with it
    return _fixture_file(str(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _fixture_file(path: str, inode: int, size: int, mtime_ns: int) -> Fixture | TraceFixture:
    return read_jsonl_fixture(Path(path))


def careful_reading(
    stream: bytes, vocab: Vocabulary | None
) -> tuple[Decoded | None, frozenset[str] | None]:
    """The oracle's careful reading of a fixture's stream, once per stream and vocabulary."""
    # recognized, not known: a claimed type this stella never writes (complete) is read
    # as the stella that wrote it defined it, where a fixture holds one
    key = (vocab.ident, vocab.recognized) if vocab is not None else None
    found = _CAREFUL_READINGS.get((stream, key))
    if found is None:
        decoded, touched = careful_default(stream, vocab)
        found = (decoded, frozenset(touched))
        if len(_CAREFUL_READINGS) >= 256:
            _CAREFUL_READINGS.clear()
        _CAREFUL_READINGS[(stream, key)] = found
    return found


#: Fixture streams' careful readings, by stream and vocabulary (see careful_reading).
_CAREFUL_READINGS: dict[tuple[bytes, Any], tuple[Decoded, frozenset[str]]] = {}
