"""What an example database may hold, as the kit reads it back: the bounds on every read,
and what tells an entry the kit stored from anything else found under its keys.

Whatever a database holds is input: someone else wrote it (another run, another machine,
another fuzz worker, whoever can write the server or the folder).  Each store reads under
these bounds before it holds anything (the directory through the safe reader, a Redis on
the server's side: :mod:`~stella_conform.conformance.store.shared`), and
:func:`valid_entry` then keeps only what decodes as what the kit writes there.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis.database import choices_from_bytes

#: The largest entry the kit reads from any database.  A case's choice sequence is a
#: few hundred bytes to a few KiB (a line over 1 MiB is drawn as a few choices too).
ENTRY_CAP = 256 * 1024
#: The most entries the kit reads under one key (the fuzzer keeps 400 inputs a check).
KEY_ENTRIES_CAP = 2048
#: The most bytes the kit reads under one key at one time: thousands of entries of the
#: usual size (a shared fuzzing record is about 2 KiB), 32 of the largest.
KEY_BYTES_CAP = 8 * 1024 * 1024
#: Keys whose entries are not choice sequences, and how long each entry is.
FIXED_LENGTH_SUFFIXES: dict[bytes, int] = {}
#: Hypothesis's directory database lists its keys under this key.
META_KEY = b".hypothesis-keys"
#: Keys whose entries are records of the kit's own, and what tells a good one.
RECORD_SUFFIXES: dict[bytes, Callable[[bytes], bool]] = {}


def register_fixed_length(suffix: bytes, length: int) -> None:
    """Entries under keys ending in ``suffix`` are records of exactly ``length`` bytes."""
    FIXED_LENGTH_SUFFIXES[suffix] = length


def register_record(suffix: bytes, valid: Callable[[bytes], bool]) -> None:
    """Entries under keys ending in ``suffix`` are records that ``valid`` accepts."""
    RECORD_SUFFIXES[suffix] = valid


def valid_entry(key: bytes, value: object) -> bool:
    """Whether ``value``, read under ``key``, is something the kit stored there."""
    if not isinstance(value, bytes) or len(value) > ENTRY_CAP:
        return False
    for suffix, length in FIXED_LENGTH_SUFFIXES.items():
        if key.endswith(suffix):
            return len(value) == length
    for suffix, valid in RECORD_SUFFIXES.items():
        if key.endswith(suffix):
            return valid(value)
    if key.endswith(META_KEY):
        return True
    return choices_from_bytes(value) is not None
