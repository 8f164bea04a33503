"""What the fuzzer writes to the example database, and how each record is laid out.

``run`` reads a check's failures under the check's key; the fuzzer adds sub-keys of its
own beside them, which ``run`` never reads: the corpus (the inputs' choices, so the next
``fuzz`` resumes from them), and, in a database that workers share, each input's record
(its choices and what it found), its energy (how often each worker mutated it) and the
workers' roll call.  Every layout is here, with the function that writes it and the one
that reads it back, so a record written on one machine reads the same on another.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Hashable

from hypothesis.database import choices_from_bytes

from stella_conform.conformance.store.database import register_fixed_length, register_record

#: Database sub-key of the fuzzing corpus (``run`` never reads it).
CORPUS_SUB_KEY = b".stella-fuzz.corpus"
#: Database sub-key of the corpus inputs' energy, one record per input and worker
#: (a shared database only): the input's digest, the worker, what the input found when
#: it was kept, and how often that worker has mutated it.
ENERGY_SUB_KEY = b".stella-fuzz.energy"
_ENERGY = struct.Struct(">12s4sII")
register_fixed_length(ENERGY_SUB_KEY, _ENERGY.size)
#: Database sub-key of the corpus as workers share it (a shared database only): one
#: record per input, its choices and what it found when it was kept (see
#: :func:`_shared_record`), so that another worker can tell whether the input would be
#: new there without running it.
SHARED_SUB_KEY = b".stella-fuzz.shared"
_SHARED_HEAD = struct.Struct(">B8sH")
_SHARED_VERSION = 1
#: The most features a shared record names (an input kept first finds hundreds: the
#: client's start-up code, which every worker's own first case finds too).
SHARED_FEATURES_CAP = 256
#: Features other than the client's code (an input's shapes, the client's answers) are
#: 62-bit digests with this bit set: the same in every process, as the code coverage's
#: features are (Python's own hash of a string is not), so workers can compare them.
_HASHED = 1 << 62
#: Database key of the workers' roll call (a shared database only): one record per live
#: worker, its name, a digest of its team (the client as :attr:`Team.client_digest` says
#: it, and the checks), its seed, and when it last said so (wall clock).
WORKERS_KEY = b".stella-fuzz.workers"
_WORKER = struct.Struct(">4s8sQd")
register_fixed_length(WORKERS_KEY, _WORKER.size)


def _seed_word(seed: int) -> int:
    """A worker's seed as its roll-call record holds it: ``--seed`` takes any integer and
    the record has 64 bits, so the seed is taken modulo 2**64 (packing a larger one as it
    is would be a ``struct.error``); workers are ranked by this word."""
    return seed % (1 << 64)


def _digest(blob: bytes) -> bytes:
    return hashlib.sha256(blob).digest()[:12]


_STABLE: dict[Hashable, int] = {}


def _stable(feature: Hashable) -> int:
    """A feature that is not the client's code (a shape, an answer) as a 62-bit digest
    with :data:`_HASHED` set, the same in every process (memoised, within a bound)."""
    known = _STABLE.get(feature)
    if known is None:
        digest = hashlib.blake2b(repr(feature).encode(), digest_size=8).digest()
        known = _HASHED | (int.from_bytes(digest, "big") & (_HASHED - 1))
        if len(_STABLE) < 65_536:
            _STABLE[feature] = known
    return known


def energy_record(digest: bytes, worker: bytes, novel: int, picked: int) -> bytes:
    """One worker's energy of one input: how often it mutated it, what it found."""
    return _ENERGY.pack(digest, worker, min(novel, 2**32 - 1), picked)


def parse_energy(record: bytes) -> tuple[bytes, bytes, int, int]:
    """An energy record's input digest, worker, what the input found, its picks."""
    digest, worker, novel, picked = _ENERGY.unpack(record)
    return digest, worker, novel, picked


def _shared_record(client: bytes, found: frozenset[int], blob: bytes) -> bytes:
    """An input as workers share it: a version, the digest of the client it was run on
    (``Team.client_digest``), what it found when it was kept (the non-code features
    first, then the code's, at most :data:`SHARED_FEATURES_CAP`), its choices."""
    ordered = sorted(found, reverse=True)[:SHARED_FEATURES_CAP]
    head = _SHARED_HEAD.pack(_SHARED_VERSION, client, len(ordered))
    return head + struct.pack(f">{len(ordered)}Q", *ordered) + blob


def _parse_shared(record: bytes) -> tuple[bytes, frozenset[int], bytes] | None:
    """A shared record's client digest, features and choices; None if it is not one."""
    if len(record) < _SHARED_HEAD.size:
        return None
    version, client, count = _SHARED_HEAD.unpack_from(record)
    end = _SHARED_HEAD.size + 8 * count
    if version != _SHARED_VERSION or count > SHARED_FEATURES_CAP or len(record) < end:
        return None
    blob = record[end:]
    if choices_from_bytes(blob) is None:
        return None
    features = frozenset(struct.unpack_from(f">{count}Q", record, _SHARED_HEAD.size))
    return client, features, blob


register_record(SHARED_SUB_KEY, lambda record: _parse_shared(record) is not None)


def roll_call_record(worker: bytes, team: bytes, seed: int, said: float) -> bytes:
    """A worker's line in the roll call: its name, its team, its seed, when it said so."""
    return _WORKER.pack(worker, team, _seed_word(seed), said)


def parse_roll_call(record: bytes) -> tuple[bytes, bytes, int, float]:
    """A roll-call record's worker, team digest, seed word and time."""
    worker, team, seed, said = _WORKER.unpack(record)
    return worker, team, seed, said
