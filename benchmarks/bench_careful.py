"""The careful decode of a run's generated streams: its instructions, and its answers.

A cold run decodes every stream it generates carefully once (``build_case`` in
``generators/cases.py``: the default reading and the registered points it touches).
``count`` runs one cold run of the reader profile (the Python reference client, the
default 25 examples per check, a new case cache folder) under callgrind, records the
streams it decoded carefully, then decodes them all again carefully and plainly, and
prints the instructions of each part (callgrind counts instructions, which the load of
a shared machine does not move).  ``digest`` runs cold runs for some seeds (no
valgrind) and prints, per seed, a digest of every stream handed to the client, of every
careful decode's answers (the points it touched, its outcomes and summary) and of the
case cache's files (their cases and index, less the key, which digests the code): two
versions of the kit that print the same digests generated the same cases.

    python benchmarks/bench_careful.py count [--seed N]
    python benchmarks/bench_careful.py save --out FILE [--seed N]
    python benchmarks/bench_careful.py count --streams FILE
    python benchmarks/bench_careful.py digest [--seeds 0,1,2]

``save`` writes the streams a cold run decodes carefully, and ``count --streams`` decodes
only those under callgrind (no run: minutes instead of most of an hour on a loaded
machine).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_throughput

from stella_conform.oracle.decoder import decode_all
from stella_conform.oracle.readings import careful_default
from stella_conform.schemas.vocabulary import Vocabulary

#: The module that builds a case (the package's ``cases`` is its strategy function).
generated = importlib.import_module("stella_conform.generators.cases")

#: Callgrind's client requests, from a C file built on demand: in a process not under
#: valgrind they do nothing.
HELPER = r"""
#include <valgrind/callgrind.h>
void part_done(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""


def recorded_run(seed: int, cache: Path) -> tuple[list[bytes], list[tuple[bytes, Any]]]:
    """A cold run: the streams handed to the client, and each careful decode's input."""
    real = generated.careful_default
    inputs: list[tuple[bytes, Any]] = []

    def recording(data: bytes, vocab: Any = None) -> Any:
        inputs.append((data, vocab))
        return real(data, vocab)

    streams: list[bytes] = []
    generated.careful_default = recording  # type: ignore[assignment]
    try:
        bench_throughput.kit_run(
            bench_throughput.CLIENTS["python"], 25, streams, cache=cache, seed=seed
        )
    finally:
        generated.careful_default = real  # type: ignore[assignment]
    return streams, inputs


def answers_digest(inputs: list[tuple[bytes, Any]]) -> str:
    digest = hashlib.sha256()
    for data, vocab in inputs:
        decoded, touched = careful_default(data, vocab)
        doc = [
            hashlib.sha256(data).hexdigest(),
            sorted(touched),
            [o.to_json() for o in decoded.outcomes],
            decoded.summary.to_json(),
        ]
        digest.update(json.dumps(doc, sort_keys=True, default=str).encode() + b"\n")
    return digest.hexdigest()


def cache_digest(folder: Path) -> str:
    """The case cache's files, each as its cases' bytes and its index less the key, laid
    out as the cache's format 2 wrote them (without the HMAC, which depends on the
    machine's cache key): the digest is the same on every machine, and holds the cases and
    index to what the figures in docs/performance.md were measured on."""
    from stella_conform.conformance.store import casecache

    footer = casecache._FOOTER
    files = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        found = re.search(rb'\{"format": ?\d+, ?"key": ?"[0-9a-f]+"', raw)
        if found is None:  # not a cache file (a lock, a stamp)
            continue
        _magic, offset, length, _mac = footer.unpack(raw[-footer.size :])
        plain = raw[: -footer.size].replace(b'{"format":3,', b'{"format":2,', 1)
        plain += struct.pack("<23sQQ", b"stella-conform-cases-1\n", offset, length)
        keyless = re.sub(rb'"key": ?"[0-9a-f]+"', b"", plain)  # a key is as long as any other
        files.append(hashlib.sha256(keyless).hexdigest())
    return hashlib.sha256("\n".join(sorted(files)).encode()).hexdigest()


def digest(seeds: list[int]) -> None:
    for seed in seeds:
        with tempfile.TemporaryDirectory() as folder:
            streams, inputs = recorded_run(seed, Path(folder))
            cached = cache_digest(Path(folder))
        sent = hashlib.sha256(b"".join(hashlib.sha256(s).digest() for s in streams)).hexdigest()
        print(
            f"seed {seed}: {len(streams)} streams to the client {sent[:16]}, "
            f"{len(inputs)} careful decodes {answers_digest(inputs)[:16]}, "
            f"case cache {cached[:16]}"
        )


def save(seed: int, out: Path) -> None:
    """The streams a cold run decodes carefully, each after its length (8 bytes)."""
    with tempfile.TemporaryDirectory() as folder:
        _, inputs = recorded_run(seed, Path(folder))
    if any(vocab is not Vocabulary.default() for _, vocab in inputs):
        raise SystemExit("a stream of another vocabulary: not saved")
    out.write_bytes(b"".join(len(data).to_bytes(8, "big") + data for data, _ in inputs))
    print(f"{len(inputs)} streams to {out}", file=sys.stderr)


def load(path: Path) -> list[tuple[bytes, Any]]:
    raw, inputs, at = path.read_bytes(), [], 0
    while at < len(raw):
        size = int.from_bytes(raw[at : at + 8], "big")
        inputs.append((raw[at + 8 : at + 8 + size], Vocabulary.default()))
        at += 8 + size
    return inputs


def inner(seed: int, helper: str, streams: str | None) -> None:
    """Under callgrind: each part's instructions dumped apart."""
    part_done: Callable[[bytes], None] = ctypes.CDLL(helper).part_done
    Vocabulary.default().compile_all()
    part_done(b"start-up")
    if streams is None:
        with tempfile.TemporaryDirectory() as folder:
            _, inputs = recorded_run(seed, Path(folder))
        part_done(b"cold run")
    else:
        inputs = load(Path(streams))
        for data, vocab in inputs[:20]:  # what the first streams build once (caches)
            careful_default(data, vocab)
        part_done(b"streams read")
    for data, vocab in inputs:
        careful_default(data, vocab)
    part_done(b"careful decode")
    for data, vocab in inputs:
        decode_all(data, vocab)
    part_done(b"plain decode")
    print(f"{len(inputs)} streams, {sum(len(d) for d, _ in inputs) / 1e6:.2f} MB", file=sys.stderr)


def count(seed: int, streams: str | None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        (out / "helper.c").write_text(HELPER)
        helper = out / "helper.so"
        subprocess.run(
            ["cc", "-shared", "-fPIC", "-O1", "-o", helper, out / "helper.c"], check=True
        )
        command = [sys.executable, __file__, "_inner", "--seed", str(seed), "--helper", str(helper)]
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}/cg.out",
                *command,
                *(["--streams", streams] if streams else []),
            ],
            check=True,
            stderr=None if os.environ.get("VERBOSE") else subprocess.DEVNULL,
        )
        for dump in sorted(
            out.glob("cg.out*"), key=lambda p: int("0" + p.name[len("cg.out") :].lstrip("."))
        ):
            text = dump.read_text(errors="replace")
            trigger = re.search(r"^desc: Trigger: (.*)$", text, re.M)
            totals = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
            name = trigger.group(1) if trigger else dump.name
            print(f"{name}: {int(totals.group(1)) / 1e6:,.0f} M instructions" if totals else name)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("count", "digest", "save", "_inner"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--streams", help="count: decode the streams `save` wrote, no run")
    parser.add_argument("--out", type=Path, help="save: the file to write")
    parser.add_argument("--helper")
    args = parser.parse_args()
    if args.what == "digest":
        digest([int(s) for s in args.seeds.split(",")])
    elif args.what == "count":
        count(args.seed, args.streams)
    elif args.what == "save":
        save(args.seed, args.out)
    else:
        inner(args.seed, args.helper, args.streams)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
