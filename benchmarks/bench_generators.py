"""Events per second: the kit's strategies against raw hypothesis-jsonschema ``from_schema``.

Both are drawn the same way (under ``@given``, generate phase only, no database) for the
same event types: the default vocabulary's twelve, with their member schemas from the
real stella wire schema when it is at hand, else from the kit's own ``events.schema.json``.
Every drawn event is validated with ``jsonschema`` so speed never comes at the price of
validity. ``from_schema`` needs Hypothesis <= 6.170.9 (later releases fail its every
draw); ``benchmarks/run`` makes such an environment.

    python benchmarks/bench_generators.py [--examples N] [--wire-schema PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import jsonschema
from _harness import draw_for, machine, table
from hypothesis import strategies as st

from stella_conform.generators import cases, known_events, runs
from stella_conform.schemas.vocabulary import Vocabulary

BATCH = 50
DEFAULT_WIRE = (
    Path(__file__).resolve().parents[2] / "shared" / "upstream" / "agentevent.schema.json"
)


def validity(vocab: Vocabulary, events: list[dict[str, Any]]) -> float:
    validators: dict[str, Any] = {}
    ok = 0
    for event in events:
        tag = event.get("type")
        if tag not in vocab.known:
            continue
        if tag not in validators:
            validators[tag] = jsonschema.Draft202012Validator(vocab.schema_for(tag))
        ok += not any(True for _ in validators[tag].iter_errors(event))
    return ok / len(events) if events else 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--wire-schema", type=Path, default=DEFAULT_WIRE)
    args = parser.parse_args()

    default = Vocabulary.default()
    tags = sorted(default.known)
    if args.wire_schema.is_file():
        schema_vocab = Vocabulary.from_wire_schema(args.wire_schema)
        schema_source = f"stella wire schema ({args.wire_schema.name})"
    else:
        schema_vocab = default
        schema_source = "stella-conform events.schema.json"
    union = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "oneOf": [
            {k: v for k, v in schema_vocab.members[t].items() if k != "description"} for t in tags
        ],
        "$defs": dict(schema_vocab.root.get("$defs", {})),
    }

    rows = []
    draw_for(known_events(schema_vocab), 20)  # warm-up: Hypothesis's one-time set-up
    batch = st.lists  # both sides drawn in batches of BATCH events per example, same harness
    kit = {
        "single": known_events(schema_vocab),
        "batched": batch(known_events(schema_vocab), min_size=BATCH, max_size=BATCH),
    }
    kit_rate: dict[str, float] = {}
    for mode, strategy in kit.items():
        drawn, secs = draw_for(strategy, args.examples)
        flat = drawn if mode == "single" else [e for b in drawn for e in b]
        kit_rate[mode] = len(flat) / secs
        rows.append(
            (
                f"kit known_events(), {mode}",
                f"{kit_rate[mode]:,.0f}",
                f"{validity(schema_vocab, flat):.1%}",
            )
        )
    drawn_runs, secs = draw_for(runs(schema_vocab), args.examples)
    run_events = [e for r in drawn_runs for e in r.events]
    rows.append(
        (
            "kit runs() (events inside runs)",
            f"{len(run_events) / secs:,.0f}",
            f"{validity(schema_vocab, run_events):.1%}",
        )
    )

    drawn_cases, secs = draw_for(cases(schema_vocab, max_mutations=2), args.examples)
    mutated = sum(1 for c in drawn_cases if c.mutations)
    rows.append(
        (
            f"kit cases() ({mutated} of {len(drawn_cases)} mutated), cases/s",
            f"{len(drawn_cases) / secs:,.0f}",
            "n/a (mutated on purpose)",
        )
    )

    base_rate: dict[str, float] = {}
    try:
        from hypothesis_jsonschema import from_schema

        raw = from_schema(union)
        for mode, strategy in {
            "single": raw,
            "batched": batch(raw, min_size=BATCH, max_size=BATCH),
        }.items():
            examples = args.examples if mode == "single" else max(4, args.examples // BATCH)
            drawn, secs = draw_for(strategy, examples)
            flat = drawn if mode == "single" else [e for b in drawn for e in b]
            base_rate[mode] = len(flat) / secs
            rows.append(
                (
                    f"raw from_schema (same types), {mode}",
                    f"{base_rate[mode]:,.0f}",
                    f"{validity(schema_vocab, flat):.1%}",
                )
            )
    except Exception as exc:
        print(
            f"baseline unavailable: hypothesis-jsonschema failed: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
    print(f"machine: {machine()}")
    print(f"types: the default vocabulary's {len(tags)}; schemas from {schema_source}")
    print(f"examples per measurement: {args.examples} (batched: {BATCH} events per example)\n")
    print(table(rows, ("generator", "events/s", "schema-valid")))
    for mode in base_rate:
        print(f"ratio kit / from_schema, {mode}: {kit_rate[mode] / base_rate[mode]:,.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
